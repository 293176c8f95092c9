"""More of ``jax.lax`` against JAX: ``broadcast_shapes``, ``broadcast_to_rank``, ``collapse``,
``dynamic_update_index_in_dim``, ``index_take``, ``approx_max_k``/``approx_min_k`` (exact,
as JAX on CPU), ``ragged_dot`` and ``conv_general_dilated_patches``: values, dtypes, grads,
vmap and errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close

RNG = np.random.RandomState(0)
X = RNG.randn(3, 4, 5).astype(np.float32)


def test_shape_helpers_match_jax(jax):
    lax, jlax = pto.lax, jax.lax
    assert lax.broadcast_shapes((2, 1), (3,), (1, 1)) == jlax.broadcast_shapes((2, 1), (3,), (1, 1))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))
    assert lax.broadcast_to_rank(pnp.ones(3), 3).shape == (1, 1, 3)
    assert lax.broadcast_to_rank(np.ones(3, np.float32), 1).dtype == np.float32
    for args in ((1,), (0, 2), (-2, None), (1, 1)):
        assert lax.collapse(X, *args).shape == jlax.collapse(X, *args).shape
    assert_close(lax.collapse(X, 0, 2), X.reshape(12, 5))
    with pytest.raises(ValueError, match="Invalid dimension range"):
        lax.collapse(X, 2, 1)


def test_slice_in_dim_takes_none_and_negative_bounds_as_jax(jax):
    for args in ((0, None, 2, 2), (None, 3, 1, 1), (-3, None, 1, 2), (1, -1, 1, 0), (0, 3)):
        np.testing.assert_array_equal(np.asarray(pto.lax.slice_in_dim(X, *args)),
                                      np.asarray(jax.lax.slice_in_dim(X, *args)))


def test_dynamic_update_index_in_dim_and_index_take_match_jax(jax):
    lax, jlax = pto.lax, jax.lax
    upd = np.ones((3, 5), np.float32)
    for update in (upd, upd[:, None]):
        assert_close(lax.dynamic_update_index_in_dim(X, update, 2, 1),
                     jlax.dynamic_update_index_in_dim(X, update, 2, 1))
    idx = (np.array([0, -1, 2], np.int32), np.array([4, 1, -5], np.int32))
    assert_close(lax.index_take(X, idx, (0, 2)), jlax.index_take(X, idx, (0, 2)))
    grad = pto.grad(lambda x: lax.index_take(x, idx, (0, 2)).sum())(X)
    assert_close(grad, jax.grad(lambda x: jlax.index_take(x, idx, (0, 2)).sum())(X))


def test_approx_top_k_is_exact_as_jax_on_cpu(jax):
    x = RNG.permutation(60).reshape(3, 20).astype(np.float32)   # no ties
    for name in ("approx_max_k", "approx_min_k"):
        for dim in (-1, 0):
            ours = getattr(pto.lax, name)(x, 3, reduction_dimension=dim)
            theirs = getattr(jax.lax, name)(x, 3, reduction_dimension=dim)
            assert_close(ours[0], theirs[0])
            assert_close(ours[1], theirs[1])
    batched = pto.vmap(lambda r: pto.lax.approx_min_k(r, 2)[0])(x)
    assert_close(batched, np.sort(x, axis=1)[:, :2])
    with pytest.raises(ValueError, match="floating"):
        pto.lax.approx_max_k(np.arange(4), 2)
    with pytest.raises(ValueError, match="k must be smaller"):
        pto.lax.approx_max_k(x, 30)


def test_ragged_dot_matches_jax(jax):
    lhs, rhs = RNG.randn(7, 3).astype(np.float32), RNG.randn(3, 3, 2).astype(np.float32)
    sizes = np.array([2, 0, 4], np.int32)            # the last row is in no group: zero
    assert_close(pto.lax.ragged_dot(lhs, rhs, sizes), jax.lax.ragged_dot(lhs, rhs, sizes))

    def loss(lib):
        return lambda l, r: (lib.lax.ragged_dot(l, r, sizes) ** 2).sum()
    grads = pto.grad(loss(pto), argnums=(0, 1))(lhs, rhs)
    assert_close(grads, jax.grad(loss(jax), argnums=(0, 1))(lhs, rhs), rtol=1e-5)
    ints = pto.lax.ragged_dot(lhs.astype(np.int8), rhs.astype(np.int8), sizes,
                              preferred_element_type=np.int32)
    assert ints.dtype == np.int32
    with pytest.raises(TypeError, match="group dimension"):
        pto.lax.ragged_dot(lhs, rhs, np.array([1, 2], np.int32))


PATCHES = [
    dict(filter_shape=(2, 3), window_strides=(1, 2), padding="SAME"),
    dict(filter_shape=(3, 2), window_strides=(2, 1), padding=((1, 0), (0, 2)),
         rhs_dilation=(1, 2)),
    dict(filter_shape=(2, 2), window_strides=(1, 1), padding="VALID",
         dimension_numbers=("NHWC", "OIHW", "NHWC")),
]


def test_conv_general_dilated_patches_equal_jax(jax):
    x = RNG.randn(2, 3, 5, 6).astype(np.float32)
    theirs = jax.jit(lambda x: [jax.lax.conv_general_dilated_patches(x, **kw)
                                for kw in PATCHES])(x)
    for kwargs, expected in zip(PATCHES, theirs):
        ours = pto.lax.conv_general_dilated_patches(x, **kwargs)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(expected))


def test_optimization_barrier_is_an_unfused_identity(jax):
    def f(lib):
        return lambda x: lib.numpy.sin(lib.lax.optimization_barrier(lib.numpy.cos(x)) * 2).sum()
    x = np.arange(3, dtype=np.float32)
    assert_close(pto.jit(f(pto))(x), jax.jit(f(jax))(x))
    assert_close(pto.grad(f(pto))(x), jax.grad(f(jax))(x))
    assert_close(pto.vmap(pto.grad(f(pto)))(np.stack([x, x])), np.stack([jax.grad(f(jax))(x)] * 2))
    out = pto.lax.optimization_barrier({"a": np.ones(2, np.float32), "b": 3.0})
    assert set(out) == {"a", "b"} and out["b"].weak_type
    tiled = str(pto.jit(f(pto)).lower(x).tile_ir)
    assert "optimization_barrier" in tiled     # left between kernels, never fused


def test_lax_zeta_and_polygamma_match_jax(jax):
    """``lax.zeta``/``lax.polygamma``: float operands of one dtype (NaN for a negative or
    non-integer order), values and errors as JAX's."""
    x = np.array([2.0, 3.0, 1.0, 0.5, 4.5], np.float32)
    q = np.array([1.0, 2.0, 1.0, 1.0, 0.3], np.float32)
    m = np.array([0.0, 1.0, 2.0, -1.0, 1.5], np.float32)
    with jax.enable_x64(False):
        want = [jax.lax.zeta(x, q), jax.lax.polygamma(m, q + 1.0), jax.lax.zeta(2.0, q)]
    got = [pto.lax.zeta(x, q), pto.lax.polygamma(m, q + 1.0), pto.lax.zeta(2.0, q)]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5)
    with pytest.raises(TypeError, match="same dtypes"):
        pto.lax.zeta(np.float16(2.0), np.float32(1.0))
    with pytest.raises(TypeError, match="subtypes of floating"):
        pto.lax.polygamma(np.int32(1), np.float32(2.0))
