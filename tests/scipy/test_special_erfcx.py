"""``scipy.special.erfcx`` against JAX (float32 and float64, both branches and the switch),
its derivative, dtypes and vmap."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.scipy.special as ps
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

# float32 skips (9.1, 9.4): there XLA flushes erfc's subnormal float32 result to zero, so
# JAX returns 0 where erfcx is ~0.06 (ptojax keeps the subnormal)
X32 = np.concatenate([np.linspace(-5, 9, 57), [9.5, 12.0, 40.0, 1e4]])
X64 = np.concatenate([np.linspace(-5, 40, 91), [26.5, 26.7, 1e4]])


def test_erfcx_matches_jax(jax):
    special = jax.scipy.special
    theirs = jax.jit(lambda a, b: (special.erfcx(a), special.erfcx(b),
                                   jax.vmap(jax.grad(special.erfcx))(b)))(
        X32.astype(np.float32), X64)
    assert_close(ps.erfcx(X32.astype(np.float32)), theirs[0], rtol=2e-6)
    assert_close(ps.erfcx(X64), theirs[1], rtol=1e-12)
    assert_close(pto.jit(pto.vmap(pto.grad(ps.erfcx)))(X64), theirs[2], rtol=1e-11)
    with pto.enable_x64(False):   # the default dtype (x64 off)
        assert ps.erfcx(np.float16(1.0)).dtype == np.float16 and ps.erfcx(1).dtype == np.float32
