"""The rest of ``pto.lax`` against ``jax.lax`` (JAX 0.10): size-1 broadcasting of binary ops,
``mul(out_dtype)``, the integer bit operations, bitcasts, ``reduce_precision``, the
compositions (select_n, full, split, tile, batch_matmul, sort_key_val, reduce) and gather /
scatter with XLA's dimension numbers and modes, ``Precision`` and mixed-dtype products —
values, dtypes, gradients and vmap."""
import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax
from ptojax.errors import DtypeError, ShapeError
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 data against JAX x64: x64 mode

RNG = np.random.default_rng(0)
F = RNG.standard_normal((3, 4)).astype(np.float32)


def test_binary_ops_broadcast_size_one_dimensions_like_jax(jax):
    a, b = RNG.standard_normal((3, 1)), RNG.standard_normal((1, 4))
    for name in ("add", "mul", "atan2", "max", "pow", "lt", "nextafter"):
        x, y = (np.abs(a), b) if name == "pow" else (a, b)
        assert_close(getattr(lax, name)(x, y), getattr(jax.lax, name)(x, y))
    f = lambda x, y: lax.mul(x, lax.sin(y)).sum()
    assert_close(pto.grad(f, (0, 1))(a, b), jax.grad(lambda x, y: (x * jax.lax.sin(
        jax.numpy.broadcast_to(y, (3, 4)))).sum(), (0, 1))(a, b))
    assert_close(pto.vmap(lax.add)(a[None] * np.ones((2, 1, 1)), b[None] * np.ones((2, 1, 1))),
                 np.broadcast_to(a + b, (2, 3, 4)))
    with pytest.raises(ShapeError):
        lax.add(np.ones(3), np.ones((2, 3)))


def test_mul_out_dtype_converts_first_like_jax(jax):
    x = np.array([100, -100, 7], np.int8)
    for out in (np.int16, np.float32, np.int8):
        assert_close(lax.mul(x, x, out_dtype=out), jax.lax.mul(x, x, out_dtype=out))
    assert lax.mul(np.float32(3), 2.5, out_dtype=np.float16).dtype == np.float16


INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.__name__)
def test_integer_bit_operations_match_jax(dtype, jax):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    y = RNG.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    x[:3] = [0, info.max, info.min]
    shift = RNG.integers(-2, 8 * np.dtype(dtype).itemsize + 3, 40).astype(dtype)
    for name, args in [("population_count", (x,)), ("clz", (x,)), ("mulhi", (x, y)),
                       ("shift_right_arithmetic", (x, shift)),
                       ("shift_right_logical", (x, shift)), ("shift_left", (x, shift))]:
        assert_close(getattr(lax, name)(*args), getattr(jax.lax, name)(*args))
    for name in ("reduce_and", "reduce_or", "reduce_xor"):
        assert_close(getattr(lax, name)(x.reshape(5, 8), (1,)),
                     getattr(jax.lax, name)(x.reshape(5, 8), (1,)))


def test_bitcasts_and_reduce_precision_match_jax_bit_for_bit(jax):
    x = np.concatenate([RNG.standard_normal(50) * 10.0 ** RNG.integers(-40, 40, 50),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 65504, 65520, 1e-8, 6e-5]])
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64):
        v = x.astype(dtype)
        bits = f"u{np.dtype(dtype).itemsize}"
        for e, m in [(8, 7), (5, 10), (8, 23), (4, 3), (3, 0)]:
            ours = np.asarray(lax.reduce_precision(v, e, m))
            theirs = np.asarray(jax.lax.reduce_precision(v, e, m))
            np.testing.assert_array_equal(ours.view(bits), theirs.view(bits))
    v = RNG.standard_normal((2, 4)).astype(np.float32)
    for new in (np.int32, np.uint8, np.float16):
        assert_close(lax.bitcast_convert_type(v, new), jax.lax.bitcast_convert_type(v, new))
    u8 = np.asarray(lax.bitcast_convert_type(v, np.uint8))
    assert_close(lax.bitcast_convert_type(u8, np.float32), v)
    assert_close(pto.jit(pto.vmap(lambda a: lax.bitcast_convert_type(a, np.uint8), 1))(v),
                 jax.vmap(lambda a: jax.lax.bitcast_convert_type(a, np.uint8), 1)(v))


def test_compositions_match_jax(jax):
    which = np.array([0, 2, 1, 3, 2])
    cases = [RNG.standard_normal(5).astype(np.float32) for _ in range(4)]
    assert_close(lax.select_n(which, *cases), jax.lax.select_n(which, *cases))
    assert_close(lax.select_n(which > 1, *cases[:2]), jax.lax.select_n(which > 1, *cases[:2]))
    assert_close(lax.full((2, 3), 1.5, np.float16), jax.lax.full((2, 3), 1.5, np.float16))
    assert lax.full((2,), 3.0).weak_type
    assert_close(lax.split(F, (1, 0, 3), axis=1), jax.lax.split(F, (1, 0, 3), axis=1))
    assert_close(lax.tile(F[:2], (2, 3)), jax.lax.tile(F[:2], (2, 3)))
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
    assert_close(lax.batch_matmul(a, b), jax.lax.batch_matmul(a, b))
    keys, vals = RNG.permutation(12).reshape(3, 4), RNG.standard_normal((3, 4))
    assert_close(lax.sort_key_val(keys, vals), jax.lax.sort_key_val(keys, vals))


def test_reduce_recognises_monoids_and_folds_any_combiner(jax):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    ir = pto.make_ir(lambda v: lax.reduce(v, np.float32(-np.inf), lax.max, (0, 2)))(x)
    assert [e.prim.name for e in ir.eqns] == ["reduce_max"]
    for init, name in [(0.0, "add"), (1.0, "mul"), (np.inf, "min"), (5.0, "add")]:
        init = np.float32(init)
        assert_close(lax.reduce(x, init, getattr(lax, name), (1, 2)),
                     jax.lax.reduce(x, init, getattr(jax.lax, name), (1, 2)), rtol=1e-5)
    # a combiner JAX knows no monoid for: (value, index) of the maximum
    idx = np.broadcast_to(np.arange(5, dtype=np.int32), x.shape)

    def argmax(a, b, lib):
        take_a = lib.ge(a[0], b[0])
        return lib.select(take_a, a[0], b[0]), lib.select(take_a, a[1], b[1])

    ours = lax.reduce((x, idx), (np.float32(-np.inf), np.int32(0)),
                      lambda a, b: argmax(a, b, lax), (2,))
    theirs = jax.lax.reduce((x, idx), (np.float32(-np.inf), np.int32(0)),
                            lambda a, b: argmax(a, b, jax.lax), (2,))
    assert_close(ours, theirs)
    g = pto.grad(lambda v: lax.reduce(v, np.float32(0), lambda a, b: a + b * 1.0, (0,)).sum())
    assert_close(g(x), np.ones_like(x))


DNUMS_GATHER = [
    # operand, indices, dimension numbers, slice_sizes
    ((5,), (2, 1), dict(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)), (1,)),
    ((10,), (3, 1), dict(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,)), (2,)),
    ((10, 5), (3, 1), dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
     (1, 3)),
    ((10, 5), (2, 2), dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1)),
     (1, 3)),
    ((6, 7, 4), (2, 3, 1), dict(offset_dims=(2, 3), collapsed_slice_dims=(1,),
                                start_index_map=(1,)), (6, 1, 2)),
    ((3, 6, 4), (3, 2, 1), dict(offset_dims=(2,), collapsed_slice_dims=(1,),
                                start_index_map=(1,), operand_batching_dims=(0,),
                                start_indices_batching_dims=(0,)), (1, 1, 4)),
]


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("case", range(len(DNUMS_GATHER)))
def test_gather_with_dimension_numbers_matches_jax(case, mode, jax):
    shape, idx_shape, dn, sizes = DNUMS_GATHER[case]
    x = RNG.standard_normal(shape)
    idx = RNG.integers(-2, max(shape) + 2, idx_shape).astype(np.int32)
    ours_dn, jax_dn = lax.GatherDimensionNumbers(**dn), jax.lax.GatherDimensionNumbers(**dn)
    f = lambda v: lax.gather(v, idx, ours_dn, sizes, mode=mode)
    jf = lambda v: jax.lax.gather(v, idx, jax_dn, sizes, mode=mode)
    assert_close(f(x), jf(x))
    assert_close(pto.jit(f)(x), jf(x))
    if mode != "promise_in_bounds":    # JAX's gradient is undefined out of bounds there
        assert_close(pto.grad(lambda v: (f(v) ** 2).sum())(x),
                     jax.grad(lambda v: (jnp_where_finite(jf(v)) ** 2).sum())(x))


def jnp_where_finite(v):
    import jax.numpy as jnp
    return jnp.where(jnp.isfinite(v), v, 0.0)


DNUMS_SCATTER = [
    ((5,), (2, 1), (2,), dict(update_window_dims=(), inserted_window_dims=(0,),
                              scatter_dims_to_operand_dims=(0,))),
    ((10,), (3, 1), (3, 2), dict(update_window_dims=(1,), inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=(0,))),
    ((10, 5), (3, 1), (3, 3), dict(update_window_dims=(1,), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))),
    ((4, 6), (3, 1), (3, 4), dict(update_window_dims=(1,), inserted_window_dims=(1,),
                                  scatter_dims_to_operand_dims=(1,))),
    ((3, 6, 4), (3, 2, 1), (3, 2, 4), dict(update_window_dims=(2,), inserted_window_dims=(1,),
                                           scatter_dims_to_operand_dims=(1,),
                                           operand_batching_dims=(0,),
                                           scatter_indices_batching_dims=(0,))),
]


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_sub", "scatter_mul",
                                "scatter_min", "scatter_max"])
@pytest.mark.parametrize("case", range(len(DNUMS_SCATTER)))
def test_scatter_with_dimension_numbers_matches_jax(case, op, jax):
    shape, idx_shape, upd_shape, dn = DNUMS_SCATTER[case]
    x, upd = RNG.standard_normal(shape), RNG.standard_normal(upd_shape)
    idx = RNG.integers(-1, max(shape) + 1, idx_shape).astype(np.int32)
    if op == "scatter":   # unique targets: the winner of duplicates is unspecified
        idx = np.minimum(np.arange(np.prod(idx_shape)).reshape(idx_shape), shape[0] - 1)
    for mode in ("clip", "fill", None):
        ours = getattr(lax, op)(x, idx, upd, lax.ScatterDimensionNumbers(**dn), mode=mode)
        theirs = getattr(jax.lax, op)(x, idx, upd, jax.lax.ScatterDimensionNumbers(**dn),
                                      mode=mode)
        assert_close(ours, theirs)
    if op in ("scatter_add", "scatter_sub"):
        f = lambda v, u: (getattr(lax, op)(v, idx, u, lax.ScatterDimensionNumbers(**dn)) ** 2
                          ).sum()
        jf = lambda v, u: (getattr(jax.lax, op)(v, idx, u, jax.lax.ScatterDimensionNumbers(
            **dn)) ** 2).sum()
        assert_close(pto.grad(f, (0, 1))(x, upd), jax.grad(jf, (0, 1))(x, upd))


def test_gather_vmaps_like_jax(jax):
    shape, idx_shape, dn, sizes = DNUMS_GATHER[3]
    xs = RNG.standard_normal((4,) + shape)
    idx = RNG.integers(0, 5, (4,) + idx_shape).astype(np.int32)
    ours = pto.vmap(lambda v, i: lax.gather(v, i, lax.GatherDimensionNumbers(**dn), sizes,
                                            mode="clip"))(xs, idx)
    theirs = jax.vmap(lambda v, i: jax.lax.gather(v, i, jax.lax.GatherDimensionNumbers(**dn),
                                                  sizes, mode="clip"))(xs, idx)
    assert_close(ours, theirs)


def test_precision_is_accepted_recorded_and_changes_nothing_on_the_host(jax):
    a, b = F, F.T
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    for precision in (None, "high", lax.Precision.HIGHEST, ("default", "highest")):
        assert_close(lax.dot(a, b, precision=precision), a @ b, rtol=1e-6)
    ir = pto.make_ir(lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                                                  precision="highest"))(a, b)
    assert "HIGHEST" in str(ir)
    assert_close(pnp.matmul(a, b, precision="high", preferred_element_type=np.float64),
                 jax.numpy.matmul(a, b, preferred_element_type=np.float64))
    assert_close(pnp.einsum("ij,jk->ik", a, b, precision=lax.Precision.HIGH), a @ b, rtol=1e-6)
    with pytest.raises(ValueError, match="precision"):
        lax.dot(a, b, precision="fast")


def test_products_of_mixed_dtypes_use_the_higher_type_like_jax(jax):
    pairs = [(np.int16, np.int32), (np.int32, np.uint16), (np.float16, np.float32),
             (np.int8, np.float32), (np.float32, np.complex64)]
    for x, y in pairs:
        a, b = np.ones((2, 3), x), np.ones((3,), y)
        assert_close(lax.dot(a, b), jax.lax.dot(a, b))
    with pytest.raises(DtypeError, match="narrower"):
        lax.dot(np.ones(3, np.int32), np.ones(3, np.int32), preferred_element_type=np.int8)
