"""Elementwise functions of ``ptojax.numpy``: NumPy broadcasting and JAX type promotion."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.numpy._promote import (asarray, broadcast_shapes, broadcast_to_shape,
                                   check_dtype_kind, promote_args)
from ptojax.ops import arithmetic as ar, logic as lg, transcendental as tr
from ptojax.source_info import user_frame


def _unary(prim, name, kind=None):
    def fn(x, /):
        (x,) = promote_args(name, x, kind=kind)
        return prim.bind(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (NumPy semantics)."
    return fn


def _binary(prim, name, kind=None):
    def fn(x1, x2, /):
        return prim.bind(*promote_args(name, x1, x2, kind=kind))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting (NumPy semantics)."
    return fn


add = _binary(ar.add_p, "add")
subtract = _binary(ar.sub_p, "subtract")
multiply = _binary(ar.mul_p, "multiply")
true_divide = divide = _binary(ar.div_p, "divide", kind="float")
maximum = _binary(ar.max_p, "maximum")
minimum = _binary(ar.min_p, "minimum")
arctan2 = _binary(tr.atan2_p, "arctan2", kind="float")
nextafter = _binary(ar.nextafter_p, "nextafter", kind="float")
equal = _binary(lg.eq_p, "equal")
not_equal = _binary(lg.ne_p, "not_equal")


def _ordering(prim, name):
    """An order comparison; complex numbers order by real part, then imaginary part (as NumPy
    and JAX)."""
    def fn(x1, x2, /):
        x1, x2 = promote_args(name, x1, x2)
        if not dtypes.is_complex(x1.dtype):
            return prim.bind(x1, x2)
        r1, r2 = lax.real(x1), lax.real(x2)
        return lax.select(lax.eq(r1, r2), prim.bind(lax.imag(x1), lax.imag(x2)),
                          prim.bind(r1, r2))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} with broadcasting (NumPy semantics)."
    return fn


less = _ordering(lg.lt_p, "less")
less_equal = _ordering(lg.le_p, "less_equal")
greater = _ordering(lg.gt_p, "greater")
greater_equal = _ordering(lg.ge_p, "greater_equal")

negative = _unary(ar.neg_p, "negative")
exp = _unary(tr.exp_p, "exp", kind="float")
exp2 = _unary(tr.exp2_p, "exp2", kind="float")
log = _unary(tr.log_p, "log", kind="float")
log1p = _unary(tr.log1p_p, "log1p", kind="float")
expm1 = _unary(tr.expm1_p, "expm1", kind="float")
sqrt = _unary(tr.sqrt_p, "sqrt", kind="float")
cbrt = _unary(tr.cbrt_p, "cbrt", kind="float")
tanh = _unary(tr.tanh_p, "tanh", kind="float")
sin = _unary(tr.sin_p, "sin", kind="float")
cos = _unary(tr.cos_p, "cos", kind="float")
tan = _unary(tr.tan_p, "tan", kind="float")
arcsin = _unary(tr.asin_p, "arcsin", kind="float")
arccos = _unary(tr.acos_p, "arccos", kind="float")
arctan = _unary(tr.atan_p, "arctan", kind="float")
sinh = _unary(tr.sinh_p, "sinh", kind="float")
cosh = _unary(tr.cosh_p, "cosh", kind="float")
arcsinh = _unary(tr.asinh_p, "arcsinh", kind="float")
arccosh = _unary(tr.acosh_p, "arccosh", kind="float")
arctanh = _unary(tr.atanh_p, "arctanh", kind="float")

# the array API's names
acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh
atan, atanh, atan2 = arctan, arctanh, arctan2


def positive(x, /):
    return asarray(x, op="positive")


def _float_only(prim, name):
    """A rounding function: the identity on integers and bools (as in JAX)."""
    def fn(x, /):
        (x,) = promote_args(name, x)
        return prim.bind(x) if dtypes.is_float(x.dtype) else x
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name}; integers and bools are returned unchanged."
    return fn


floor = _float_only(ar.floor_p, "floor")
ceil = _float_only(ar.ceil_p, "ceil")


def _numeric_args(name, *xs):
    """Promoted operands, with bools turned into int32 (arithmetic has no bool form)."""
    xs = promote_args(name, *xs)
    if xs[0].dtype == dtypes.bool_:
        xs = [lax.convert_element_type(x, dtypes.int32, weak_type=x.weak_type) for x in xs]
    return xs


def absolute(x, /):
    (x,) = promote_args("absolute", x)
    if x.dtype == dtypes.bool_ or dtypes.is_unsigned(x.dtype):
        return x
    return ar.abs_p.bind(x)


abs = absolute


def fabs(x, /):
    """``|x|`` as a float (integers and bools become float32, as JAX)."""
    (x,) = promote_args("fabs", x, kind="float")
    return ar.abs_p.bind(x)


def sign(x, /):
    (x,) = promote_args("sign", x)
    if x.dtype == dtypes.bool_:
        return x
    return ar.sign_p.bind(x)


def log2(x, /):
    (x,) = promote_args("log2", x, kind="float")
    return lax.div(lax.log(x), float(np.log(2)))


def log10(x, /):
    (x,) = promote_args("log10", x, kind="float")
    return lax.div(lax.log(x), float(np.log(10)))


def square(x, /):
    (x,) = _numeric_args("square", x)
    return lax.integer_pow(x, 2)


def reciprocal(x, /):
    (x,) = promote_args("reciprocal", x, kind="float")
    return lax.div(1, x)


def _on_parts(fn, x):
    """``fn`` applied to the real and imaginary parts of complex ``x``."""
    return lax.complex(fn(lax.real(x)), fn(lax.imag(x)))


def round(a, decimals: int = 0):
    """Round half to even at ``decimals`` digits; integers are unchanged (decimals >= 0);
    complex values round both parts."""
    (a,) = promote_args("round", a)
    if dtypes.is_complex(a.dtype):
        return _on_parts(lambda part: round(part, decimals), a)
    if not dtypes.is_float(a.dtype):
        if decimals < 0:
            raise UnsupportedError(f"round: rounding integers {a.aval} to {decimals} decimals "
                                   f"is not supported; convert to a float dtype first",
                                   user_frame())
        return a
    if decimals == 0:
        return lax.round(a, "half_even")
    factor = 10.0 ** decimals
    return lax.div(lax.round(lax.mul(a, factor), "half_even"), factor)


around = round


def rint(x, /):
    (x,) = promote_args("rint", x, kind="float")
    if dtypes.is_complex(x.dtype):
        return _on_parts(rint, x)
    return lax.round(x, "half_even")


def trunc(x, /):
    (x,) = promote_args("trunc", x)
    if not dtypes.is_float(x.dtype):
        return x
    return lax.select(lax.lt(x, 0), lax.ceil(x), lax.floor(x))


fix = trunc


def _either_part(test, x):
    """``test`` of real ``x``; of complex ``x``, whether either part passes it."""
    if dtypes.is_complex(x.dtype):
        return lax.bitwise_or(test(lax.real(x)), test(lax.imag(x)))
    return test(x)


def isnan(x, /):
    (x,) = promote_args("isnan", x)
    if not dtypes.is_inexact(x.dtype):
        return _full_bool(x, False)
    return _either_part(lambda v: lax.ne(v, v), x)


def isinf(x, /):
    (x,) = promote_args("isinf", x)
    if not dtypes.is_inexact(x.dtype):
        return _full_bool(x, False)
    return _either_part(lambda v: lax.eq(lax.abs(v), float("inf")), x)


def isfinite(x, /):
    (x,) = promote_args("isfinite", x, kind="float")
    if dtypes.is_complex(x.dtype):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def _infinity_test(name, sign):
    def fn(x, /):
        (x,) = promote_args(name, x)
        if not dtypes.is_float(x.dtype):
            return _full_bool(x, False)
        return lax.eq(x, sign * float("inf"))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Whether each element is {'+' if sign > 0 else '-'}inf (False for integers)."
    return fn


isposinf = _infinity_test("isposinf", 1)
isneginf = _infinity_test("isneginf", -1)


def _full_bool(x, value):
    return lax.broadcast_in_dim(np.bool_(value), x.shape, ())


def signbit(x, /):
    (x,) = promote_args("signbit", x)
    if dtypes.is_unsigned(x.dtype) or x.dtype == dtypes.bool_:
        return _full_bool(x, False)
    if not dtypes.is_float(x.dtype):
        return lax.lt(x, 0)
    # -0.0 and -nan have the sign bit set: test 1/x < 0 for zeros, x < 0 otherwise
    one = lax.div(1, x)
    return lax.select(lax.eq(x, 0), lax.lt(one, 0), lax.lt(x, 0))


def copysign(x1, x2, /):
    x1, x2 = promote_args("copysign", x1, x2, kind="float")
    return lax.select(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


def power(x1, x2, /):
    if isinstance(x2, int) and not isinstance(x2, bool):
        (x1,) = _numeric_args("power", x1)
        if x2 < 0 and not dtypes.is_float(x1.dtype):
            raise DtypeError(f"power: an integer base {x1.aval} cannot be raised to the "
                             f"negative power {x2}; convert the base to a float dtype first",
                             user_frame())
        return lax.integer_pow(x1, x2)
    x1, x2 = _numeric_args("power", x1, x2)
    if dtypes.is_inexact(x1.dtype):
        return lax.pow(x1, x2)
    return _integer_power(x1, x2)


pow = power


def float_power(x1, x2, /):
    x1, x2 = promote_args("float_power", x1, x2, kind="float")
    return lax.pow(x1, x2)


def _integer_power(base, exponent):
    """Integer ** integer by repeated squaring; a negative exponent gives the integer part of
    the exact result (±1 for a base of ±1, else 0)."""
    bits = exponent.dtype.itemsize * 8
    base_in = base
    acc = lax.convert_element_type(lax.eq(exponent, exponent), base.dtype)
    e = exponent
    for _ in range(bits):
        acc = lax.select(lax.ne(lax.bitwise_and(e, 1), 0), lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        e = lax.shift_right_logical(e, 1)
    if not dtypes.is_unsigned(exponent.dtype):
        # the loop saw the two's complement bits of a negative exponent: right parity, so
        # right for a base of ±1
        unit = lax.eq(lax.mul(base_in, base_in), 1)
        acc = lax.select(lax.bitwise_and(lax.lt(exponent, 0), lax.bitwise_not(unit)),
                         lax.mul(acc, 0), acc)
    return acc


def floor_divide(x1, x2, /):
    x1, x2 = _numeric_args("floor_divide", x1, x2)
    if dtypes.is_unsigned(x1.dtype):
        return lax.div(x1, x2)
    if dtypes.is_integer(x1.dtype):
        q = lax.div(x1, x2)
        needs_fix = lax.bitwise_and(lax.ne(lax.rem(x1, x2), 0),
                                    lax.ne(lax.lt(x1, 0), lax.lt(x2, 0)))
        return lax.select(needs_fix, lax.sub(q, 1), q)
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    wrong_sign = lax.bitwise_and(lax.ne(mod, 0), lax.ne(lax.lt(x2, 0), lax.lt(mod, 0)))
    div = lax.select(wrong_sign, lax.sub(div, 1), div)
    fl = lax.floor(div)
    quotient = lax.select(lax.gt(lax.sub(div, fl), 0.5), lax.add(fl, 1), fl)
    # a zero divisor gives the IEEE quotient (±inf or nan), as in NumPy
    return lax.select(lax.eq(x2, 0), lax.div(x1, x2), quotient)


def remainder(x1, x2, /):
    x1, x2 = _numeric_args("remainder", x1, x2)
    r = lax.rem(x1, x2)
    if dtypes.is_unsigned(r.dtype):
        return r
    wrong_sign = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(x2, 0)))
    return lax.select(wrong_sign, lax.add(r, x2), r)


mod = remainder


def fmod(x1, x2, /):
    return lax.rem(*_numeric_args("fmod", x1, x2))


def divmod(x1, x2, /):
    return floor_divide(x1, x2), remainder(x1, x2)


def _no_complex(name, *xs):
    """JAX leaves ``name`` undefined for complex values: say so."""
    if any(dtypes.is_complex(x.dtype) for x in xs):
        raise DtypeError(f"{name} is not defined for complex values ({xs[0].aval}); convert "
                         f"to real values first, e.g. with pnp.abs or pnp.real", user_frame())


def hypot(x1, x2, /):
    x1, x2 = promote_args("hypot", x1, x2, kind="float")
    _no_complex("hypot", x1, x2)
    return lax.sqrt(lax.add(lax.mul(x1, x1), lax.mul(x2, x2)))


def _wrap_between(x, a):
    """``x`` wrapped into [-a, a)."""
    r = lax.rem(lax.add(x, a), 2 * a)
    return lax.sub(lax.select(lax.lt(r, 0), lax.add(r, 2 * a), r), a)


def logaddexp(x1, x2, /):
    x1, x2 = promote_args("logaddexp", x1, x2, kind="float")
    if dtypes.is_complex(x1.dtype):  # the phase is wrapped into [-pi, pi), as JAX
        amax = lax.max(x1, x2)
        out = lax.add(amax, lax.log1p(lax.exp(lax.sub(lax.add(x1, x2), lax.mul(amax, 2)))))
        return lax.complex(lax.real(out), _wrap_between(lax.imag(out), float(np.pi)))
    return _real_logaddexp(x1, x2)


@custom_jvp
def _real_logaddexp(x1, x2):
    delta = lax.sub(x1, x2)
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2),
                      lax.add(lax.max(x1, x2), lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))


@_real_logaddexp.defjvp
def _real_logaddexp_jvp(primals, tangents):
    """JAX's rule: each tangent weighted by ``exp(x_i - out)`` (so a tie splits evenly, and
    ``softplus'(0) = 1/2``), ``+inf`` replaced by 0 in the exponent."""
    (x1, x2), (t1, t2) = primals, tangents
    out = _real_logaddexp(x1, x2)
    weight = lambda x: lax.exp(lax.sub(_finite_above(x), _finite_above(out)))
    return out, lax.add(lax.mul(t1, weight(x1)), lax.mul(t2, weight(x2)))


def _finite_above(x):
    return lax.select(lax.eq(x, float("inf")), lax.full_like(x, 0), x)


def logaddexp2(x1, x2, /):
    x1, x2 = promote_args("logaddexp2", x1, x2, kind="float")
    ln2 = float(np.log(2))
    return lax.div(logaddexp(lax.mul(x1, ln2), lax.mul(x2, ln2)), ln2)


def deg2rad(x, /):
    (x,) = promote_args("deg2rad", x, kind="float")
    return lax.mul(x, float(np.pi / 180))


def rad2deg(x, /):
    (x,) = promote_args("rad2deg", x, kind="float")
    return lax.mul(x, float(180 / np.pi))


radians, degrees = deg2rad, rad2deg


def sinc(x, /):
    (x,) = promote_args("sinc", x, kind="float")
    px = lax.mul(x, float(np.pi))
    safe = lax.select(lax.eq(x, 0), lax.add(px, 1), px)
    return lax.select(lax.eq(x, 0), lax.add(lax.mul(x, 0), 1), lax.div(lax.sin(safe), safe))


# logic ---------------------------------------------------------------------------------------
def _logical(prim, name):
    def fn(*xs):
        xs = [asarray(x) for x in xs]
        xs = [x if x.dtype == dtypes.bool_ else lax.ne(x, 0) for x in xs]
        return prim.bind(*promote_args(name, *xs))
    fn.__name__ = name
    return fn


logical_and = _logical(lg.and_p, "logical_and")
logical_or = _logical(lg.or_p, "logical_or")
logical_xor = _logical(lg.xor_p, "logical_xor")
logical_not = _logical(lg.not_p, "logical_not")


def _bitwise(prim, name):
    def fn(*xs):
        xs = promote_args(name, *xs)
        check_dtype_kind(name, xs[0], "int_or_bool")
        return prim.bind(*xs)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(lg.and_p, "bitwise_and")
bitwise_or = _bitwise(lg.or_p, "bitwise_or")
bitwise_xor = _bitwise(lg.xor_p, "bitwise_xor")
bitwise_not = invert = bitwise_invert = _bitwise(lg.not_p, "bitwise_not")


def _shift_args(name, x1, x2):
    x1, x2 = promote_args(name, x1, x2)
    check_dtype_kind(name, x1, "int_or_bool")
    return _numeric_args(name, x1, x2)


def left_shift(x1, x2, /):
    return lax.shift_left(*_shift_args("left_shift", x1, x2))


def right_shift(x1, x2, /):
    x1, x2 = _shift_args("right_shift", x1, x2)
    if dtypes.is_unsigned(x1.dtype):
        return lax.shift_right_logical(x1, x2)
    # arithmetic shift: a negative value is the complement of a non-negative one, which a
    # logical shift handles
    flipped = lax.select(lax.lt(x1, 0), lax.bitwise_not(x1), x1)
    shifted = lax.shift_right_logical(flipped, x2)
    return lax.select(lax.lt(x1, 0), lax.bitwise_not(shifted), shifted)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


# selection -----------------------------------------------------------------------------------
def where(condition, x=None, y=None, /):
    """Elements of ``x`` where ``condition`` holds, else of ``y`` (three-argument form only:
    the one-argument form has a data-dependent shape)."""
    if x is None or y is None:
        raise ShapeError("where: pnp.where(condition) has a data-dependent shape and cannot be "
                         "traced; use the three-argument form pnp.where(condition, x, y)",
                         user_frame())
    condition = asarray(condition, op="where")
    if condition.dtype != dtypes.bool_:
        condition = lax.ne(condition, 0)
    x, y = promote_args("where", x, y)
    shape = broadcast_shapes("where", tuple(condition.shape), tuple(x.shape), tuple(y.shape))
    operands = [condition, x, y]
    return lax.select(*[o if o.ndim == 0 else broadcast_to_shape(o, shape, "where")
                        for o in operands])


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    out = asarray(a)
    _no_complex("clip", *(asarray(v) for v in (out, lo, hi) if v is not None))
    if lo is not None:
        out = maximum(out, lo)
    if hi is not None:
        out = minimum(out, hi)
    return out


def fmax(x1, x2, /):
    x1, x2 = promote_args("fmax", x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, lax.max(x1, x2)))


def fmin(x1, x2, /):
    x1, x2 = promote_args("fmin", x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, lax.min(x1, x2)))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    (x,) = promote_args("nan_to_num", x)
    if dtypes.is_complex(x.dtype):
        return _on_parts(lambda part: nan_to_num(part, copy, nan, posinf, neginf), x)
    if not dtypes.is_float(x.dtype):
        return x
    info = dtypes.finfo(x.dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    x = where(isnan(x), nan, x)
    x = where(lax.eq(x, float("inf")), posinf, x)
    return where(lax.eq(x, float("-inf")), neginf, x)


def heaviside(x1, x2, /):
    x1, x2 = promote_args("heaviside", x1, x2, kind="float")
    return where(lax.lt(x1, 0), 0.0, where(lax.gt(x1, 0), 1.0, x2))


def astype(x, dtype):
    return lax.convert_element_type(asarray(x), dtypes.canonicalize(dtype))


__all__ = [n for n in dir() if not n.startswith("_") and n not in
           ("annotations", "np", "dtypes", "lax", "ew", "asarray", "promote_args",
            "check_dtype_kind", "broadcast_shapes", "broadcast_to_shape", "user_frame",
            "DtypeError", "ShapeError", "UnsupportedError")]
