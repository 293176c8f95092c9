"""``scipy.special.exp1``, ``expi`` and ``expn`` against JAX (float64 and float32 values,
every branch and the edges), their derivatives (closed forms), dtypes and vmap/jit."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.scipy.special as ps
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

# both sides of each switch (E1: 1; Ei: 0 and 40) and the edges; not 710, where JAX flushes
# E1's subnormal value to zero
X = np.array([-50.0, -2.0, -1e-3, 0.0, 1e-3, 0.5, 0.99, 1.0, 1.01, 2.0, 10.0, 39.0, 40.5,
              41.0, 100.0, 700.0])


def test_exponential_integrals_match_jax(jax):
    special = jax.scipy.special
    exp1, expi = jax.jit(lambda x: (special.exp1(x), special.expi(x)))(X)   # one program
    for ours, theirs in ((ps.exp1, exp1), (ps.expi, expi)):
        assert_close(ours(X), theirs, rtol=5e-14, atol=0)
        with np.errstate(over="ignore"):
            assert_close(ours(X.astype(np.float32)), theirs.astype(np.float32), rtol=3e-7,
                         atol=0)
    x = X[4:12]
    assert_close(pto.jit(pto.vmap(pto.grad(ps.exp1)))(x), -np.exp(-x) / x, rtol=1e-14)
    assert_close(pto.vmap(pto.grad(ps.expi))(x), np.exp(x) / x, rtol=1e-14)
    with pto.enable_x64(False):   # the default dtype (x64 off)
        assert ps.exp1(1).dtype == np.float32
    with pytest.raises(ValueError, match="complex"):
        ps.expi(np.complex64(1.0))


N = np.array([0, 1, 2, 5, -1, 2, 10, 1, 2, 7, 30, 100, 6000, 3, 4, 1])
XN = np.array([0.5, 0.5, 1.5, 3.0, 1.0, -1.0, 0.2, 1.0, 1.0, 0.99, 1.01, 50.0, 2.0, 1e-5, 700.0,
               0.0])


# jax.scipy.special.expn(N, XN) and expn(N - 1, XN)[:4] (JAX 0.10.2, float64), stored:
# compiling JAX's expn takes ~6 s on a busy machine
EXPN = [1.2130613194252668, 0.5597735947761608, 0.07310078653848079, 0.006697984917017046,
        np.nan, np.nan, 0.08875872683050298, 0.2193839343955205, 0.14849550677592194,
        0.051997454247119754, 0.01212255808490994, 1.2915478777847487e-24,
        2.2552120599773373e-05, 0.49999000062178567, 1.4005335079101904e-307, np.inf]
EXPN_LOWER = [np.nan, 1.2130613194252668, 0.1000195824066327, 0.00766504289993192]


def test_expn_matches_jax():
    assert_close(ps.expn(N, XN), np.array(EXPN), rtol=1e-13, atol=0)
    assert_close(ps.expn(N, XN.astype(np.float32)), np.array(EXPN, np.float32), rtol=3e-6,
                 atol=0)
    grads = pto.vmap(pto.grad(ps.expn, argnums=1))(N[:4], XN[:4])
    assert_close(grads, -np.array(EXPN_LOWER), rtol=1e-13)      # d/dx E_n = -E_{n-1}
    # E_n(0) = 1 / (n - 1) for n >= 2 (JAX gives 1 / n)
    assert_close(ps.expn(np.array([2, 3, 5]), np.zeros(3)), 1 / np.array([1.0, 2.0, 4.0]))
