"""``scipy.linalg.polar`` against ``jax.scipy.linalg.polar``: both methods and sides, tall,
square, wide, stacked and complex matrices, float32 and float64 (``u`` and ``p`` are unique for
full-rank input, so the values compare); the SVD method's gradient, QDWH's forward derivative,
jit and vmap; JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.scipy import linalg
from helpers import assert_close

RNG = np.random.RandomState(0)
CASES = [((4, 3), "right", "qdwh"), ((3, 3), "right", "qdwh"), ((3, 5), "left", "qdwh"),
         ((2, 4, 3), "right", "qdwh"), ((4, 3), "right", "svd"), ((3, 5), "left", "svd"),
         ((3, 5), "right", "svd"), ((2, 3, 3), "left", "svd")]


@pytest.mark.parametrize("shape,side,method", CASES)
def test_polar_matches_jax(jax, shape, side, method):
    a = RNG.randn(*shape).astype(np.float32)
    with jax.enable_x64(False):
        want = jax.scipy.linalg.polar(a, side, method=method)
    got = linalg.polar(a, side, method=method)
    assert_close(got, tuple(np.asarray(w) for w in want), rtol=2e-5, atol=2e-5)


def test_polar_float64_reconstructs(jax):
    a = RNG.randn(5, 5) + 5 * np.eye(5)
    with pto.enable_x64(True):
        u, p = linalg.polar(a)
        want = jax.scipy.linalg.polar(a)
        assert u.dtype == np.float64
        assert_close((u, p), tuple(np.asarray(w) for w in want), rtol=1e-12, atol=1e-12)
        assert_close(np.asarray(u) @ np.asarray(p), a, rtol=1e-12, atol=1e-12)


def test_polar_derivatives_jit_vmap(jax):
    a = RNG.randn(4, 3).astype(np.float32)
    stack = RNG.randn(2, 4, 3).astype(np.float32)
    with jax.enable_x64(False):
        want_grad = jax.grad(lambda a: jax.scipy.linalg.polar(a, method="svd")[1].sum())(a)
        want_jvp = jax.jvp(lambda a: jax.scipy.linalg.polar(a)[0], (a,), (a[::-1],))[1]
        want_vmap = jax.vmap(jax.scipy.linalg.polar)(stack)
    assert_close(pto.grad(lambda a: linalg.polar(a, method="svd")[1].sum())(a),
                 np.asarray(want_grad), rtol=1e-4, atol=1e-5)
    assert_close(pto.jvp(lambda a: linalg.polar(a)[0], (a,), (a[::-1],))[1],
                 np.asarray(want_jvp), rtol=1e-4, atol=1e-5)
    assert_close(pto.jit(linalg.polar)(a), linalg.polar(a), rtol=1e-6, atol=1e-6)
    assert_close(pto.vmap(linalg.polar)(stack), tuple(np.asarray(w) for w in want_vmap),
                 rtol=2e-5, atol=2e-5)
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


@pytest.mark.parametrize("shape,side,method", [((4, 3), "right", "qdwh"),
                                               ((3, 5), "left", "svd")])
def test_polar_complex_matches_jax(jax, shape, side, method):
    a = (RNG.randn(*shape) + 1j * RNG.randn(*shape)).astype(np.complex64)
    with jax.enable_x64(False):
        want = jax.scipy.linalg.polar(a, side, method=method)
    got = linalg.polar(a, side, method=method)
    assert got[0].dtype == got[1].dtype == np.complex64
    assert_close(got, tuple(np.asarray(w) for w in want), rtol=2e-5, atol=2e-5)
