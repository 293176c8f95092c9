"""``scipy.special.dawsn`` against ``jax.scipy.special.dawsn``: values over the three ranges
of its rational approximations (both signs, huge arguments, float32/float64/bfloat16), its
derivative ``1 - 2 x D(x)``, and the complex-input error."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

X = np.array([0.0, 1e-3, 0.5, 1.0, 3.0, 3.2499, 3.25, 5.0, 6.2499, 6.25, 10.0, 1e5, -0.7,
              -4.0, -8.0], np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "bfloat16"])
def test_dawsn_matches_jax(jax, dtype):
    import jax.scipy.special as jsp
    x = pnp.asarray(X).astype(dtype)
    with jax.enable_x64(dtype == np.float64):
        want = jax.jit(jsp.dawsn)(jax.numpy.asarray(X).astype(dtype))
        want_grad = jax.jit(jax.vmap(jax.grad(jsp.dawsn)))(jax.numpy.asarray(X).astype(dtype))
    with pto.enable_x64(dtype == np.float64):
        got = pto.scipy.special.dawsn(x)
        got_grad = pto.vmap(pto.grad(pto.scipy.special.dawsn))(x)
    tol = 1e-13 if dtype == np.float64 else (1e-6 if dtype == np.float32 else 1e-2)
    assert got.dtype == want.dtype
    assert_close(got, np.asarray(want), rtol=tol, atol=tol)
    assert_close(got_grad, np.asarray(want_grad), rtol=tol * 10, atol=tol * 10)


def test_dawsn_rejects_complex_and_promotes_ints():
    with pytest.raises(ValueError, match="complex"):
        pto.scipy.special.dawsn(pnp.ones(2, pnp.complex64))
    with pto.enable_x64(False):   # the default dtype (x64 off)
        assert pto.scipy.special.dawsn(pnp.arange(3)).dtype == np.float32
