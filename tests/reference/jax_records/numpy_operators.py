"""Records of jax-ml/jax tests/lax_numpy_operators_test.py (JaxNumpyOperatorTests), the
elementwise tables that used to live in lax_numpy_test.py: ``jnp.fn`` vs ``pnp.fn``, and
Python operators on jnp / ptojax arrays.

(name, nargs, dtype group, shape group, rng kind, tolerance[, keyword values]); as in testOp,
the shapes are broadcast-compatible combinations_with_replacement of the group and each
argument draws its own dtype (itertools.product). A record that repeats a name (integer
variants, another input range) is named name.<tag> (JAX's test_name where it has one).
"""
import itertools

from .cases import shape_tuples
from .spec import INT, UINT, record

_A = "all"
ONE_TO_ONE = [
    ("abs", 1, "all", _A, "default", None), ("add", 2, "all", _A, "default", None),
    ("ceil", 1, "float", _A, "default", None),
    ("ceil.int", 1, "int_uint", _A, "default", None),
    ("conj", 1, "number", _A, "default", None),
    ("equal", 2, "all", _A, "some_equal", None),
    ("exp", 1, "number", _A, "default", None), ("fabs", 1, "float", _A, "default", None),
    ("float_power", 2, "inexact", _A, "default(1)",
     {"bfloat16": 1e-2, "float32": 1e-3, "complex64": 2e-4}),
    ("floor", 1, "float", _A, "default", None),
    ("floor.int", 1, "int_uint", _A, "default", None),
    ("greater", 2, "all", _A, "some_equal", None),
    ("greater_equal", 2, "all", _A, "some_equal", None),
    ("i0", 1, "float", _A, "default", {"float16": 3e-3}),
    ("ldexp.int", 2, "int", _A, "default", None), ("less", 2, "all", _A, "some_equal", None),
    ("less_equal", 2, "all", _A, "some_equal", None),
    ("log", 1, "number", _A, "positive", None),
    ("logical_and", 2, "all", _A, "bool", None), ("logical_not", 1, "all", _A, "bool", None),
    ("logical_or", 2, "all", _A, "bool", None), ("logical_xor", 2, "all", _A, "bool", None),
    ("maximum", 2, "all", _A, "some_inf", None), ("minimum", 2, "all", _A, "some_inf", None),
    ("multiply", 2, "all", _A, "default", None), ("negative", 1, "number", _A, "default", None),
    ("nextafter", 2, ["float16", "float32"], _A, "default", 0),
    ("not_equal", 2, "all", _A, "some_equal", None),
    ("array_equal", 2, "number", _A, "some_equal", None),
    ("array_equiv", 2, "number", _A, "some_equal", None),
    ("reciprocal", 1, "inexact", _A, "default", None),
    ("subtract", 2, "number", _A, "default", None),
    ("signbit", 1, "default_bool", _A, "some_inf_and_nan", None),
    ("trunc", 1, "float", _A, "some_inf_and_nan", None),
    ("trunc.int", 1, "int_uint", _A, "some_inf_and_nan", None),
    ("sin", 1, "number", _A, "default", None), ("cos", 1, "number", _A, "default", None),
    ("tan", 1, "inexact_int", _A, "uniform(-1.5,1.5)", None),
    ("tan.unsigned", 1, "uint", _A, "uniform(0,1.5)", None),
    ("sinh", 1, "number", _A, "default", None), ("cosh", 1, "number", _A, "default", None),
    ("tanh", 1, "number", _A, "default", None), ("arcsin", 1, "number", _A, "small", None),
    ("arccos", 1, "number", _A, "small", None), ("arctan", 1, "number", _A, "small", None),
    ("arctan2", 2, "float", _A, "small", None),
    ("arcsinh", 1, "number", _A, "default", {"complex64": 2e-4}),
    ("arccosh", 1, "number", _A, "default", {"complex64": 2e-2}),
    ("arctanh", 1, "number", _A, "small", None),
    ("asin", 1, "number", _A, "small", None), ("acos", 1, "number", _A, "small", None),
    ("atan", 1, "number", _A, "small", None), ("atan2", 2, "float", _A, "small", None),
    ("asinh", 1, "number", _A, "default", {"complex64": 2e-4}),
    ("acosh", 1, "number", _A, "default", {"complex64": 2e-2}),
    ("atanh", 1, "number", _A, "small", None),
]

COMPOUND = [
    ("angle", 1, "number", _A, "default", None),
    ("angle.deg", 1, "number", _A, "default", None, {"deg": [True]}),
    ("atleast_1d", 1, "default", _A, "default", None),
    ("atleast_2d", 1, "default", _A, "default", None),
    ("atleast_3d", 1, "default", _A, "default", None),
    ("cbrt", 1, "default", _A, "some_inf", None),
    ("conjugate", 1, "number", _A, "default", None),
    ("deg2rad", 1, "float", _A, "default", None),
    ("divide", 2, "number", _A, "nonzero", None),
    ("divmod", 2, "int_float", _A, "nonzero", None),
    ("exp2", 1, "number", _A, "default", {"bfloat16": 4e-2, "float16": 1e-2}),
    ("expm1.large", 1, "number", _A, "positive", None),
    ("expm1", 1, "number", _A, "small_positive", None),
    ("floor_divide", 2, "default_uint", _A, "nonzero", None),
    ("fmin", 2, "number", _A, "some_nan", None), ("fmax", 2, "number", _A, "some_nan", None),
    ("fmod", 2, "default", _A, "some_nan", None),
    ("heaviside", 2, "default", _A, "default", None),
    ("hypot", 2, "float_int_uint", _A, "default", None),
    ("kron", 2, "number", "nonempty", "default", None),
    ("outer", 2, "number", _A, "default", None), ("imag", 1, "number", _A, "some_inf", None),
    ("iscomplex", 1, "number", _A, "some_inf", None),
    ("isfinite", 1, "inexact", _A, "some_inf_and_nan", None),
    ("isinf", 1, "inexact", _A, "some_inf_and_nan", None),
    ("isnan", 1, "inexact", _A, "some_inf_and_nan", None),
    ("isneginf", 1, "float", _A, "some_inf_and_nan", None),
    ("isposinf", 1, "float", _A, "some_inf_and_nan", None),
    ("isreal", 1, "number", _A, "some_inf", None),
    ("isrealobj", 1, "number", _A, "some_inf", None),
    ("log2", 1, "number", _A, "positive", None), ("log10", 1, "number", _A, "positive", None),
    ("log1p.large", 1, "number", _A, "positive", None),
    ("log1p", 1, "number", _A, "small_positive", None),
    ("logaddexp", 2, "float", _A, "some_inf_and_nan", None),
    ("logaddexp2", 2, "float", _A, "some_inf_and_nan", {"float16": 1e-2}),
    ("polyval", 2, "number_no_8bit", "nonempty_nonscalar", "default",
     {"bfloat16": 4e-2, "float16": 2e-2}),
    ("positive", 1, "number", _A, "default", None),
    ("pow", 2, "number", _A, "positive", None), ("power", 2, "number", _A, "positive", None),
    ("rad2deg", 1, "float", _A, "default", None), ("ravel", 1, "all", _A, "default", None),
    ("real", 1, "number", _A, "some_inf", None),
    ("remainder", 2, "default", _A, "some_zero", {"float16": 1e-2}),
    ("mod", 2, "default", _A, "some_zero", None), ("modf", 1, "float", _A, "default", None),
    ("modf.int", 1, "int_uint", _A, "default", None),
    ("rint", 1, "inexact", _A, "some_inf_and_nan", None),
    ("rint.int", 1, "int_uint", _A, "default", None),
    ("sign", 1, "number", _A, "some_inf_and_nan", None),
    ("copysign", 2, "default_uint", _A, "some_inf_and_nan", None),
    ("sinc", 1, "number_no_bf16", _A, "default", {"complex64": 1e-5}),
    ("square", 1, "number", _A, "default", None), ("sqrt", 1, "number", _A, "positive", None),
    ("transpose.all_dtypes", 1, "all", _A, "default", None),
    ("true_divide", 2, "all", _A, "nonzero", None),
    ("ediff1d.to_end_to_begin", 3, ["int32"], _A, "default", None),
    ("unwrap.defaults", 1, ["float16", "float32"], "nonempty_nonscalar", "default",
     {"bfloat16": 1e-1, "float16": 1e-1}),
    ("isclose", 2, "all_no_bf16", _A, "small_positive", None),
    # allclose and spacing: JAX tests them by example only; records in the same form
    ("allclose", 2, "all_no_bf16", _A, "small_positive", None),
    ("spacing", 1, "float", _A, "default", 0),
    ("gcd", 2, "int_uint", _A, "default", None), ("lcm", 2, "int_uint", _A, "default", None),
    ("lcm.int8", 2, ["int8"], _A, "not_small", None),
]

BITWISE = ["bitwise_and", "bitwise_invert", "bitwise_not", "invert", "bitwise_or",
           "bitwise_xor"]

OVERLOADS = [
    ("__add__", 2, "number", "default", None), ("__sub__", 2, "number", "default", None),
    ("__mul__", 2, "number", "default", None), ("__eq__", 2, "number", "default", None),
    ("__ne__", 2, "number", "default", None), ("__lt__", 2, "default", "default", None),
    ("__le__", 2, "default", "default", None), ("__gt__", 2, "default", "default", None),
    ("__ge__", 2, "default", "default", None), ("__pos__", 1, "number", "default", None),
    ("__neg__", 1, "number", "default", None),
    ("__pow__", 2, "inexact", "positive", {"float32": 2e-4, "complex64": 2e-4}),
    ("__mod__", 2, "default", "nonzero", {"float16": 1e-1}),
    ("__floordiv__", 2, "default", "nonzero", None),
    ("__truediv__", 2, "number", "nonzero", None), ("__abs__", 1, "number", "default", None),
    ("__invert__", 1, "int", "default", None),
    ("__lshift__", 2, "int_uint", "int(0,8)", None),
    ("__rshift__", 2, "int_uint", "int(0,8)", None),
]
RIGHT_OVERLOADS = [
    ("__radd__", "number", "default", None), ("__rsub__", "number", "default", None),
    ("__rmul__", "number", "default", None),
    ("__rpow__", "inexact", "positive", {"float32": 2e-4, "complex64": 1e-3}),
    ("__rmod__", "default", "nonzero", {"float16": 1e-1}),
    ("__rfloordiv__", "default", "nonzero", None), ("__rtruediv__", "number", "nonzero", None),
    ("__rlshift__", "int_uint", "int(0,8)", None),
    ("__rrshift__", "int_uint", "int(0,8)", None),
]


def _bitwise_compatible(a, b):
    """JAX's filter for NumPy-compatible integer pairs (without 64-bit types)."""
    return a.startswith("u") == b.startswith("u") or ("32" in a and "32" in b)


def _op(name, nargs, dtypes, shapes, rng, tol, kwargs=None):
    return record(name.split(".")[0], name=name, nargs=nargs, dtypes=dtypes,
                  dtype_mode="product", shapes=f"cwr:{shapes}", rng=rng, tol=tol,
                  kwargs=kwargs or {})


_INT_PAIRS = [p for p in itertools.combinations_with_replacement(INT + UINT, 2)
              if _bitwise_compatible(*p)]

RECORDS = [_op(*r) for r in ONE_TO_ONE + COMPOUND] + [
    # testBitwiseOp (full-range integers; pairs NumPy can promote)
    *[record(fn, nargs=n, dtypes="int_uint" if n == 1 else _INT_PAIRS,
             dtype_mode="same" if n == 1 else "explicit",
             shapes="all" if n == 1 else "cwr:all", rng="fullrange")
      for fn, n in [(f, 1 if f in ("bitwise_invert", "bitwise_not", "invert") else 2)
                    for f in BITWISE]],
    # testBitwiseCount
    record("bitwise_count", dtypes="int_uint", shapes="array", rng="fullrange"),
    # testShiftOpAgainstNumpy (no signed/unsigned mixes with a 32-bit type)
    *[record(fn, nargs=2, dtype_mode="explicit", rng=["fullrange", "int(0,8)"],
             dtypes=[p for p in itertools.product(INT + UINT, repeat=2)
                     if p[0][0] == p[1][0] or not any("32" in d for d in p)],
             shapes="cwr:nonzerodim")
      for fn in ["left_shift", "bitwise_left_shift", "right_shift", "bitwise_right_shift"]],
    # testSignComplex
    record("sign", name="sign.complex", dtypes="complex", shapes="all"),
    # testOperatorOverload (Python operators on library arrays)
    *[record(n, module="operator", nargs=k, dtypes=d, dtype_mode="product",
             shapes="cwr:all" if k > 1 else "all", rng=r, tol=t)
      for n, k, d, r, t in OVERLOADS],
    # testRightOperatorOverload (the second array's reflected method; no Python scalar)
    *[record(n, module="rmethod", nargs=2, dtypes=d, dtype_mode="product",
             shapes=[(a, b) for a, b in shape_tuples(record("x", nargs=2, shapes="cwr:all"))
                     if b != "py"],
             rng=r, tol=t)
      for n, d, r, t in RIGHT_OVERLOADS],
]
