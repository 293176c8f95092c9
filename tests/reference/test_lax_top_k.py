"""lax.top_k and pnp.partition / pnp.argpartition against JAX: values and indices (ties in
index order, NaN above inf, +0 above -0, integer extremes, the ``axis`` argument), eagerly and
under jit, their gradients and vmap."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax
from helpers import assert_close

SPECIAL = np.array([1.0, 3.0, np.nan, 3.0, -np.inf, np.inf, 0.0, -0.0, 2.0, 0.0], np.float32)


def _inputs(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.integers(-4, 4, shape).astype(dtype)         # many ties
    info = np.iinfo(dtype)
    x = rng.integers(-4 if info.min < 0 else 0, 4, shape).astype(dtype)
    x.flat[0], x.flat[-1] = info.max, info.min
    return x


def _check_top_k(jax, x, k, axis=-1):
    want = jax.lax.top_k(x, k, axis=axis)
    for fn in (lax.top_k, pto.jit(lax.top_k, static_argnums=1, static_argnames="axis")):
        got = fn(x, k, axis=axis)
        np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
        np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
        assert got[1].dtype == np.int32


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint32, np.int8])
@pytest.mark.parametrize("shape,k,axis", [((20,), 3, -1), ((8, 20), 8, -1), ((6, 5), 2, 0),
                                          ((2, 7, 3), 7, 1)])
def test_top_k_matches_jax(jax, dtype, shape, k, axis):
    _check_top_k(jax, _inputs(dtype, shape), k, axis)


def test_top_k_orders_nan_infinities_and_signed_zeros_as_jax(jax):
    _check_top_k(jax, SPECIAL, SPECIAL.size)
    _check_top_k(jax, SPECIAL[::-1].copy(), 4)


def test_top_k_gradient_and_vmap_match_jax(jax):
    x = np.random.default_rng(1).normal(size=(4, 9)).astype(np.float32)
    w = np.arange(3, dtype=np.float32) + 1

    def loss(lax_):
        return lambda v: (lax_.top_k(v, 3)[0] * w).sum()

    assert_close(pto.grad(loss(lax))(x), np.asarray(jax.grad(loss(jax.lax))(x)))
    got = pto.vmap(lambda v: lax.top_k(v, 2), in_axes=1)(x)
    want = jax.vmap(lambda v: jax.lax.top_k(v, 2), in_axes=1)(x)
    for g, w_ in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w_))


def test_top_k_rejects_k_out_of_range():
    with pytest.raises(pto.errors.ShapeError, match="k must be"):
        lax.top_k(np.ones(3, np.float32), 4)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
@pytest.mark.parametrize("shape,kth,axis", [((9,), 3, -1), ((9,), -1, 0), ((4, 6), 0, 1),
                                            ((5, 3, 4), 2, 0)])
def test_partition_and_argpartition_match_jax(jnp, dtype, shape, kth, axis):
    x = _inputs(dtype, shape, seed=2)
    for ours, theirs in ((pnp.partition, jnp.partition),
                         (pnp.argpartition, jnp.argpartition)):
        got, want = ours(x, kth, axis=axis), theirs(x, kth, axis=axis)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        jitted = pto.jit(ours, static_argnums=(1, 2))(x, kth, axis)
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(want))


def test_partition_gradient_and_vmap(jax, jnp):
    x = np.random.default_rng(3).normal(size=(3, 7)).astype(np.float32)
    w = np.linspace(1, 2, 7).astype(np.float32)
    got = pto.grad(lambda v: (pnp.partition(v, 2) * w).sum())(x)
    want = jax.grad(lambda v: (jnp.partition(v, 2) * w).sum())(x)
    assert_close(got, np.asarray(want))
    got = pto.vmap(lambda v: pnp.argpartition(v, 4))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(jnp.argpartition(x, 4)))
    with pytest.raises(pto.errors.IndexingError, match="out of bounds"):
        pnp.partition(x, 7)
