"""``lax.associative_scan`` against JAX: bit-equal values (the same combine order), pytrees,
reverse, axis, grad, vmap under jit, and errors."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close

X = np.random.RandomState(0).randn(3, 11).astype(np.float32)


def _affine(a, b):   # composition of x -> a0 * x + a1: associative, not commutative
    return a[0] * b[0], a[1] * b[0] + b[1]


def test_values_equal_jax(jax):
    def scans(lax, x):
        return [(lax.associative_scan(lax.add, x, reverse=reverse, axis=1),
                 lax.associative_scan(_affine, (x[0], x[1]), reverse=reverse))
                for reverse in (False, True)]
    jax_scans = jax.jit(lambda x: scans(jax.lax, x))   # JAX's op-by-op dispatch is slow
    for n in (1, 2, 7, 8):
        for (s, affine), (s_jax, affine_jax) in zip(scans(pto.lax, X[:, :n]),
                                                    jax_scans(X[:, :n])):
            np.testing.assert_array_equal(np.asarray(s), np.asarray(s_jax))
            assert_close(affine, affine_jax)   # XLA may fuse a * b + c into one rounding


def test_grad_vmap_jit_and_negative_axis(jax):
    def ours(y):
        return pto.lax.associative_scan(_affine, (y, X[1]), reverse=True)[1].sum()

    def theirs(y):
        return jax.lax.associative_scan(_affine, (y, X[1]), reverse=True)[1].sum()
    assert_close(pto.grad(ours)(X[0]), jax.jit(jax.grad(theirs))(X[0]))
    f = pto.jit(pto.vmap(lambda y: pto.lax.associative_scan(pto.lax.mul, y)))
    assert_close(f(X), jax.jit(jax.vmap(lambda y: jax.lax.associative_scan(jax.lax.mul, y)))(X))
    assert_close(pto.lax.associative_scan(pto.lax.max, X, axis=-1),
                 np.maximum.accumulate(X, axis=-1))
    assert_close(pto.lax.associative_scan(pto.lax.bitwise_or, np.array([False, True, False])),
                 np.array([False, True, True]))


def test_errors():
    with pytest.raises(ValueError, match="same first dimension"):
        pto.lax.associative_scan(_affine, (X[0], X[1, :4]))
    with pytest.raises(TypeError, match="structure"):
        pto.lax.associative_scan(lambda a, b: a[0] + b[0], (X[0], X[1]))
    with pytest.raises(ValueError, match="axis"):
        pto.lax.associative_scan(pto.lax.add, X, axis=2)
