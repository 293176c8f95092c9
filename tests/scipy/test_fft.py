"""``pto.scipy.fft`` against ``jax.scipy.fft``: dct/idct over JAX's test grid of lengths ``n``
(crop and pad), axes and norms, dctn/idctn with ``s`` and ``axes`` (JAX's shapes), integer,
bool and complex inputs; grad, jit and vmap; JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy import fft
from helpers import assert_close
from jax_golden import expected

RNG = np.random.RandomState(0)


def _input(shape, dtype, rng=RNG):
    if dtype == np.bool_:
        return rng.rand(*shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.randint(-5, 6, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(dtype)
    return rng.randn(*shape).astype(dtype)


# the tables (name, x, kwargs), each from its own fixed stream: JAX's results for them are
# stored by jax_golden.py (compiling them took ~14 s on a busy machine)
def _dct_idct(name, rng):
    return ([(name, _input(shape, np.float32, rng), {"n": n, "axis": axis, "norm": norm})
             for shape, axis in (((10,), -1), ((2, 5), -1), ((2, 5), 0))
             for n in (None, 1, 7, 13) for norm in (None, "ortho")]
            + [(name, _input((4,), np.float32, rng), {"norm": "backward"})])


def _integer_bool_complex(rng):
    return [(name, _input((3, 4), dtype, rng), {"norm": "ortho"})
            for name in ("dct", "idct", "dctn", "idctn")
            for dtype in (np.int32, np.bool_, np.complex64)]


def _dctn_idctn(name, rng):
    return [(name, _input(shape, np.float32, rng), {"s": s, "axes": axes, "norm": norm})
            for shape, s, axes in [
                ((10, 10), None, None), ((9,), [4], None), ((2, 3, 4), [3], None),
                ((2, 3, 4), [1, 5], (0, 2)), ((2, 3, 4), None, (-1,)),
                ((2, 3, 4), None, []), ((2, 3, 4, 5), [2, 4, 6], (1, 2, 3)),
                ((2, 3, 4), 2, 1)]
            for norm in (None, "ortho") if norm or len(shape) > 2]


def _tables():
    return {"dct": _dct_idct("dct", np.random.RandomState(1)),
            "idct": _dct_idct("idct", np.random.RandomState(2)),
            "integer-bool-complex": _integer_bool_complex(np.random.RandomState(3)),
            "dctn": _dctn_idctn("dctn", np.random.RandomState(4)),
            "idctn": _dctn_idctn("idctn", np.random.RandomState(5))}


def _grad_inputs():
    rng = np.random.RandomState(6)
    return [_input((3, 6), np.float32, rng), _input((3, 6), np.float32, rng)]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py (JAX in 32-bit mode, as
    the tests compare)."""
    import jax.scipy.fft as jfft
    for key, cases in _tables().items():
        def run(*xs, cases=cases):
            with jax.enable_x64(False):
                return jax.jit(lambda xs: [getattr(jfft, name)(x, **kwargs)
                                           for (name, _, kwargs), x in zip(cases, xs)])(xs)
        yield f"fft/{key}", [x for _, x, _ in cases], run

    def grads(x, weights):
        with jax.enable_x64(False):
            return [*(jax.jit(jax.grad(lambda a, f=f: (f(a, norm="ortho") * weights).sum()))(x)
                      for f in (jfft.dct, jfft.idctn)),
                    jax.jit(jax.vmap(lambda a: jfft.idct(a, n=4)))(x)]
    yield "fft/grad-vmap", _grad_inputs(), grads


def _compare(key):
    """Each ``(name, x, kwargs)`` of table ``key`` against JAX's stored results."""
    cases = _tables()[key]
    wants = expected(f"fft/{key}", [x for _, x, _ in cases])
    for (name, x, kwargs), want in zip(cases, wants, strict=True):
        got = getattr(fft, name)(x, **kwargs)
        assert got.shape == want.shape and got.dtype == want.dtype, (name, kwargs)
        assert_close(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["dct", "idct"])
def test_dct_idct_lengths_axes_norms(name):
    _compare(name)


def test_integer_bool_complex_inputs():
    _compare("integer-bool-complex")


@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_dctn_idctn_shapes_and_axes(name):
    _compare(name)


def test_grad_jit_vmap():
    x, weights = _grad_inputs()
    *want_grads, want_vmap = expected("fft/grad-vmap", [x, weights])
    for f, want in zip((fft.dct, fft.idctn), want_grads):
        assert_close(pto.grad(lambda a, f=f: (f(a, norm="ortho") * weights).sum())(x),
                     np.asarray(want), rtol=1e-4, atol=1e-5)
    assert_close(pto.vmap(lambda a: fft.idct(a, n=4))(x), np.asarray(want_vmap),
                 rtol=1e-4, atol=1e-5)
    assert_close(pto.jit(fft.dctn, static_argnames="axes")(x, axes=(0,)),
                 fft.dctn(x, axes=(0,)), rtol=1e-5, atol=1e-5)


def test_inverse_round_trip():
    x = _input((4, 5), np.float32)
    assert_close(fft.idctn(fft.dctn(x)), x, rtol=1e-4, atol=1e-5)
    assert_close(fft.idct(fft.dct(x, norm="ortho"), norm="ortho"), x, rtol=1e-4, atol=1e-5)


def test_errors_as_jax():
    for name in ("dct", "idct", "dctn", "idctn"):
        with pytest.raises(NotImplementedError, match="Only DCT type 2"):
            getattr(fft, name)(pnp.ones(4), type=1)
        with pytest.raises(ValueError, match="norm='forward' is not implemented"):
            getattr(fft, name)(pnp.ones(4), norm="forward")
    with pytest.raises(ValueError, match="s must have at most x.ndim"):
        fft.dctn(pnp.ones(4), s=[2, 2])
    with pytest.raises(TypeError):
        fft.dct([1.0, 2.0])
