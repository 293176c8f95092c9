"""``scipy.linalg.polar`` against ``jax.scipy.linalg.polar``: both methods and sides, tall,
square, wide, stacked and complex matrices, float32 and float64 (``u`` and ``p`` are unique for
full-rank input, so the values compare); the SVD method's gradient, QDWH's forward derivative,
jit and vmap; JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.scipy import linalg
from helpers import assert_close
from jax_golden import expected

CASES = [((4, 3), "right", "qdwh"), ((3, 3), "right", "qdwh"), ((3, 5), "left", "qdwh"),
         ((2, 4, 3), "right", "qdwh"), ((4, 3), "right", "svd"), ((3, 5), "left", "svd"),
         ((3, 5), "right", "svd"), ((2, 3, 3), "left", "svd")]


COMPLEX_CASES = [((4, 3), "right", "qdwh"), ((3, 5), "left", "svd")]


# each input from its own fixed stream: JAX's results are stored by jax_golden.py (eagerly,
# JAX compiled each polar decomposition, its derivatives and vmap: ~20 s on a busy machine)
def _real(shape, seed):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def _complex(shape, seed):
    rng = np.random.RandomState(seed)
    return (rng.randn(*shape) + 1j * rng.randn(*shape)).astype(np.complex64)


FLOAT64 = np.random.RandomState(20).randn(5, 5) + 5 * np.eye(5)
DERIVATIVES = [_real((4, 3), 21), _real((2, 4, 3), 22)]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py."""
    polar = jax.scipy.linalg.polar

    def in_32_bits(fn):
        def run(*args):
            with jax.enable_x64(False):
                return jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        return run
    for i, (shape, side, method) in enumerate(CASES):
        yield (f"polar/{i}", [_real(shape, i)],
               in_32_bits(lambda a, side=side, method=method: polar(a, side, method=method)))
    for i, (shape, side, method) in enumerate(COMPLEX_CASES):
        yield (f"polar/complex/{i}", [_complex(shape, 10 + i)],
               in_32_bits(lambda a, side=side, method=method: polar(a, side, method=method)))
    yield "polar/float64", [FLOAT64], lambda a: list(jax.jit(polar)(a))
    yield "polar/derivatives", DERIVATIVES, in_32_bits(lambda a, stack: (
        jax.grad(lambda a: polar(a, method="svd")[1].sum())(a),
        jax.jvp(lambda a: polar(a)[0], (a,), (a[::-1],))[1], jax.vmap(polar)(stack)))


@pytest.mark.parametrize("index", range(len(CASES)), ids=[str(c) for c in CASES])
def test_polar_matches_jax(index):
    """Against JAX's values stored by jax_golden.py."""
    shape, side, method = CASES[index]
    a = _real(shape, index)
    got = linalg.polar(a, side, method=method)
    assert_close(got, tuple(expected(f"polar/{index}", [a])), rtol=2e-5, atol=2e-5)


def test_polar_float64_reconstructs():
    a = FLOAT64
    with pto.enable_x64(True):
        u, p = linalg.polar(a)
        want = expected("polar/float64", [a])
        assert u.dtype == np.float64
        assert_close((u, p), tuple(want), rtol=1e-12, atol=1e-12)
        assert_close(np.asarray(u) @ np.asarray(p), a, rtol=1e-12, atol=1e-12)


def test_polar_derivatives_jit_vmap():
    a, stack = DERIVATIVES
    want_grad, want_jvp, *want_vmap = expected("polar/derivatives", DERIVATIVES)
    assert_close(pto.grad(lambda a: linalg.polar(a, method="svd")[1].sum())(a),
                 want_grad, rtol=1e-4, atol=1e-5)
    assert_close(pto.jvp(lambda a: linalg.polar(a)[0], (a,), (a[::-1],))[1],
                 want_jvp, rtol=1e-4, atol=1e-5)
    assert_close(pto.jit(linalg.polar)(a), linalg.polar(a), rtol=1e-6, atol=1e-6)
    assert_close(pto.vmap(linalg.polar)(stack), tuple(want_vmap), rtol=2e-5, atol=2e-5)
    with pytest.raises(NotImplementedError, match="while_loop"):   # (JAX: a ValueError)
        pto.grad(lambda a: linalg.polar(a)[0].sum())(a)


@pytest.mark.parametrize("args,kwargs,error,match", [
    ((np.ones(3, np.float32),), {}, ValueError, "at least a 2-D"),
    ((np.ones((2, 2), np.float32), "up"), {}, ValueError, "either 'right' or 'left'"),
    ((np.ones((2, 2), np.float32),), {"method": "x"}, ValueError, "Unknown polar"),
    ((np.ones((4, 3), np.float32), "left"), {}, NotImplementedError, "only supports"),
    ((np.ones((3, 4), np.float32), "right"), {}, NotImplementedError, "only supports"),
    ((np.ones((2, 2), np.int32),), {}, ValueError, "not inexact"),
    ((np.ones((2, 2), np.int32),), {"method": "svd"}, TypeError, "svd does not accept"),
])
def test_polar_errors_as_jax(jax, args, kwargs, error, match):
    with jax.enable_x64(False), pytest.raises(error, match=match):
        jax.scipy.linalg.polar(*args, **kwargs)
    with pytest.raises(error, match=match):
        linalg.polar(*args, **kwargs)


@pytest.mark.parametrize("index", range(len(COMPLEX_CASES)),
                         ids=[str(c) for c in COMPLEX_CASES])
def test_polar_complex_matches_jax(index):
    """Against JAX's values stored by jax_golden.py."""
    shape, side, method = COMPLEX_CASES[index]
    a = _complex(shape, 10 + index)
    got = linalg.polar(a, side, method=method)
    assert got[0].dtype == got[1].dtype == np.complex64
    assert_close(got, tuple(expected(f"polar/complex/{index}", [a])), rtol=2e-5, atol=2e-5)
