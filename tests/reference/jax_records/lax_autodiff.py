"""Records of jax-ml/jax tests/lax_autodiff_test.py (LaxAutodiffTest): derivatives of lax ops,
ptojax's jvp / vjp against JAX's on the same inputs, tangents and cotangents, to the record's
order (JAX checks up to order 2 or 3 numerically; we compare AD with AD up to order 2).

GRAD_OPS: (op, nargs, order, rng, dtypes, tol) -- LAX_GRAD_OPS; shapes are
combinations_with_replacement within AUTODIFF_SHAPE_GROUPS (testOpGrad).
SPECIAL_VALUES: (op, values, tol) -- LAX_GRAD_SPECIAL_VALUE_TESTS (scalar float32 inputs).
RECORDS: those and the other parameterized autodiff tests.
"""
import math

from .spec import AUTODIFF_SHAPE_GROUPS, Ref, lax_record

_GF, _GI = ["float32"], "grad_inexact"

GRAD_OPS = [
    ("neg", 1, 2, "default", _GI, None),
    ("floor", 1, 2, "uniform(0.1,0.4)", _GF, None),
    ("ceil", 1, 2, "uniform(0.1,0.4)", _GF, None),
    ("round", 1, 2, "uniform(0.1,0.4)", _GF, None),
    ("exp", 1, 2, "small", _GI, None),
    ("exp2", 1, 2, "small", _GI, None),
    ("expm1", 1, 2, "default", _GI, None),
    ("log", 1, 2, "positive", _GI, None),
    ("log1p", 1, 2, "positive", _GI, None),
    ("sinh", 1, 2, "default", _GI, 1e-5),
    ("cosh", 1, 2, "default", _GI, 1e-5),
    ("tanh", 1, 2, "default", _GI, 2e-4),
    ("sin", 1, 2, "default", _GI, {"float32": 5e-1}),
    ("cos", 1, 2, "default", _GI, None),
    ("tan", 1, 2, "uniform(-1.3,1.3)", _GI, 1e-3),
    ("asin", 1, 2, "uniform(-1.3,1.3)", _GF, 1e-3),
    ("acos", 1, 2, "uniform(-1.3,1.3)", _GF, 2e-2),
    ("atan2", 2, 2, "default", _GF, None),
    ("erf", 1, 2, "small", _GF, None),
    ("erfc", 1, 2, "small", _GF, None),
    ("erf_inv", 1, 2, "small", _GF, None),
    ("bessel_i0e", 1, 2, "default", _GF, None),
    ("bessel_i1e", 1, 2, "default", _GF, None),
    ("real", 1, 2, "default", ["complex64"], None),
    ("imag", 1, 2, "default", ["complex64"], None),
    ("complex", 2, 2, "default", _GF, None),
    ("conj", 1, 2, "default", _GI, None),
    ("abs", 1, 2, "positive", _GI, None),
    ("pow", 2, 2, "positive", _GI, {"float32": 3e-1}),
    ("sqrt", 1, 2, "positive", _GF, None),
    ("sqrt", 1, 2, "default", ["complex64"], None),
    ("rsqrt", 1, 2, "positive", _GF, None),
    ("rsqrt", 1, 2, "default", ["complex64"], None),
    ("cbrt", 1, 2, "not_small", _GF, None),
    ("logistic", 1, 2, "default", _GI, None),
    ("add", 2, 2, "default", _GI, None),
    ("sub", 2, 2, "default", _GI, None),
    ("mul", 2, 2, "default", _GI, None),
    ("div", 2, 1, "not_small", _GI, None),
    ("max", 2, 2, "default", _GF, None),
    ("min", 2, 2, "default", _GF, None),
]

SPECIAL_VALUES = [
    ("sinh", [0.], None), ("cosh", [0.], None), ("tanh", [0., 1000.], 5e-3),
    ("sin", [0., math.pi, math.pi / 2., math.pi / 4.], None),
    ("cos", [0., math.pi, math.pi / 2., math.pi / 4.], None),
    ("tan", [0.], None), ("asin", [0.], None), ("acos", [0.], None),
    ("atan", [0., 1000.], None), ("erf", [0., 10.], None), ("erfc", [0., 10.], None),
]


def _shapes(nargs):
    from itertools import combinations_with_replacement as cwr
    if nargs == 1:
        return [s for group in AUTODIFF_SHAPE_GROUPS for s in group]
    return [c for group in AUTODIFF_SHAPE_GROUPS for c in cwr(group, nargs)]


def grad_record(fn, **fields):
    return lax_record(fn, modes=("jvp", "vjp"), **fields)


def _op(op, nargs, order, rng, dtypes, tol):
    complex_only = op in ("sqrt", "rsqrt") and dtypes == ["complex64"]
    return grad_record(op, name=op + (".complex" if complex_only else ""), nargs=nargs,
                       order=order, rng=rng, dtypes=dtypes, tol=tol, shapes=_shapes(nargs))


def _special(op, value, tol):
    return grad_record(op, name=f"{op}.at_{value:.4g}", order=2, rng=f"const({value!r})",
                       dtypes=_GF, tol=tol, shapes=[()])


_CONV = [((b, i, 3, 4), (j, i, 1, 2)) for b in (2, 3) for i in (2, 3) for j in (2, 3)]
_GATHER = [
    ((5,), (2, 1), dict(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)),
     (1,)),
    ((10,), (3, 1), dict(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,)),
     (2,)),
    ((10, 5), (3, 1), dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
     (1, 3)),
]
_SCATTER = [
    ((5,), (2, 1), (2,), dict(update_window_dims=(), inserted_window_dims=(0,),
                              scatter_dims_to_operand_dims=(0,))),
    ((10,), (3, 1), (3, 2), dict(update_window_dims=(1,), inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=(0,))),
    ((10, 5), (3, 1), (3, 3), dict(update_window_dims=(1,), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))),
]
_REDUCE_DIMS = [((), ()), ((3, 4, 5), ()), ((3, 4, 5), (0,)), ((3, 4, 5), (1, 2)),
                ((3, 4, 5), (0, 2)), ((3, 4, 5), (0, 1, 2)), ((3, 1), (1,)), ((3, 0, 5), (1,))]

RECORDS = [_op(*op) for op in GRAD_OPS] + [
    _special(op, v, tol) for op, values, tol in SPECIAL_VALUES for v in values] + [
    # testOpGradOutDtype (float32 only without x64)
    grad_record("mul", name="mul.out_dtype", nargs=2, order=2, dtypes=_GF, tol=1.5e-1,
                shapes=_shapes(2), kwargs={"out_dtype": ["float32"]}),
    # testConvertElementTypeGrad
    grad_record("convert_element_type", order=2, dtypes="inexact", shapes=[(2, 3)],
                kwargs={"new_dtype": ["bfloat16", "float16", "float32", "complex64"]}),
    # testClampGrad (random bounds)
    grad_record("clamp", nargs=3, order=2, dtypes=_GF, shapes=[((),) * 3, ((2, 3),) * 3]),
    # testConcatenateGrad
    grad_record("concatenate", nargs=3, order=2, dtypes="float", pack="list", combos=[
        dict(shapes=((3,), (1,), (4,)), dimension=0),
        dict(shapes=((3, 4), (1, 4), (4, 4)), dimension=0),
        dict(shapes=((3, 3), (3, 1), (3, 4)), dimension=1),
        dict(shapes=((2, 3, 4), (2, 1, 4), (2, 4, 4)), dimension=1)]),
    # testSplitGrad
    grad_record("split", order=2, dtypes="float", combos=[
        dict(shapes=((7,),), sizes=(3, 4), axis=0), dict(shapes=((3, 5),), sizes=(1, 0, 4),
                                                         axis=1),
        dict(shapes=((2, 3, 6),), sizes=(2, 2, 2), axis=2)]),
    # testConvGrad
    grad_record("conv", nargs=2, order=2, dtypes="float", rng="small", shapes=_CONV,
                kwargs={"window_strides": [(1, 1), (1, 2), (2, 1)],
                        "padding": ["VALID", "SAME"]}, tol=1e-2),
    # testConvWithGeneralPaddingGrad
    grad_record("conv_with_general_padding", nargs=2, order=2, dtypes="float", rng="small",
                shapes=_CONV, kwargs={"window_strides": [(1, 1), (1, 2), (2, 1)],
                                      "padding": [((0, 0), (0, 0)), ((-1, 0), (0, -1)),
                                                  ((1, 0), (0, 1))],
                                      "lhs_dilation": [(1, 1), (2, 1)],
                                      "rhs_dilation": [(1, 1)]}, tol=1e-2),
    # testConvGeneralDilatedGrad (NCHW and NHWC layouts)
    grad_record("conv_general_dilated", nargs=2, order=2, dtypes=_GI, combos=[
        dict(shapes=((2, 2, 6, 7), (2, 2, 1, 2)), dimension_numbers=("NCHW", "OIHW", "NCHW")),
        dict(shapes=((2, 6, 7, 2), (1, 2, 2, 2)), dimension_numbers=("NHWC", "HWIO", "NHWC"))],
                kwargs={"window_strides": [(1, 1), (1, 2), (2, 1)],
                        "padding": [((0, 0), (0, 0)), ((1, 0), (0, 1))],
                        "lhs_dilation": [(1, 1), (2, 1)], "rhs_dilation": [(1, 1), (2, 2)]},
                tol={"bfloat16": 1e-0, "float16": 5e-1, "float32": 1e-3}),
    # testDotGrad
    grad_record("dot", nargs=2, order=2, dtypes="float",
                shapes=[(l, r) for l in [(2,), (3, 2)] for r in [(2,), (2, 4)]],
                tol={"float16": 1e-1, "float32": 1e-4}),
    # testDotGeneralContractAndBatchGrads
    grad_record("dot_general", nargs=2, order=2, dtypes="float", rng="small", combos=[
        dict(shapes=(l, r), dimension_numbers=dn) for l, r, dn in [
            ((3, 2), (2, 4), (((1,), (0,)), ((), ()))),
            ((3, 5), (2, 5), (((1,), (1,)), ((), ()))),
            ((5, 3), (5, 2), (((0,), (0,)), ((), ()))),
            ((3, 3, 2), (3, 2, 4), (((2,), (1,)), ((0,), (0,)))),
            ((3, 5, 2), (2, 4, 5), (((2,), (0,)), ((1,), (2,)))),
            ((7, 3, 5, 2), (2, 2, 4, 5), (((3,), (0,)), ((2,), (3,))))]]),
    # testBroadcastGrad / testBroadcastInDimGrad
    grad_record("broadcast", order=2, dtypes="float", shapes=[(), (2, 3)],
                kwargs={"sizes": [(), (2,), (1, 2)]}),
    grad_record("broadcast_in_dim", order=2, dtypes="float", combos=[
        dict(shapes=((2,),), shape=(2, 2), broadcast_dimensions=(0,)),
        dict(shapes=((2,),), shape=(2, 2), broadcast_dimensions=(1,)),
        dict(shapes=((2,),), shape=(2, 3), broadcast_dimensions=(0,)),
        dict(shapes=((),), shape=(2, 3), broadcast_dimensions=())]),
    # testReshapeGrad
    grad_record("reshape", order=2, dtypes="float", combos=[
        dict(shapes=(s,), new_sizes=o, dimensions=p) for s, o, p in [
            ((3, 4), (12,), None), ((2, 1, 4), (8,), None), ((2, 2, 4), (2, 8), None),
            ((3, 4), (12,), (0, 1)), ((3, 4), (12,), (1, 0)), ((2, 1, 4), (8,), (0, 2, 1)),
            ((2, 1, 4), (8,), (2, 0, 1)), ((2, 2, 4), (2, 8), (0, 2, 1)),
            ((2, 2, 4), (2, 8), (2, 0, 1))]]),
    # testPadGrad (zero padding value; and the padding value differentiated too)
    grad_record("pad", order=2, dtypes="float", rng="small", combos=[
        dict(shapes=((),), padding_config=()),
        dict(shapes=((2, 3),), padding_config=((1, 2, 1), (0, 1, 0))),
        dict(shapes=((2, 3),), padding_config=((-1, 0, 0), (-1, 0, 2)))],
                kwargs={"padding_value": [("@typed", 0)]}),
    grad_record("pad", name="pad.value", nargs=2, order=2, dtypes="float", rng="small",
                combos=[dict(shapes=((), ()), padding_config=()),
                        dict(shapes=((2, 3), ()), padding_config=((1, 2, 1), (0, 1, 0))),
                        dict(shapes=((2, 3), ()), padding_config=((-1, 0, 0), (-1, 0, 2)))]),
    # testReverseGrad
    grad_record("rev", order=2, dtypes=_GF, combos=[
        dict(shapes=((3,),), dimensions=(0,)), dict(shapes=((2, 3),), dimensions=(0, 1))]),
    # testSelectGrad (the predicate is not differentiated)
    grad_record("select", nargs=3, order=2, dtypes="float", arg_dtypes=("bool", None, None),
                diff_argnums=(1, 2),
                shapes=[((), (), ()), ((), (3,), (3,)), ((3,), (3,), (3,)),
                        ((), (2, 3), (2, 3)), ((2, 3), (2, 3), (2, 3))]),
    # testSliceGrad
    grad_record("slice", order=2, dtypes="float", combos=[
        dict(shapes=(s,), start_indices=a, limit_indices=b, strides=c) for s, a, b, c in [
            ((3,), (1,), (2,), None), ((7,), (4,), (7,), None), ((5,), (1,), (5,), (2,)),
            ((8,), (1,), (6,), (2,)), ((5, 3), (1, 1), (3, 2), None),
            ((5, 3), (1, 1), (3, 1), None), ((7, 5, 3), (4, 0, 1), (7, 1, 3), None),
            ((5, 3), (1, 1), (2, 1), (1, 1)), ((5, 3), (1, 1), (5, 3), (2, 1)),
            ((3, 3, 5), (0, 2, 0), (3, 2, 5), (1, 2, 1))]]),
    # testDynamicSliceGrad (static start indices)
    grad_record("dynamic_slice", order=2, dtypes="float", combos=[
        dict(shapes=(s,), start_indices=a, slice_sizes=b) for s, a, b in [
            ((3,), (1,), (1,)), ((5, 3), (1, 1), (3, 1)), ((7, 5, 3), (4, 1, 0), (2, 0, 1))]]),
    # testDynamicUpdateSliceGrad (start indices as a traced int32 array, not differentiated)
    *[grad_record("dynamic_update_slice", name=f"dynamic_update_slice.{tag}", nargs=2,
                  order=2, dtypes="float", shapes=[(s, u)], consts=[idx], diff_argnums=(0, 1))
      for tag, s, u, idx in [("3", (3,), (1,), [1]), ("5x3", (5, 3), (3, 1), [1, 1]),
                             ("7x5x3", (7, 5, 3), (2, 0, 1), [4, 1, 0])]],
    # testTransposeGrad
    grad_record("transpose", order=2, dtypes="float", combos=[
        dict(shapes=(s,), permutation=p) for s, p in [((3, 4), (1, 0)), ((3, 4), (0, 1)),
                                                      ((3, 4, 5), (2, 1, 0)),
                                                      ((3, 4, 5), (1, 0, 2))]]),
    # testReduceGrad (add: float + complex; max / min: distinct values; mul)
    *[grad_record("reduce", name=f"reduce.{op}", order=2, dtypes=dts, rng=rng,
                  combos=[dict(shapes=(s,), dimensions=d) for s, d in _REDUCE_DIMS
                          if op not in ("max", "min") or 0 not in s],
                  kwargs={"init_values": [("@typed", init)],
                          "computation": [Ref(f"lax.{op}")]},
                  tol={"bfloat16": 2e-1, "float16": 1e-1, "float32": 1e-1, "complex64": 1e-1})
      for op, init, dts, rng in [("add", 0, "inexact", "default"),
                                 ("max", float("-inf"), _GI, "unique"),
                                 ("min", float("inf"), _GI, "unique"),
                                 ("mul", 1, _GF, "default(1)")]],
    # testReduceWindowGrad (subset: add / max / min, float32)
    *[grad_record("reduce_window", name=f"reduce_window.{op}", order=2, dtypes=_GF, rng=rng,
                  combos=[dict(shapes=((4, 6),), window_dimensions=w, window_strides=s,
                               padding=p) for w, s, p in [
                      ((2, 1), (1, 1), "VALID"), ((1, 2), (2, 1), "SAME"),
                      ((2, 1), (1, 2), ((0, 3), (1, 2)))]],
                  kwargs={"init_value": [init], "computation": [Ref(f"lax.{op}")]},
                  tol={"float32": 6e-2})
      for op, init, rng in [("add", 0.0, "small"), ("max", float("-inf"), "unique"),
                            ("min", float("inf"), "unique")]],
    # testCumulativeReduceGrad
    *[grad_record(op, order=2, dtypes=_GF, rng="small", shapes=[(10,), (3, 4, 5)],
                  kwargs={"axis": ["@axes+"], "reverse": [False, True]})
      for op in ["cumsum", "cumprod"]],
    # testSortGrad
    grad_record("sort", order=2, dtypes=_GF, rng="unique", shapes=[(0,), (5,), (5, 7),
                                                                  (4, 9, 3)],
                kwargs={"dimension": [-1], "is_stable": [False, True]}),
    # testSortKeyValGrad (distinct keys)
    grad_record("sort_key_val", nargs=2, order=2, dtypes=_GF, rng=["unique", "default"],
                shapes=[((3,), (3,)), ((5, 3), (5, 3)), ((4, 9, 3), (4, 9, 3))],
                kwargs={"dimension": [-1], "is_stable": [False, True]}, tol=1e-2),
    # testTopKGrad (values output)
    grad_record("top_k", order=2, dtypes=_GF, rng="unique", out_index=0,
                shapes=[(4,), (5, 5), (3, 1, 4)], kwargs={"k": [1, 3]}),
    # testGatherGrad (indices in bounds, mode promise_in_bounds / clip / fill)
    grad_record("gather", nargs=2, order=2, dtypes=_GF, arg_dtypes=(None, "int32"),
                rng=["default", "int(0,3)"], diff_argnums=(0,), tol=1e-2,
                combos=[dict(shapes=(s, i), slice_sizes=z,
                             dimension_numbers=Ref.call("lax.GatherDimensionNumbers", **dn))
                        for s, i, dn, z in _GATHER],
                kwargs={"mode": ["clip", "fill", "promise_in_bounds"]}),
    # testScatterAddGrad / testScatterGrad / testScatterMax / testScatterMin
    *[grad_record(op, nargs=3, order=2, dtypes=_GF, arg_dtypes=(None, "int32", None),
                  rng=["default", idx, "default"], diff_argnums=(0, 2), tol=1e-2,
                  combos=[dict(shapes=(s, i, u),
                               dimension_numbers=Ref.call("lax.ScatterDimensionNumbers", **dn))
                          for s, i, u, dn in _SCATTER], kwargs={"mode": modes})
      for op, idx, modes in [("scatter_add", "int(0,4)", ["clip", "fill", "promise_in_bounds"]),
                             ("scatter", "unique", [None]),
                             ("scatter_max", "int(0,4)", [None]),
                             ("scatter_min", "int(0,4)", [None])]],
    # testRemainder (divisor away from zero)
    grad_record("rem", nargs=2, order=2, dtypes=_GF, rng=["uniform(-9,9)", "not_small(0.1)"],
                shapes=[((5, 8), (1, 8)), ((1, 8), (5, 8))]),
    # testTileAutodiff (order 3 in JAX; 2 here)
    grad_record("tile", order=2, dtypes=_GF, combos=[
        dict(shapes=(s,), reps=r) for s, r in [((3,), (2,)), ((2, 3), (1, 2)),
                                               ((1, 1, 4), (1, 3, 1))]]),
]

NOT_PORTED = {
    "testReducePairGrad, testIndexTakeGrad, testReduceWindowGrad (dilations, 4-D)":
        "tuple reducers / not yet ported",
    "testConvGeneralDilatedGrad (batch_group_count, empty spatial dims)": "not yet ported",
    "testStopGradient, testPowSecondDerivative, testPowIntPowerAtZero*, "
    "testHigherOrderGradientOfReciprocal, test_linear_transpose_*, test_scatter_apply_*, "
    "testDynamic*ValueAndGrad, testGradOfVmapOfDynamicSlice, testDotPreferredElementType":
        "single examples, not records",
    "order 3 (testReduceWindowGrad, testTileAutodiff)": "compared up to order 2",
}
