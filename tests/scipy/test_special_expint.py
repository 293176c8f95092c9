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
