"""pnp.linalg.eig/eigvals and pnp.roots against jax.numpy: complex eigenvalues (and unit
eigenvectors, equal up to a phase), jit, vmap, the eigenvalue gradient, JAX's refusal to
differentiate eigenvectors; roots with and without leading zeros."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from pnp_reference import check, check_grad, check_vmap


def _aligned(v, reference):
    """``v``'s columns rotated by the phase that best matches ``reference``'s."""
    phase = np.sum(np.conj(v) * reference, axis=-2, keepdims=True)
    return v * phase / np.abs(phase)


def test_eig_and_eigvals_match_jax(jnp):
    a = np.random.default_rng(0).standard_normal((2, 4, 4)).astype(np.float32)
    for mode, fn in [("eager", pnp.linalg.eig), ("jit", pto.jit(pnp.linalg.eig))]:
        w, v = fn(a)
        want_w, want_v = jnp.linalg.eig(a)
        check(w, want_w, (a,), scale=10, what=f"{mode} eigenvalues")
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, rtol=1e-5)
        np.testing.assert_allclose(_aligned(np.asarray(v), np.asarray(want_v)), want_v,
                                   atol=1e-4)
    check(pnp.linalg.eigvals(a.astype(np.float64)), jnp.linalg.eigvals(a.astype(np.float64)),
          (a.astype(np.float64),))
    check(pnp.linalg.eigvals(a[0].astype(np.complex64)),
          jnp.linalg.eigvals(a[0].astype(np.complex64)), (a.astype(np.complex64),), scale=10)
    check_vmap(pnp.linalg.eigvals, jnp.linalg.eigvals, a, scale=10)
    loss = lambda m: lambda x: m.linalg.eigvals(x).real * 2 + m.linalg.eigvals(x).imag ** 2
    check_grad(loss(pnp), loss(jnp), a[0], scale=100)
    with pytest.raises(NotImplementedError, match="eigenvectors"):
        pto.grad(lambda x: pnp.linalg.eig(x).eigenvalues.real.sum())(a[0])
    with pytest.raises(ValueError):
        pnp.linalg.eig(a[0, :3])


@pytest.mark.parametrize("coefficients", [[1.0, -3.0, 2.0], [0, 0, 1, 2, 5], [0, 0],
                                          [3.0], [0, 2, 0, -8]], ids=str)
def test_roots_match_jax(jnp, coefficients):
    p = np.array(coefficients, np.float32)
    order = lambda r: np.sort_complex(np.round(np.asarray(r), 4))
    check(order(pnp.roots(p)), order(jnp.roots(p)), (p,), scale=10)
    traced = pto.jit(lambda q: pnp.roots(q, strip_zeros=False))(p)
    check(order(traced), order(jnp.roots(p, strip_zeros=False)), (p,), scale=10)


def test_roots_gradient_and_jit_error_match_jax(jnp):
    p = np.array([1.0, -3.0, 2.0], np.float32)
    check_grad(lambda q: pnp.roots(q, strip_zeros=False).real,
               lambda q: jnp.roots(q, strip_zeros=False).real, p, scale=100)
    with pytest.raises(TypeError, match="strip_zeros=False"):
        pto.jit(pnp.roots)(p)
