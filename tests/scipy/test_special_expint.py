"""``scipy.special.exp1`` and ``expi`` against JAX (float32 and float64, every branch and the
edges), their derivatives, dtypes and vmap/jit."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.scipy.special as ps
from helpers import assert_close

# both sides of each switch (E1: 1; Ei: 0 and 40) and the edges; not 710, where JAX flushes
# E1's subnormal value to zero
X = np.array([-50.0, -2.0, -1e-3, 0.0, 1e-3, 0.5, 0.99, 1.0, 1.01, 2.0, 10.0, 39.0, 40.5,
              41.0, 100.0, 700.0])


def test_exponential_integrals_match_jax(jax):
    special = jax.scipy.special
    theirs = jax.jit(lambda x, y: [special.exp1(x), special.expi(x), special.exp1(y),
                                   special.expi(y), jax.vmap(jax.grad(special.exp1))(x[4:]),
                                   jax.vmap(jax.grad(special.expi))(x[4:12])])(
        X, X.astype(np.float32))
    with np.errstate(over="ignore"):
        ours = [ps.exp1(X), ps.expi(X), ps.exp1(X.astype(np.float32)),
                ps.expi(X.astype(np.float32)), pto.jit(pto.vmap(pto.grad(ps.exp1)))(X[4:]),
                pto.vmap(pto.grad(ps.expi))(X[4:12])]
    for a, b, rtol in zip(ours, theirs, (5e-14, 5e-14, 3e-7, 3e-7, 5e-14, 5e-14)):
        assert_close(a, b, rtol=rtol, atol=0)
    assert ps.exp1(1).dtype == np.float32
    with pytest.raises(ValueError, match="complex"):
        ps.expi(np.complex64(1.0))


N = np.array([0, 1, 2, 5, -1, 2, 10, 1, 2, 7, 30, 100, 6000, 3, 4, 1])
XN = np.array([0.5, 0.5, 1.5, 3.0, 1.0, -1.0, 0.2, 1.0, 1.0, 0.99, 1.01, 50.0, 2.0, 1e-5, 700.0,
               0.0])


def test_expn_matches_jax(jax):
    special = jax.scipy.special
    theirs = jax.jit(lambda n, x: (special.expn(n, x), special.expn(n, x.astype(np.float32)),
                                   jax.vmap(jax.grad(special.expn, argnums=1))(n[:4], x[:4])))(
        N, XN)
    assert_close(ps.expn(N, XN), theirs[0], rtol=1e-13, atol=0)
    assert_close(ps.expn(N, XN.astype(np.float32)), theirs[1], rtol=3e-6, atol=0)
    grads = pto.vmap(pto.grad(ps.expn, argnums=1))(N[:4], XN[:4])
    assert_close(grads, theirs[2], rtol=1e-13)
    # E_n(0) = 1 / (n - 1) for n >= 2 (JAX gives 1 / n)
    assert_close(ps.expn(np.array([2, 3, 5]), np.zeros(3)), 1 / np.array([1.0, 2.0, 4.0]))
