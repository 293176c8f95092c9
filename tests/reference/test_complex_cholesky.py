"""Complex Cholesky against JAX: ``pnp.linalg.cholesky`` (lower and upper) and
``lax.linalg.cholesky`` of Hermitian positive-definite complex64/complex128 matrices, their
JVP, the gradient of a real loss, and vmap/jit."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.RandomState(0)


def _hermitian(dtype, n=4, stack=()):
    m = (RNG.randn(*stack, n, n) + 1j * RNG.randn(*stack, n, n)).astype(dtype)
    return m, m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n, dtype=dtype)


def _tol(dtype):
    return 2e-5 if dtype == np.complex64 else 1e-12


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_factors_match_jax(jax, jnp, dtype):
    _, a = _hermitian(dtype, stack=(2,))
    *wants, want_lax = jax.jit(lambda a: (   # one JAX program (eagerly, one compile each)
        jnp.linalg.cholesky(a), jnp.linalg.cholesky(a, upper=True),
        jax.lax.linalg.cholesky(a)))(a)
    for upper, want in zip((False, True), wants):
        got = pnp.linalg.cholesky(a, upper=upper)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=_tol(dtype), atol=_tol(dtype))
    np.testing.assert_allclose(pto.lax.linalg.cholesky(a), want_lax,
                               rtol=_tol(dtype), atol=_tol(dtype))
    lower = np.asarray(pnp.linalg.cholesky(a))
    np.testing.assert_allclose(lower @ np.conj(np.swapaxes(lower, -1, -2)), a,
                               rtol=_tol(dtype), atol=_tol(dtype) * 10)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_derivatives_match_jax(jax, jnp, dtype):
    m, _ = _hermitian(dtype)
    t, _ = _hermitian(dtype)

    def factor(lib):
        return lambda x: lib.linalg.cholesky(x @ lib.conj(x.T) + 4 * lib.eye(4, dtype=dtype))

    def loss(lib):
        return lambda x: lib.sum(lib.abs(factor(lib)(x)) ** 2 + lib.real(factor(lib)(x)))

    tol = _tol(dtype) * 20
    # JAX's JVP and gradient as one jitted program (eagerly, each operation compiled apart)
    want_jvp, want_grad = jax.jit(lambda m, t: (jax.jvp(factor(jnp), (m,), (t,))[1],
                                                jax.grad(loss(jnp))(m)))(m, t)
    np.testing.assert_allclose(pto.jvp(factor(pnp), (m,), (t,))[1], want_jvp, rtol=tol,
                               atol=tol)
    np.testing.assert_allclose(pto.grad(loss(pnp))(m), want_grad, rtol=tol, atol=tol)


def test_vmap_and_jit(jnp):
    _, a = _hermitian(np.complex64, stack=(3,))
    got = pto.jit(pto.vmap(pnp.linalg.cholesky))(a)
    np.testing.assert_allclose(got, jnp.linalg.cholesky(a), rtol=2e-5, atol=2e-5)
