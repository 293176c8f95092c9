"""``scipy.special``'s incomplete gamma/beta functions and modified Bessel functions of orders
0 and 1: values against JAX (float32 and float64), integer promotion, gradients against
closed forms and differences, vmap/jit."""
import math

import numpy as np
import pytest

import ptojax as pto
import ptojax.scipy.special as ps
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.default_rng(3)
A = np.concatenate([RNG.uniform(0.1, 5, 8), [1.0, 30.0]])
X = np.concatenate([RNG.uniform(0.01, 6, 8), [0.0, 25.0]])
B = RNG.uniform(0.2, 4, 10)
U = np.concatenate([RNG.uniform(0, 1, 8), [0.0, 1.0]])
R = np.concatenate([RNG.normal(size=8) * 4, [0.0, -30.0]])
CALLS = {"gammainc": (A, X), "gammaincc": (A, X), "betainc": (A, B, U),
         "i0e": (R,), "i0": (R / 4,), "i1e": (R,), "i1": (R / 4,)}


def _all(special, dtype):
    return {name: getattr(special, name)(*(a.astype(dtype) for a in args))
            for name, args in CALLS.items()}


def test_values_match_jax(jax):
    theirs = jax.jit(lambda: _all(jax.scipy.special, np.float64))()   # one compiled program
    for dtype, rtol in ((np.float64, 1e-10), (np.float32, 2e-5)):
        ours = _all(ps, dtype)
        for name in CALLS:
            assert ours[name].dtype == dtype
            assert_close(ours[name], theirs[name].astype(dtype), rtol=rtol, atol=rtol)


def test_promotion_gradients_and_transforms():
    with pto.enable_x64(False):   # the default dtype (x64 off)
        assert ps.gammainc(2, 1).dtype == np.float32 and ps.i0(np.int32(1)).dtype == np.float32
    with pytest.raises(ValueError, match="complex"):
        ps.betainc(1.0, 2.0, np.complex64(0.5))
    a, x = np.float64(1.7), np.float64(2.5)
    # d/dx against the closed forms; d/da against a central difference (float64)
    assert_close(pto.grad(ps.gammainc, argnums=1)(a, x),
                 x ** (a - 1) * np.exp(-x) / math.gamma(a), rtol=1e-10)
    h = 1e-6
    assert_close(pto.grad(ps.gammainc)(a, x),
                 (ps.gammainc(a + h, x) - ps.gammainc(a - h, x)) / (2 * h), rtol=1e-6)
    assert_close(pto.grad(ps.i0)(x), ps.i1(x), rtol=1e-12)
    assert_close(pto.grad(ps.i1)(x), ps.i0(x) - ps.i1(x) / x, rtol=1e-12)
    assert_close(pto.grad(ps.i1e)(-x), ps.i0e(-x) - ps.i1e(-x) * (1 / -x - 1), rtol=1e-12)
    assert_close(pto.grad(lambda u: ps.betainc(2.0, 3.0, u))(np.float64(0.3)),
                 12 * 0.3 * 0.7 ** 2, rtol=1e-10)
    batch = pto.jit(pto.vmap(ps.gammaincc, in_axes=(None, 0)))(np.float32(2.0),
                                                              X.astype(np.float32))
    assert_close(batch, ps.gammaincc(np.float32(2.0), X.astype(np.float32)))
