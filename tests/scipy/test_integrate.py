"""``pto.scipy.integrate.trapezoid`` against ``jax.scipy.integrate``: ``dx``, sample points
``x`` (1-d and full shape), axes, integer input; grad, jit and vmap."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.scipy import integrate
from helpers import assert_close

RNG = np.random.RandomState(0)
Y = RNG.randn(3, 6).astype(np.float32)
XS = np.sort(RNG.randn(6)).astype(np.float32)


@pytest.mark.parametrize("args,kwargs", [
    ((Y,), {}), ((Y,), {"dx": 0.5}), ((Y, XS), {}), ((Y, np.sort(RNG.randn(3, 6), -1)), {}),
    ((Y,), {"axis": 0, "dx": 2.0}), ((np.arange(7),), {})])
def test_trapezoid_matches_jax(jax, args, kwargs):
    import jax.scipy.integrate as jint
    with jax.enable_x64(False):
        want = jint.trapezoid(*args, **kwargs)
    got = integrate.trapezoid(*args, **kwargs)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-5)


def test_grad_jit_vmap(jax):
    import jax.scipy.integrate as jint
    with jax.enable_x64(False):
        want = jax.grad(lambda y: jint.trapezoid(y, XS).sum())(Y)
    assert_close(pto.grad(lambda y: integrate.trapezoid(y, XS).sum())(Y), np.asarray(want))
    assert_close(pto.vmap(integrate.trapezoid)(Y), integrate.trapezoid(Y))
    assert_close(pto.jit(integrate.trapezoid, static_argnames="axis")(Y, axis=0),
                 integrate.trapezoid(Y, axis=0))
