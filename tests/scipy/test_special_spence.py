"""``scipy.special.spence`` against JAX (float32 and float64, each branch of its argument
mapping and the edges) and its derivative against the closed form (JAX's gradient of
spence is NaN)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.scipy.special as ps
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

X = np.array([-1.0, 0.0, 1e-8, 0.1, 0.49, 0.5, 0.51, 0.9, 1.0, 1.1, 1.99, 2.0, 2.01, 5.0, 10.0,
              1e3, 1e6, 1e30])


def test_spence_matches_jax(jax):
    theirs = jax.jit(lambda x, y: (jax.scipy.special.spence(x),
                                   jax.scipy.special.spence(y)))(X, X.astype(np.float32))
    assert_close(ps.spence(X), theirs[0], rtol=1e-14, atol=1e-15)
    assert_close(ps.spence(X.astype(np.float32)), theirs[1], rtol=1e-6, atol=1e-7)
    x = X[2:]
    grads = pto.jit(pto.vmap(pto.grad(ps.spence)))(x)
    expected = np.where(x == 1, -1.0, np.log(x) / np.where(x == 1, 2.0, 1 - x))
    assert_close(grads, expected, rtol=1e-12)
    with pto.enable_x64(False):   # the default dtype (x64 off)
        assert ps.spence(2).dtype == np.float32
