"""``scipy.special``'s incomplete gamma/beta functions and modified Bessel functions of orders
0 and 1 against JAX: values (float32 and float64), integer promotion, gradients, vmap/jit."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.scipy.special as ps
from helpers import assert_close

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


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-5), (np.float64, 1e-10)])
def test_values_match_jax(jax, dtype, rtol):
    theirs = jax.jit(lambda: _all(jax.scipy.special, dtype))()   # one compiled program
    ours = _all(ps, dtype)
    for name in CALLS:
        assert_close(ours[name], theirs[name], rtol=rtol, atol=rtol)


def test_promotion_gradients_and_transforms(jax):
    assert ps.gammainc(2, 1).dtype == np.float32 and ps.i0(np.int32(1)).dtype == np.float32
    with pytest.raises(ValueError, match="complex"):
        ps.betainc(1.0, 2.0, np.complex64(0.5))

    def ours(a, x):
        return ps.gammainc(a, x) + ps.i1(x) * ps.i0e(x) + ps.betainc(2.0, 3.0, x / 7)

    def theirs(a, x):
        s = jax.scipy.special
        return s.gammainc(a, x) + s.i1(x) * s.i0e(x) + s.betainc(2.0, 3.0, x / 7)
    a, x = np.float64(1.7), np.float64(2.5)
    grads = jax.jit(jax.grad(theirs, argnums=(0, 1)))(a, x)
    assert_close(pto.grad(ours, argnums=(0, 1))(a, x), grads, rtol=1e-6)
    batch = pto.jit(pto.vmap(ps.gammaincc, in_axes=(None, 0)))(np.float32(2.0),
                                                              X.astype(np.float32))
    assert_close(batch, ps.gammaincc(np.float32(2.0), X.astype(np.float32)))
