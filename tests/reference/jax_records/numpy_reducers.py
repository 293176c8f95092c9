"""Records of jax-ml/jax tests/lax_numpy_reducers_test.py (JaxNumpyReducerTests):
``jnp.fn`` vs ``pnp.fn``.

The record tables REDUCER (testReducer), NO_DTYPE (testReducerNoDtype), INITIAL
(testReducerInitial, testReducerWhere, testReducerNoInitialZeroDims), WHERE_NO_INITIAL
(testReducerWhereNoInitial) and PROMOTE_INT (testReducerPromoteInt) are JAX's
(name, dtype group, shape group, rng kind, tolerance); RECORDS expands them with the
keyword arguments of the test that uses them, plus one record per other parameterized test.
Tolerances are looked up by the result dtype (JAX's tests use 1e-1 for 16-bit output dtypes).
"""
from .spec import COMPLEX, FLOAT, INT, OMIT, UINT, record

_AXIS = [None, "@axes"]
_TOL16 = {"bfloat16": 1e-1, "float16": 1e-1, "float32": 1e-3, "complex64": 1e-3}

REDUCER = [
    ("mean", "number", "nonempty", "default", None),
    ("prod", "all", "all", "small_positive", None),
    ("sum", "all", "all", "default", None),
    ("nanmean", "inexact", "nonempty", "some_nan", None),
    ("nanprod", "all", "all", "some_nan", None),
    ("nansum", "number", "all", "some_nan", None),
]
NO_DTYPE = [
    ("all", "all", "all", "some_zero", None),
    ("any", "all", "all", "some_zero", None),
    ("max", "all", "nonempty", "default", None),
    ("min", "all", "nonempty", "default", None),
    ("var", "all", "nonempty", "default", {"bfloat16": 2e-2}),
    ("std", "all", "nonempty", "default", None),
    ("nanmax", "all", "nonempty", "some_nan", None),
    ("nanmin", "all", "nonempty", "some_nan", None),
    ("nanvar", "all", "nonempty", "some_nan", None),
    ("nanstd", "all", "nonempty", "some_nan", None),
    ("ptp", "number", "nonempty", "default", None),
]
INITIAL = [
    ("prod", "all", "all", "small_positive", None),
    ("sum", "all", "all", "default", {"bfloat16": 2e-2}),
    ("max", "all", "all", "default", None),
    ("min", "all", "all", "default", None),
    ("nanprod", "inexact", "all", "small_positive", None),
    ("nansum", "inexact", "all", "default", {"bfloat16": 3e-2}),
    ("nanmax", "inexact", "all", "default", None),
    ("nanmin", "inexact", "all", "default", None),
]
WHERE_NO_INITIAL = [
    ("all", "bool", "all", "some_zero", None),
    ("any", "bool", "all", "some_zero", None),
    ("mean", "all", "nonempty", "default", None),
    ("var", "all", "nonempty", "default", None),
    ("std", "all", "nonempty", "default", None),
    ("nanmean", "inexact", "nonempty", "default", {"float16": 3e-3}),
    ("nanvar", "inexact", "nonempty", "default", {"float16": 3e-3}),
    ("nanstd", "inexact", "nonempty", "default", {"float16": 1e-3}),
]
PROMOTE_INT = [
    ("prod", "all", "all", "small_positive", None),
    ("sum", "all", "all", "default", None),
]


def _where_shapes(group):
    """(shape, where shape) pairs: the where mask broadcasts to the shape (its suffixes)."""
    from .spec import SHAPES
    return [(s, s if isinstance(s, str) else s[n:]) for s in SHAPES[group]
            for n in ([0] if isinstance(s, str) else range(len(s) + 1))]


def _out_dtypes(dtypes):
    from .spec import DTYPES
    names = DTYPES[dtypes] if isinstance(dtypes, str) else dtypes
    return [None] + [d for d in names if d not in UINT]


_ZERO_DIM_AXES = [dict(shapes=((0, 4),), axis=1), dict(shapes=((0, 4),), axis=-1),
                  dict(shapes=((3, 0),), axis=0), dict(shapes=((3, 0),), axis=-2)]

_DDOF_CORRECTION = [(0, OMIT), (1, OMIT), (1, 0), (0, 0), (0, 1), (0, 2)]

_QUANTILE_A = [((7,), None), ((6, 7), None), ((47, 7), 0), ((47, 7), ()), ((4, 101), 1),
               ((4, 47, 7), (1, 2)), ((4, 47, 7), (0, 2)), ((4, 47, 7), (1, 0, 2))]

RECORDS = [
    *[record(n, name=f"{n}.dtype", dtypes=d, shapes=s, rng=r, tol=_TOL16 | (t or {}),
             kwargs={"axis": _AXIS, "dtype": _out_dtypes(d), "keepdims": [False, True]})
      for n, d, s, r, t in REDUCER],
    *[record(n, dtypes=d, shapes=s, rng=r, tol=dict({"float16": 2e-3}, **(t or {})),
             kwargs={"axis": _AXIS, "keepdims": [False, True]})
      for n, d, s, r, t in NO_DTYPE],
    *[record(n, name=f"{n}.initial", dtypes=d, shapes=s, rng=r, tol={"bfloat16": 3e-2},
             kwargs={"axis": _AXIS, "keepdims": [False, True], "initial": [0, 1]})
      for n, d, s, r, t in INITIAL],
    *[record(n, name=f"{n}.zero_dims", dtypes=d, rng=r, tol={"bfloat16": 3e-2},
             combos=_ZERO_DIM_AXES, kwargs={"keepdims": [False, True]})
      for n, d, s, r, t in INITIAL],
    *[record(n, name=f"{n}.where_initial", nargs=2, dtypes=d, arg_dtypes=(None, "bool"),
             shapes=_where_shapes(s), rng=[r, "bool"], arg_names=(None, "where"), tol=t,
             kwargs={"axis": _AXIS, "keepdims": [False, True], "initial": [0, 1]})
      for n, d, s, r, t in INITIAL],
    *[record(n, name=f"{n}.where", nargs=2, dtypes=d, arg_dtypes=(None, "bool"),
             shapes=_where_shapes(s), rng=[r, "bool"], arg_names=(None, "where"), tol=t,
             kwargs={"axis": _AXIS, "keepdims": [False, True]})
      for n, d, s, r, t in WHERE_NO_INITIAL],
    *[record(n, name=f"{n}.promote_integers", dtypes=d, shapes=s, rng=r,
             tol={"bfloat16": 3e-2, "float16": 5e-3},
             kwargs={"axis": _AXIS, "keepdims": [False, True], "initial": [0, 1],
                     "promote_integers": [False, True]})
      for n, d, s, r, t in PROMOTE_INT],
    # testAverage (no weights; weights of the input's shape; 1-D weights along axis)
    record("average", dtypes="number", shapes="nonempty",
           tol={"bfloat16": 2e-1, "float16": 1e-2, "float32": 1e-5, "complex64": 1e-5},
           kwargs={"axis": [None, "@axes", "@all_axes"], "returned": [False, True],
                   "keepdims": [False, True]}),
    record("average", name="average.weights", nargs=2, dtypes="number",
           shapes="same:nonempty_array", arg_names=(None, "weights"),
           tol={"bfloat16": 2e-1, "float16": 1e-2, "float32": 1e-5, "complex64": 1e-5},
           kwargs={"axis": [None, "@all_axes"], "returned": [False, True],
                   "keepdims": [False, True]}),
    record("average", name="average.weights_1d", nargs=2, dtypes="number",
           arg_names=(None, "weights"),
           combos=[dict(shapes=((3, 4), (4,)), axis=1), dict(shapes=((3, 4), (3,)), axis=0),
                   dict(shapes=((2, 3, 4), (3,)), axis=-2),
                   dict(shapes=((2, 1, 4), (2,)), axis=0)],
           tol={"bfloat16": 2e-1, "float16": 1e-2, "float32": 1e-5, "complex64": 1e-5},
           kwargs={"returned": [False, True], "keepdims": [False, True]}),
    # testStdOrVar
    *[record(n, name=f"{n}.ddof", dtypes="all", tol={"float16": 1e-1, "float32": 1e-3},
             combos=[dict(shapes=(s,), ddof=d, correction=c) for s in [(5,), (10, 5)]
                     for d, c in _DDOF_CORRECTION],
             kwargs={"dtype": FLOAT + COMPLEX, "axis": [None, 0, -1],
                     "keepdims": [False, True]})
      for n in ["var", "std"]],
    # testNanVar
    record("nanvar", name="nanvar.ddof", dtypes="all", rng="some_nan", shapes=[(5,), (10, 5)],
           tol={"float16": 1e-1, "float32": 1e-3, "complex64": 1e-3},
           kwargs={"dtype": FLOAT + COMPLEX, "axis": [None, 0, -1], "ddof": [0, 1, 2],
                   "keepdims": [False, True]}),
    # testReducerWithMean (a precomputed mean, keepdims-shaped, of the inexact dtype)
    *[record(n, name=f"{n}.mean", nargs=2, dtypes=FLOAT + COMPLEX + INT,
             rng=["some_nan" if n.startswith("nan") else "default", "default"],
             arg_names=(None, "mean"), arg_dtypes=(None, "float32"),
             tol={"float16": 1e-1, "float32": 1e-3, "int8": 1e-4},
             combos=[dict(shapes=(s, m), axis=a) for s, m, a in [
                 ((5,), (1,), None), ((5,), (1,), 0), ((10, 5), (1, 1), None),
                 ((10, 5), (1, 5), 0), ((10, 5), (10, 1), 1), ((10, 5), (1, 1), (0, 1)),
                 ((5, 4, 3), (1, 4, 1), (0, 2)), ((5, 4, 3), (5, 1, 1), (1, -1))]],
             kwargs={"ddof": [0, 1], "keepdims": [True]})
      for n in ["var", "std", "nanvar", "nanstd"]],
    # testCov (observations only)
    record("cov", dtypes="all", shapes=[(5,), (10, 5), (5, 10)],
           tol={"bfloat16": 5e-2, "float16": 1e-2, "float32": 1e-5, "complex64": 1e-5},
           kwargs={"rowvar": [True, False], "ddof": [None, 2, 3], "bias": [True, False]}),
    # testCov with y, fweights and aweights (JAX's test draws them at random; integer
    # frequency weights in 0..2 and uniform analytic weights here)
    record("cov", name="cov.y", nargs=2, dtypes="default", arg_names=(None, "y"),
           tol={"bfloat16": 5e-2, "float16": 1e-2, "float32": 1e-5},
           shapes=[((5,), (5,)), ((3, 5), (2, 5)), ((5, 3), (5, 2)), ((5,), (2, 5))],
           kwargs={"rowvar": [True, False], "ddof": [None, 0, 2]}),
    record("cov", name="cov.weights", nargs=3, dtypes="default",
           arg_dtypes=(None, "int32", "float32"), arg_names=(None, "fweights", "aweights"),
           rng=["default", "int(0,3)", "uniform(0.1,1)"],
           tol={"bfloat16": 5e-2, "float16": 1e-2, "float32": 1e-5},
           shapes=[((3, 5), (5,), (5,)), ((2, 6), (6,), (6,))],
           kwargs={"ddof": [None, 0, 1], "bias": [True, False]}),
    # testWeightedQuantile (method inverted_cdf; weights of the input's shape or its axis)
    *[record(op, name=f"{op}.weights", nargs=3, dtypes=["float32"],
             arg_names=(None, None, "weights"), rng=["some_nan" if op[:3] == "nan"
                                                     else "default", "uniform(0,1)",
                                                     "uniform(0,1)"],
             tol={"float32": 1e-5},
             combos=[dict(shapes=(a, q, w), axis=ax) for a, q, w, ax in [
                 ((7,), (), (7,), None), ((6, 7), (3,), (6, 7), 1), ((6, 7), (), (7,), 1),
                 ((6, 7), (2,), (6,), 0)]],
             kwargs={"method": ["inverted_cdf"], "keepdims": [False, True]})
      for op in ["quantile", "nanquantile"]],
    # testQuantile
    *[record(op, nargs=2, dtypes="default", arg_dtypes=(None, "float32"),
             rng=["some_nan", q_rng], tol={"float16": 4e-2, "float32": 2e-4},
             combos=[dict(shapes=(a, q), axis=ax) for a, ax in _QUANTILE_A
                     for q in ["np", (1,), (4,)]],
             kwargs={"keepdims": [False, True],
                     "method": ["linear", "lower", "higher", "nearest", "midpoint"]})
      for op, q_rng in [("percentile", "uniform(0,100)"), ("quantile", "uniform(0,1)"),
                        ("nanpercentile", "uniform(0,100)"), ("nanquantile", "uniform(0,1)")]],
    # testMedian
    *[record(op, dtypes="default", rng=r, tol={"float32": 2e-4},
             combos=[dict(shapes=(a,), axis=ax) for a, ax in [((7,), None), ((6, 7), None),
                                                                ((47, 7), 0), ((4, 101), 1)]],
             kwargs={"keepdims": [False, True]})
      for op, r in [("median", "default"), ("nanmedian", "some_nan")]],
    # testCumulativeSum / testCumulativeProd (axis None only for 1-D inputs)
    *[record(op, name=f"{op}{tag}", dtypes=FLOAT + INT + UINT + ["bool"], rng="some_zero",
             shapes=shapes, tol={"bfloat16": 5e-2},
             kwargs={"axis": axes, "dtype": [None] + FLOAT + INT + ["bool"],
                     "include_initial": [False, True]})
      for op in ["cumulative_sum", "cumulative_prod"]
      for tag, shapes, axes in [("", "nonzerodim", ["@axes"]),
                                (".1d", [(4,), (0,)], [None, "@axes"])]],
]

NOT_PORTED = {
    "testReducerBadInitial, testReducerWhereNonBooleanError*, testReductionOf*Error, "
    "testCumulativeSumErrors": "error messages",
    "testReducerF16Casts, testMeanF16Casts, testMeanVeryLargeArray": "jaxpr structure",
    "testEmptyCov, testCovTransposeBehavior": "not yet ported",
    "testPercentilePrecision, test_f16_mean, *LargeArray": "single examples / x64",
}
