"""``pto.scipy.fft`` against ``jax.scipy.fft``: dct/idct over JAX's test grid of lengths ``n``
(crop and pad), axes and norms, dctn/idctn with ``s`` and ``axes`` (JAX's shapes), integer,
bool and complex inputs; grad, jit and vmap; JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy import fft
from helpers import assert_close

RNG = np.random.RandomState(0)


def _input(shape, dtype):
    if dtype == np.bool_:
        return RNG.rand(*shape) > 0.5
    if np.issubdtype(dtype, np.integer):
        return RNG.randint(-5, 6, shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (RNG.randn(*shape) + 1j * RNG.randn(*shape)).astype(dtype)
    return RNG.randn(*shape).astype(dtype)


def _compare(jax, cases):
    """Each ``(name, x, kwargs)`` of ``cases`` against JAX's (one compiled program)."""
    import jax.scipy.fft as jfft
    inputs = [x for _, x, _ in cases]
    with jax.enable_x64(False):
        wants = jax.jit(lambda xs: [getattr(jfft, name)(x, **kwargs)
                                    for (name, _, kwargs), x in zip(cases, xs)])(inputs)
    for (name, x, kwargs), want in zip(cases, wants):
        got = getattr(fft, name)(x, **kwargs)
        assert got.shape == want.shape and got.dtype == want.dtype, (name, kwargs)
        assert_close(got, np.asarray(want), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["dct", "idct"])
def test_dct_idct_lengths_axes_norms(jax, name):
    _compare(jax, [(name, _input(shape, np.float32), {"n": n, "axis": axis, "norm": norm})
                   for shape, axis in (((10,), -1), ((2, 5), -1), ((2, 5), 0))
                   for n in (None, 1, 7, 13) for norm in (None, "ortho")]
             + [(name, _input((4,), np.float32), {"norm": "backward"})])


def test_integer_bool_complex_inputs(jax):
    _compare(jax, [(name, _input((3, 4), dtype), {"norm": "ortho"})
                   for name in ("dct", "idct", "dctn", "idctn")
                   for dtype in (np.int32, np.bool_, np.complex64)])


@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_dctn_idctn_shapes_and_axes(jax, name):
    _compare(jax, [(name, _input(shape, np.float32), {"s": s, "axes": axes, "norm": norm})
                   for shape, s, axes in [
                       ((10, 10), None, None), ((9,), [4], None), ((2, 3, 4), [3], None),
                       ((2, 3, 4), [1, 5], (0, 2)), ((2, 3, 4), None, (-1,)),
                       ((2, 3, 4), None, []), ((2, 3, 4, 5), [2, 4, 6], (1, 2, 3)),
                       ((2, 3, 4), 2, 1)]
                   for norm in (None, "ortho") if norm or len(shape) > 2])


def test_grad_jit_vmap(jax):
    import jax.scipy.fft as jfft
    x = _input((3, 6), np.float32)
    weights = _input((3, 6), np.float32)
    with jax.enable_x64(False):
        want_grads = [jax.jit(jax.grad(lambda a, f=f: (f(a, norm="ortho") * weights).sum()))(x)
                      for f in (jfft.dct, jfft.idctn)]
        want_vmap = jax.jit(jax.vmap(lambda a: jfft.idct(a, n=4)))(x)
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
