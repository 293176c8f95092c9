"""lax.reduce_window against JAX: max/min/sum and generic computations, padding strings and
pairs, strides, base and window dilation, integer operands and pytrees; gradients (the first
extreme element of a window takes the whole cotangent, as with select_and_scatter_add) and
vmap, eagerly and under jit."""
import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
from ptojax import lax
from helpers import assert_close

F32 = np.float32
GEOMETRIES = {
    "pool-2x2": dict(window_dimensions=(1, 2, 2, 1), window_strides=(1, 2, 2, 1),
                     padding="VALID"),
    "same-3x3": dict(window_dimensions=(1, 3, 3, 1), window_strides=(1, 2, 1, 1),
                     padding="SAME"),
    "dilated": dict(window_dimensions=(1, 2, 3, 1), window_strides=(1, 1, 2, 1),
                    padding=((0, 0), (1, 2), (0, -1), (0, 0)), base_dilation=(1, 2, 1, 1),
                    window_dilation=(1, 1, 2, 1)),
}
MONOIDS = {"max": -np.inf, "min": np.inf, "add": 0.0}


def _operand(seed=0):
    x = np.random.default_rng(seed).normal(size=(2, 7, 6, 3)).astype(F32)
    x[0, :3, :3, 0] = 0.5          # ties inside windows
    return x


def _pool(lax_, op, init, geometry):
    return lambda a: lax_.reduce_window(a, F32(init), getattr(lax_, op), **GEOMETRIES[geometry])


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("op", MONOIDS)
def test_monoid_pooling_values_gradients_and_vmap_match_jax(jax, op, geometry):
    x = _operand()
    ours, theirs = _pool(lax, op, MONOIDS[op], geometry), _pool(jax.lax, op, MONOIDS[op],
                                                                 geometry)
    want = np.asarray(theirs(x))
    assert_close(ours(x), want)
    assert_close(pto.jit(ours)(x), want)
    xs = np.stack([x, -x])
    assert_close(pto.vmap(ours)(xs), np.asarray(jax.vmap(theirs)(xs)))
    if geometry == "dilated" and op != "add":
        return      # JAX has no gradient for max/min pooling with window dilation
    ct = np.random.default_rng(1).normal(size=want.shape).astype(F32)
    assert_close(pto.grad(lambda a: (ours(a) * ct).sum())(x),
                 np.asarray(jax.grad(lambda a: (theirs(a) * ct).sum())(x)))


def test_generic_computations_non_identity_inits_integers_and_pytrees(jax):
    x = _operand(2)
    for op, init in (("mul", 1.0), ("max", 0.0), ("add", 1.0)):
        assert_close(_pool(lax, op, init, "same-3x3")(x),
                     np.asarray(_pool(jax.lax, op, init, "same-3x3")(x)), scale=4)
    xi = np.random.default_rng(3).integers(-50, 50, (4, 9)).astype(np.int32)
    low = np.int32(np.iinfo(np.int32).min)
    assert_close(lax.reduce_window(xi, low, lax.max, (2, 3), (1, 2), "SAME"),
                 np.asarray(jax.lax.reduce_window(xi, low, jax.lax.max, (2, 3), (1, 2),
                                                  "SAME")))

    def both(lax_):
        return lax_.reduce_window((x, 2 * x), (F32(0), F32(-np.inf)),
                                  lambda a, b: (lax_.add(a[0], b[0]), lax_.max(a[1], b[1])),
                                  (1, 2, 2, 1), (1, 1, 1, 1), "VALID")

    assert_close(both(lax), tuple(np.asarray(v) for v in both(jax.lax)))


def test_reduce_window_shape_tuple_matches_jax(jax):
    args = ((2, 7, 6, 3), (1, 3, 2, 1), (1, 2, 2, 1), ((0, 0), (1, 1), (0, 1), (0, 0)))
    assert lax.reduce_window_shape_tuple(*args) == \
        tuple(jax.lax.reduce_window_shape_tuple(*args, (1,) * 4, (1,) * 4))
    assert lax.padtype_to_pads((7, 6), (3, 2), (2, 2), "SAME") == \
        [tuple(p) for p in jax.lax.padtype_to_pads((7, 6), (3, 2), (2, 2), "SAME")]


def test_reduce_window_errors():
    x = _operand()
    with pytest.raises(pto.errors.ShapeError, match="window_dimensions"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(pto.errors.ShapeError, match="padding"):
        lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), None, "FULL")
    with pytest.raises(pto.errors.ShapeError, match="structure"):
        lax.reduce_window((x, x), 0.0, lax.add, (1, 2, 2, 1))


@pytest.mark.parametrize("dtype", [F32, ml_dtypes.bfloat16], ids=["f32", "bf16"])
def test_tiling_window_sums_are_one_reduction(jax, dtype):
    """Sum pools whose windows tile the operand (global pooling, a VALID tail dropped) are one
    reshape and reduce_sum, not a slice and an add per window offset; values and gradients
    as JAX's. bfloat16 sums accumulate in float32 (as reduce_sum's): compared with JAX's sum
    of the float32 operand, rounded."""
    x = _operand(4)[:, :, :5].astype(dtype)           # (2, 7, 5, 3)

    def pool(lax_, window, strides):
        return lambda a: lax_.reduce_window(a, np.zeros((), a.dtype), lax_.add, window,
                                            strides, "VALID")

    for window, strides in [((1, 7, 5, 1), (1, 1, 1, 1)), ((1, 2, 2, 1), (1, 2, 2, 1)),
                            ((2, 3, 1, 3), (2, 3, 1, 3))]:
        ours, theirs = pool(lax, window, strides), pool(jax.lax, window, strides)
        ir = pto.make_ir(ours)(x)
        assert [e.prim.name for e in ir.ir.eqns if e.prim.name in ("pad", "add")] == []
        want = np.asarray(theirs(x.astype(F32))).astype(dtype)
        assert_close(pto.jit(ours)(x), want)
        assert_close(ours(x), want)
        ct = np.random.default_rng(5).normal(size=want.shape).astype(dtype)
        assert_close(pto.grad(lambda a: (ours(a) * ct).sum())(x),
                     np.asarray(jax.grad(lambda a: (theirs(a) * ct).sum())(x)))


def test_overlapping_bfloat16_window_sums_accumulate_in_float32(jax):
    """256 + 1 rounds back to 256 in bfloat16: a sum accumulated in bfloat16 would lose the
    ones; accumulated in float32 (as reduce_sum) they count."""
    x = np.array([256, 1, 1, -256, 3, 1, 0, 5], ml_dtypes.bfloat16)
    for window, stride in [((4,), (1,)), ((4,), (4,))]:      # overlapping, tiling
        ours = lax.reduce_window(x, np.zeros((), x.dtype), lax.add, window, stride)
        want = jax.lax.reduce_window(x.astype(F32), F32(0), jax.lax.add, window, stride)
        assert ours.dtype == x.dtype
        np.testing.assert_array_equal(np.asarray(ours).astype(F32), np.asarray(want))
