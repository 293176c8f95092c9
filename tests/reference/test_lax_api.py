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
from pnp_reference import stored, table_inputs

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 data against JAX x64: x64 mode

RNG = np.random.default_rng(0)
F = RNG.standard_normal((3, 4)).astype(np.float32)


def jitted(jax, fn, *args):
    """``fn(*args)`` computed by JAX as one jit program with the arrays as arguments: a test's
    JAX references in one XLA compile instead of one per eager operation on new shapes."""
    return jax.jit(fn)(*args)


def test_binary_ops_broadcast_size_one_dimensions_like_jax(jax):
    a, b = RNG.standard_normal((3, 1)), RNG.standard_normal((1, 4))
    names = ("add", "mul", "atan2", "max", "pow", "lt", "nextafter")
    grad = jax.grad(lambda x, y: (x * jax.lax.sin(jax.numpy.broadcast_to(y, (3, 4)))).sum(),
                    (0, 1))
    want, want_grad = jitted(jax, lambda a, abs_a, b: (
        [getattr(jax.lax, name)(abs_a if name == "pow" else a, b) for name in names],
        grad(a, b)), a, np.abs(a), b)
    for name, w in zip(names, want, strict=True):
        assert_close(getattr(lax, name)(np.abs(a) if name == "pow" else a, b), w)
    f = lambda x, y: lax.mul(x, lax.sin(y)).sum()
    assert_close(pto.grad(f, (0, 1))(a, b), want_grad)
    assert_close(pto.vmap(lax.add)(a[None] * np.ones((2, 1, 1)), b[None] * np.ones((2, 1, 1))),
                 np.broadcast_to(a + b, (2, 3, 4)))
    with pytest.raises(ShapeError):
        lax.add(np.ones(3), np.ones((2, 3)))


def test_mul_out_dtype_converts_first_like_jax(jax):
    x = np.array([100, -100, 7], np.int8)
    outs = (np.int16, np.float32, np.int8)
    want = jitted(jax, lambda x: [jax.lax.mul(x, x, out_dtype=out) for out in outs], x)
    for out, w in zip(outs, want, strict=True):
        assert_close(lax.mul(x, x, out_dtype=out), w)
    assert lax.mul(np.float32(3), 2.5, out_dtype=np.float16).dtype == np.float16


INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
BIT_CALLS = [("population_count", (0,)), ("clz", (0,)), ("mulhi", (0, 1)),
             ("shift_right_arithmetic", (0, 2)), ("shift_right_logical", (0, 2)),
             ("shift_left", (0, 2))]
BIT_REDUCTIONS = ("reduce_and", "reduce_or", "reduce_xor")


def _bit_ops(lib, *xs):
    """The BIT_CALLS on (x, y, shift), then the BIT_REDUCTIONS of x as (5, 8) over axis 1."""
    return ([getattr(lib, name)(*(xs[k] for k in args)) for name, args in BIT_CALLS] +
            [getattr(lib, name)(xs[0].reshape(5, 8), (1,)) for name in BIT_REDUCTIONS])


def _bit_inputs(dtype):
    rng = np.random.default_rng([1, INTS.index(dtype)])
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    x[:3] = [0, info.max, info.min]
    shift = rng.integers(-2, 8 * np.dtype(dtype).itemsize + 3, 40).astype(dtype)
    return [x, y, shift]


BIT_TABLE = (_bit_ops, repr((BIT_CALLS, BIT_REDUCTIONS)))


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.__name__)
def test_integer_bit_operations_match_jax(dtype):
    args = _bit_inputs(dtype)   # JAX's values stored by jax_golden.py
    want = stored(f"lax-api/bits/{np.dtype(dtype)}", args, *BIT_TABLE)
    for ours, theirs in zip(_bit_ops(lax, *args), want, strict=True):
        assert_close(ours, theirs)


FLOATS = (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)
WIDTHS = [(8, 7), (5, 10), (8, 23), (4, 3), (3, 0)]
BITCASTS = (np.int32, np.uint8, np.float16)


def _bitcast_inputs():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(50) * 10.0 ** rng.integers(-40, 40, 50),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 65504, 65520, 1e-8, 6e-5]])
    return [x, rng.standard_normal((2, 4)).astype(np.float32)]


def _jax_bitcasts(jax):
    """JAX's reduce_precision of x in each of FLOATS to each of WIDTHS (as unsigned bits), its
    bitcasts of v to BITCASTS and its vmap of a bitcast to uint8 over axis 1, in one jit."""
    def theirs(v, *xs):
        return ([jax.lax.reduce_precision(x, e, m) for x in xs for e, m in WIDTHS] +
                [jax.lax.bitcast_convert_type(v, new) for new in BITCASTS] +
                [jax.vmap(lambda a: jax.lax.bitcast_convert_type(a, np.uint8), 1)(v)])

    def fn(x, v, source):
        with np.errstate(over="ignore"):   # huge values overflow to inf, on purpose
            xs = [x.astype(d) for d in FLOATS]
        out = [np.asarray(o) for o in jax.jit(theirs)(v, *xs)]
        rounded = [o.view(f"u{o.dtype.itemsize}") for o in out[:len(xs) * len(WIDTHS)]]
        return rounded + out[len(rounded):]
    return fn


def test_bitcasts_and_reduce_precision_match_jax_bit_for_bit():
    x, v = _bitcast_inputs()
    want = iter(stored("lax-api/bitcasts", [x, v], _jax_bitcasts, repr((FLOATS, WIDTHS,
                                                                         BITCASTS))))
    for dtype in FLOATS:
        with np.errstate(over="ignore"):
            v_d = x.astype(dtype)
        bits = f"u{np.dtype(dtype).itemsize}"
        for e, m in WIDTHS:
            ours = np.asarray(lax.reduce_precision(v_d, e, m))
            np.testing.assert_array_equal(ours.view(bits), next(want))
    for new in BITCASTS:
        assert_close(lax.bitcast_convert_type(v, new), next(want))
    u8 = np.asarray(lax.bitcast_convert_type(v, np.uint8))
    assert_close(lax.bitcast_convert_type(u8, np.float32), v)
    assert_close(pto.jit(pto.vmap(lambda a: lax.bitcast_convert_type(a, np.uint8), 1))(v),
                 next(want))
    assert next(want, None) is None


def _compositions(lib, which, f, a, b, keys, vals, *cases):
    return [lib.select_n(which, *cases), lib.select_n(which > 1, *cases[:2]),
            lib.full((2, 3), 1.5, np.float16), lib.split(f, (1, 0, 3), axis=1),
            lib.tile(f[:2], (2, 3)), lib.batch_matmul(a, b), lib.sort_key_val(keys, vals)]


def test_compositions_match_jax(jax):
    which = np.array([0, 2, 1, 3, 2])
    cases = [RNG.standard_normal(5).astype(np.float32) for _ in range(4)]
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
    keys, vals = RNG.permutation(12).reshape(3, 4), RNG.standard_normal((3, 4))
    args = (which, F, a, b, keys, vals, *cases)
    for ours, theirs in zip(_compositions(lax, *args),
                            jitted(jax, lambda *xs: _compositions(jax.lax, *xs), *args),
                            strict=True):
        assert_close(ours, theirs)
    assert lax.full((2,), 3.0).weak_type


def test_reduce_recognises_monoids_and_folds_any_combiner(jax):
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    ir = pto.make_ir(lambda v: lax.reduce(v, np.float32(-np.inf), lax.max, (0, 2)))(x)
    assert [e.prim.name for e in ir.eqns] == ["reduce_max"]
    monoids = [(0.0, "add"), (1.0, "mul"), (np.inf, "min"), (5.0, "add")]
    # a combiner JAX knows no monoid for: (value, index) of the maximum
    idx = np.broadcast_to(np.arange(5, dtype=np.int32), x.shape)

    def argmax(a, b, lib):
        take_a = lib.ge(a[0], b[0])
        return lib.select(take_a, a[0], b[0]), lib.select(take_a, a[1], b[1])

    # the init values are static, as XLA's reduce wants them
    want_monoids, theirs = jitted(jax, lambda x, idx: (
        [jax.lax.reduce(x, np.float32(init), getattr(jax.lax, name), (1, 2))
         for init, name in monoids],
        jax.lax.reduce((x, idx), (np.float32(-np.inf), np.int32(0)),
                       lambda a, b: argmax(a, b, jax.lax), (2,))), x, idx)
    for (init, name), w in zip(monoids, want_monoids, strict=True):
        assert_close(lax.reduce(x, np.float32(init), getattr(lax, name), (1, 2)), w, rtol=1e-5)
    ours = lax.reduce((x, idx), (np.float32(-np.inf), np.int32(0)),
                      lambda a, b: argmax(a, b, lax), (2,))
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


GATHER_MODES = ["clip", "fill", "promise_in_bounds"]


def _gather_inputs(case, mode):
    shape, idx_shape, _, _ = DNUMS_GATHER[case]
    rng = np.random.default_rng([3, case, GATHER_MODES.index(mode)])
    return [rng.standard_normal(shape),
            rng.integers(-2, max(shape) + 2, idx_shape).astype(np.int32)]


def _jax_gather(jax, case, mode):
    """JAX's gather of ``case`` in ``mode`` and, but with promise_in_bounds (JAX's gradient is
    undefined out of bounds there), the gradient of the sum of its finite squares."""
    _, _, dn, sizes = DNUMS_GATHER[case]
    jf = lambda v, i: jax.lax.gather(v, i, jax.lax.GatherDimensionNumbers(**dn), sizes,
                                     mode=mode)
    grad = jax.grad(lambda v, i: (jnp_where_finite(jf(v, i)) ** 2).sum())
    both = jax.jit(lambda v, i: [jf(v, i)] + ([grad(v, i)] if mode != "promise_in_bounds"
                                              else []))
    return lambda x, idx, source: [np.asarray(o) for o in both(x, idx)]


@pytest.mark.parametrize("mode", GATHER_MODES)
@pytest.mark.parametrize("case", range(len(DNUMS_GATHER)))
def test_gather_with_dimension_numbers_matches_jax(case, mode):
    x, idx = _gather_inputs(case, mode)
    _, _, dn, sizes = DNUMS_GATHER[case]
    want, *want_grad = stored(f"lax-api/gather/{case}/{mode}", [x, idx], _jax_gather,
                              repr(DNUMS_GATHER[case]))
    f = lambda v: lax.gather(v, idx, lax.GatherDimensionNumbers(**dn), sizes, mode=mode)
    assert_close(f(x), want)
    assert_close(pto.jit(f)(x), want)
    assert len(want_grad) == (mode != "promise_in_bounds")
    if want_grad:
        assert_close(pto.grad(lambda v: (f(v) ** 2).sum())(x), want_grad[0])


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


SCATTER_OPS = ["scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
               "scatter_max"]
SCATTER_MODES = ("clip", "fill", None)


def _scatter_inputs(case, op):
    shape, idx_shape, upd_shape, _ = DNUMS_SCATTER[case]
    rng = np.random.default_rng([4, case, SCATTER_OPS.index(op)])
    x, upd = rng.standard_normal(shape), rng.standard_normal(upd_shape)
    idx = rng.integers(-1, max(shape) + 1, idx_shape).astype(np.int32)
    if op == "scatter":   # unique targets: the winner of duplicates is unspecified
        idx = np.minimum(np.arange(np.prod(idx_shape)).reshape(idx_shape), shape[0] - 1)
    return [x, idx, upd]


def _jax_scatter(jax, case, op):
    """JAX's scatter ``op`` of ``case`` in each of SCATTER_MODES, then for scatter_add and
    scatter_sub the gradient of its sum of squares (default mode) in the operand and updates."""
    dn = jax.lax.ScatterDimensionNumbers(**DNUMS_SCATTER[case][3])
    loss = lambda v, i, u: (getattr(jax.lax, op)(v, i, u, dn) ** 2).sum()
    grads = op in ("scatter_add", "scatter_sub")
    all_of = jax.jit(lambda v, i, u: (
        [getattr(jax.lax, op)(v, i, u, dn, mode=mode) for mode in SCATTER_MODES] +
        (list(jax.grad(loss, (0, 2))(v, i, u)) if grads else [])))
    return lambda x, idx, upd, source: [np.asarray(o) for o in all_of(x, idx, upd)]


@pytest.mark.parametrize("op", SCATTER_OPS)
@pytest.mark.parametrize("case", range(len(DNUMS_SCATTER)))
def test_scatter_with_dimension_numbers_matches_jax(case, op):
    x, idx, upd = args = _scatter_inputs(case, op)
    dn = lax.ScatterDimensionNumbers(**DNUMS_SCATTER[case][3])
    want = stored(f"lax-api/scatter/{case}/{op}", args, _jax_scatter,
                  repr(DNUMS_SCATTER[case]))
    assert len(want) == len(SCATTER_MODES) + 2 * (op in ("scatter_add", "scatter_sub"))
    for mode, theirs in zip(SCATTER_MODES, want):
        assert_close(getattr(lax, op)(x, idx, upd, dn, mode=mode), theirs)
    if len(want) > len(SCATTER_MODES):
        f = lambda v, u: (getattr(lax, op)(v, idx, u, dn) ** 2).sum()
        assert_close(pto.grad(f, (0, 1))(x, upd), want[len(SCATTER_MODES):])


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
    operands = [(np.ones((2, 3), x), np.ones((3,), y)) for x, y in pairs]
    want = jitted(jax, lambda ops: [jax.lax.dot(a, b) for a, b in ops], operands)
    for (a, b), w in zip(operands, want, strict=True):
        assert_close(lax.dot(a, b), w)
    with pytest.raises(DtypeError, match="narrower"):
        lax.dot(np.ones(3, np.int32), np.ones(3, np.int32), preferred_element_type=np.int8)


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: the integer bit
    operations, reduce_precision/bitcasts, gather and scatter tables (58 JAX programs, ~40 s
    of compiling on a busy machine). Inputs end with the source of the table's definitions."""
    for dtype in INTS:
        yield (f"lax-api/bits/{np.dtype(dtype)}", table_inputs(_bit_inputs(dtype), *BIT_TABLE),
               lambda *xs: [np.asarray(o) for o in
                            jax.jit(lambda *a: _bit_ops(jax.lax, *a))(*xs[:-1])])
    yield ("lax-api/bitcasts", table_inputs(_bitcast_inputs(), _jax_bitcasts,
                                            repr((FLOATS, WIDTHS, BITCASTS))),
           _jax_bitcasts(jax))
    for case in range(len(DNUMS_GATHER)):
        for mode in GATHER_MODES:
            yield (f"lax-api/gather/{case}/{mode}",
                   table_inputs(_gather_inputs(case, mode), _jax_gather,
                                repr(DNUMS_GATHER[case])), _jax_gather(jax, case, mode))
    for case in range(len(DNUMS_SCATTER)):
        for op in SCATTER_OPS:
            yield (f"lax-api/scatter/{case}/{op}",
                   table_inputs(_scatter_inputs(case, op), _jax_scatter,
                                repr(DNUMS_SCATTER[case])), _jax_scatter(jax, case, op))
