"""``scipy.linalg.qr_multiply`` against ``jax.scipy.linalg.qr_multiply``: both modes, tall,
square and wide ``a``, vectors and stacks of ``c`` broadcast against ``a``, ``conjugate`` and
``pivoting``, complex matrices (LAPACK's reflectors); its gradient (which JAX lacks: checked
against the explicit ``c @ Q``), jit and vmap; JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.scipy import linalg
from helpers import assert_close

RNG = np.random.RandomState(0)
CASES = [((4, 3), (2, 4), {}), ((4, 3), (3, 2), {"mode": "left"}),
         ((3, 5), (3,), {}), ((3, 5), (3,), {"mode": "left"}),
         ((3, 3), (2, 3), {"pivoting": True}),
         ((5, 3), (3, 4), {"mode": "left", "pivoting": True}),
         ((4, 3), (2, 4), {"conjugate": True}), ((2, 4, 3), (2, 4), {}),
         ((4, 3), (2, 3, 2), {"mode": "left"})]


@pytest.mark.parametrize("a_shape,c_shape,kwargs", CASES)
def test_qr_multiply_matches_jax(jax, a_shape, c_shape, kwargs):
    a = RNG.randn(*a_shape).astype(np.float32)
    c = RNG.randn(*c_shape).astype(np.float32)
    with jax.enable_x64(False):
        want = jax.scipy.linalg.qr_multiply(a, c, **kwargs)
    got = linalg.qr_multiply(a, c, **kwargs)
    assert_close(got, tuple(np.asarray(w) for w in want), rtol=2e-5, atol=2e-5)


def test_qr_multiply_grad_jit_vmap(jax):
    a, c = RNG.randn(4, 3).astype(np.float32), RNG.randn(2, 4).astype(np.float32)
    stack = RNG.randn(3, 4, 3).astype(np.float32)

    def loss(a, c):
        return (linalg.qr_multiply(a, c)[0] ** 3).sum()

    def reference(a, c):   # (JAX's qr_multiply has no derivative: its explicit-Q equivalent)
        return ((c @ jax.numpy.linalg.qr(a)[0]) ** 3).sum()
    with jax.enable_x64(False):
        want = jax.grad(reference, argnums=(0, 1))(a, c)
        want_vmap = jax.vmap(jax.scipy.linalg.qr_multiply, (0, None))(stack, c)
    got = pto.grad(loss, argnums=(0, 1))(a, c)
    assert_close(got, tuple(np.asarray(w) for w in want), rtol=1e-4, atol=1e-4)
    assert_close(pto.jit(linalg.qr_multiply)(a, c), linalg.qr_multiply(a, c))
    assert_close(pto.vmap(linalg.qr_multiply, (0, None))(stack, c),
                 tuple(np.asarray(w) for w in want_vmap), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("a_shape,c_shape,kwargs,match", [
    ((4, 3), (2, 3), {}, "c @ Q operation"), ((4, 3), (4, 2), {"mode": "left"}, "Q @ c"),
    ((4, 3), (2, 4), {"mode": "up"}, "mode must be"),
])
def test_qr_multiply_errors_as_jax(jax, a_shape, c_shape, kwargs, match):
    a, c = np.ones(a_shape, np.float32), np.ones(c_shape, np.float32)
    with jax.enable_x64(False), pytest.raises(ValueError, match=match):
        jax.scipy.linalg.qr_multiply(a, c, **kwargs)
    with pytest.raises(ValueError, match=match):
        linalg.qr_multiply(a, c, **kwargs)
    with pytest.raises(NotImplementedError, match="pivoting on complex"):
        linalg.qr_multiply(np.eye(2, dtype=np.complex64), np.ones(2, np.complex64),
                           pivoting=True)


@pytest.mark.parametrize("a_shape,c_shape,kwargs", [
    ((4, 3), (2, 4), {}), ((3, 5), (3,), {"mode": "left"}),
    ((2, 3, 3), (3, 3), {"mode": "left", "conjugate": True})])
def test_qr_multiply_complex_matches_jax(jax, a_shape, c_shape, kwargs):
    a = (RNG.randn(*a_shape) + 1j * RNG.randn(*a_shape)).astype(np.complex64)
    c = (RNG.randn(*c_shape) + 1j * RNG.randn(*c_shape)).astype(np.complex64)
    with jax.enable_x64(False):
        want = jax.scipy.linalg.qr_multiply(a, c, **kwargs)
    got = linalg.qr_multiply(a, c, **kwargs)
    assert got[0].dtype == np.complex64
    assert_close(got, tuple(np.asarray(w) for w in want), rtol=2e-5, atol=2e-5)
