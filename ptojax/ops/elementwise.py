"""Elementwise primitives: arithmetic, math, comparisons, logic, select, clamp, convert.

Operands of one equation share a dtype and a shape; a rank-0 operand broadcasts (so
``mul a 2.0:f32[]`` needs no broadcast). NumPy-style broadcasting and promotion happen in
``ptojax.numpy`` before anything is bound.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.ir.types import TensorType
from ptojax.ops import special_math
from ptojax.ops.checks import broadcast_scalars, fmt_types, require_kind, require_same_dtype
from ptojax.trace import Primitive

ELEMENTWISE: dict[str, Primitive] = {}


def _elementwise(name, impl, kind="num", result_dtype=None, nargs=None):
    def abstract_eval(*types):
        if nargs is not None and len(types) != nargs:
            raise ShapeError(f"{name} takes {nargs} operands, got {len(types)}")
        require_same_dtype(name, types)
        for t in types:
            require_kind(name, t, kind)
        shape = broadcast_scalars(name, types)
        weak = all(t.weak_type for t in types)
        return TensorType(shape, result_dtype or types[0].dtype,
                          weak and result_dtype is None)

    prim = Primitive(name, abstract_eval, impl)
    prim.elementwise = True
    prim.ufunc = impl if isinstance(impl, np.ufunc) else None
    ELEMENTWISE[name] = prim
    return prim


def _int_div(x, y):
    if dtypes.is_integer(x.dtype):
        if dtypes.is_unsigned(x.dtype):
            return np.floor_divide(x, y)
        q = np.floor_divide(np.abs(x), np.abs(y))  # C semantics: round toward zero
        return np.where((x < 0) != (y < 0), -q, q).astype(x.dtype)
    return np.true_divide(x, y)


def _logistic(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def _round_half_away(x):
    whole = np.trunc(x)
    fraction = x - whole  # exact in floating point
    return np.where(np.abs(fraction) >= 0.5, whole + np.sign(x), whole).astype(x.dtype)


def _round(x, method="half_even"):
    return np.round(x) if method == "half_even" else _round_half_away(np.asarray(x))


def _integer_pow(x, y):
    return np.power(x, x.dtype.type(y)) if y >= 0 else np.reciprocal(np.power(x, -y))


def _rsqrt(x):
    return np.reciprocal(np.sqrt(x))


def _shift_right_logical(x, y):
    bits = x.dtype.itemsize * 8
    u = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    out = np.right_shift(u, y.astype(u.dtype))
    return np.where(y >= bits, 0, out).astype(u.dtype).view(x.dtype)


# arithmetic ----------------------------------------------------------------------------------
add_p = _elementwise("add", np.add, "any", nargs=2)
sub_p = _elementwise("sub", np.subtract, "num", nargs=2)
mul_p = _elementwise("mul", np.multiply, "any", nargs=2)
div_p = _elementwise("div", _int_div, "num", nargs=2)
rem_p = _elementwise("rem", np.fmod, "num", nargs=2)
pow_p = _elementwise("pow", np.power, "float", nargs=2)
max_p = _elementwise("max", np.maximum, "any", nargs=2)
min_p = _elementwise("min", np.minimum, "any", nargs=2)
atan2_p = _elementwise("atan2", np.arctan2, "float", nargs=2)
nextafter_p = _elementwise("nextafter", np.nextafter, "float", nargs=2)
neg_p = _elementwise("neg", np.negative, "num", nargs=1)
abs_p = _elementwise("abs", np.abs, "num", nargs=1)
sign_p = _elementwise("sign", np.sign, "num", nargs=1)
floor_p = _elementwise("floor", np.floor, "float", nargs=1)
ceil_p = _elementwise("ceil", np.ceil, "float", nargs=1)
is_finite_p = _elementwise("is_finite", np.isfinite, "float", dtypes.bool_, nargs=1)

# transcendental ------------------------------------------------------------------------------
exp_p = _elementwise("exp", np.exp, "float", nargs=1)
exp2_p = _elementwise("exp2", np.exp2, "float", nargs=1)
log_p = _elementwise("log", np.log, "float", nargs=1)
log1p_p = _elementwise("log1p", np.log1p, "float", nargs=1)
expm1_p = _elementwise("expm1", np.expm1, "float", nargs=1)
sqrt_p = _elementwise("sqrt", np.sqrt, "float", nargs=1)
rsqrt_p = _elementwise("rsqrt", _rsqrt, "float", nargs=1)
cbrt_p = _elementwise("cbrt", np.cbrt, "float", nargs=1)
tanh_p = _elementwise("tanh", np.tanh, "float", nargs=1)
logistic_p = _elementwise("logistic", _logistic, "float", nargs=1)
sin_p = _elementwise("sin", np.sin, "float", nargs=1)
cos_p = _elementwise("cos", np.cos, "float", nargs=1)
tan_p = _elementwise("tan", np.tan, "float", nargs=1)
asin_p = _elementwise("asin", np.arcsin, "float", nargs=1)
acos_p = _elementwise("acos", np.arccos, "float", nargs=1)
atan_p = _elementwise("atan", np.arctan, "float", nargs=1)
sinh_p = _elementwise("sinh", np.sinh, "float", nargs=1)
cosh_p = _elementwise("cosh", np.cosh, "float", nargs=1)
asinh_p = _elementwise("asinh", np.arcsinh, "float", nargs=1)
acosh_p = _elementwise("acosh", np.arccosh, "float", nargs=1)
atanh_p = _elementwise("atanh", np.arctanh, "float", nargs=1)
erf_p = _elementwise("erf", special_math.erf, "float", nargs=1)
erf_inv_p = _elementwise("erf_inv", special_math.erf_inv, "float", nargs=1)

# comparisons and logic -----------------------------------------------------------------------
eq_p = _elementwise("eq", np.equal, "any", dtypes.bool_, nargs=2)
ne_p = _elementwise("ne", np.not_equal, "any", dtypes.bool_, nargs=2)
lt_p = _elementwise("lt", np.less, "any", dtypes.bool_, nargs=2)
le_p = _elementwise("le", np.less_equal, "any", dtypes.bool_, nargs=2)
gt_p = _elementwise("gt", np.greater, "any", dtypes.bool_, nargs=2)
ge_p = _elementwise("ge", np.greater_equal, "any", dtypes.bool_, nargs=2)
and_p = _elementwise("and", np.bitwise_and, "int_or_bool", nargs=2)
or_p = _elementwise("or", np.bitwise_or, "int_or_bool", nargs=2)
xor_p = _elementwise("xor", np.bitwise_xor, "int_or_bool", nargs=2)
not_p = _elementwise("not", np.invert, "int_or_bool", nargs=1)
shift_left_p = _elementwise("shift_left", np.left_shift, "int", nargs=2)
shift_right_logical_p = _elementwise("shift_right_logical", _shift_right_logical, "int",
                                     nargs=2)


# operations with parameters ------------------------------------------------------------------
def _round_abstract(x, method):
    require_kind("round", x, "float")
    if method not in ("half_even", "half_away"):
        raise ValueError(f"round: method must be 'half_even' or 'half_away', got {method!r}")
    return x


round_p = Primitive("round", _round_abstract, _round)
round_p.elementwise, round_p.ufunc = True, None
ELEMENTWISE["round"] = round_p


def _integer_pow_abstract(x, y):
    require_kind("integer_pow", x, "num")
    if not isinstance(y, int):
        raise DtypeError(f"integer_pow: exponent must be a Python int, got {y!r}")
    if y < 0 and not dtypes.is_float(x.dtype):
        raise DtypeError(f"integer_pow: negative exponent {y} for an integer base {x}; "
                         f"convert the base to a float dtype first")
    return x


integer_pow_p = Primitive("integer_pow", _integer_pow_abstract, _integer_pow)
integer_pow_p.elementwise, integer_pow_p.ufunc = True, None
ELEMENTWISE["integer_pow"] = integer_pow_p


def _select_abstract(pred, on_true, on_false):
    if pred.dtype != dtypes.bool_:
        raise DtypeError(f"select: the predicate must be bool, got {pred}")
    require_same_dtype("select", (on_true, on_false))
    shape = broadcast_scalars("select", (pred, on_true, on_false))
    return TensorType(shape, on_true.dtype, on_true.weak_type and on_false.weak_type)


select_p = Primitive("select", _select_abstract, np.where)
select_p.elementwise, select_p.ufunc = True, None
ELEMENTWISE["select"] = select_p


def _clamp_abstract(lo, x, hi):
    require_same_dtype("clamp", (lo, x, hi))
    for bound in (lo, hi):
        if bound.shape not in ((), x.shape):
            raise ShapeError(f"clamp: bounds must be scalars or shaped like the operand "
                             f"({fmt_types((lo, x, hi))})")
    return x


def _clamp(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


clamp_p = Primitive("clamp", _clamp_abstract, _clamp)
clamp_p.elementwise, clamp_p.ufunc = True, None
ELEMENTWISE["clamp"] = clamp_p


def _convert_abstract(x, new_dtype, weak_type=False):
    return TensorType(x.shape, dtypes.canonicalize(new_dtype), weak_type)


def _convert(x, new_dtype, weak_type=False):
    x = np.asarray(x)
    if dtypes.is_float(x.dtype) and dtypes.is_integer(new_dtype):
        return _float_to_int(x, new_dtype)
    return x.astype(new_dtype)


def _float_to_int(x, new_dtype):
    """Truncate toward zero, saturate at the integer range and send NaN to 0, as XLA does."""
    info = np.iinfo(new_dtype)
    wide = x.astype(np.float64)
    # float64 cannot hold the bounds of 64-bit integers exactly: saturate by comparison
    too_big, too_small = wide >= float(info.max), wide <= float(info.min)
    safe = np.where(too_big | too_small | np.isnan(wide), 0, np.trunc(wide))
    out = safe.astype(new_dtype)
    return np.where(too_big, info.max, np.where(too_small, info.min, out)).astype(new_dtype)


convert_element_type_p = Primitive("convert_element_type", _convert_abstract, _convert)
convert_element_type_p.elementwise, convert_element_type_p.ufunc = True, None
ELEMENTWISE["convert_element_type"] = convert_element_type_p


def _identity_abstract(x):
    return x


def _identity(x):
    return x


stop_gradient_p = Primitive("stop_gradient", _identity_abstract, _identity)
stop_gradient_p.elementwise, stop_gradient_p.ufunc = True, None
copy_p = Primitive("copy", _identity_abstract, np.copy)
copy_p.elementwise, copy_p.ufunc = True, None
ELEMENTWISE["stop_gradient"] = stop_gradient_p
ELEMENTWISE["copy"] = copy_p
