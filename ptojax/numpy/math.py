"""Elementwise functions of ``ptojax.numpy``: NumPy broadcasting and JAX type promotion."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.eval.key_array import PRNGKeyArray as _KeyArray
from ptojax.numpy._constants import lax_like as _lax_like, strong_like as _strong_like
from ptojax.numpy._promote import (array_from as _array_from, asarray, broadcast_shapes,
                                   broadcast_to_shape, dtype_and_weak as _dtype_and_weak,
                                   numeric_args as _numeric_args, promote_args)
from ptojax.numpy.classification import (isfinite, isinf, isnan, isneginf,  # noqa: F401
                                         isposinf, signbit)
from ptojax.numpy.power import float_power, pow, power  # noqa: F401
from ptojax.numpy.logical import (bitwise_and, bitwise_invert, bitwise_left_shift,  # noqa: F401
                                  bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor,
                                  invert, left_shift, logical_and, logical_not, logical_or,
                                  logical_xor, right_shift)
from ptojax.ops import arithmetic as ar, logic as lg, transcendental as tr
from ptojax.public import add_examples as _add_examples
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
    return lax.div(lax.log(x), _strong_like(x, float(np.log(2))))


def log10(x, /):
    (x,) = promote_args("log10", x, kind="float")
    return lax.div(lax.log(x), _strong_like(x, float(np.log(10))))


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
    # rescaled by a constant of a's dtype, weak only for a weak 0-d a (so the result is weak
    # only then, as JAX's: its constant of an array is a strong numpy scalar); float16 in
    # float32, as JAX (its 10-bit mantissa cannot hold x * 10**decimals finely enough)
    compute = dtypes.float32 if a.dtype == dtypes.float16 else a.dtype
    weak = a.ndim == 0 and bool(getattr(a, "weak_type", False))
    factor = lax.convert_element_type(10.0 ** decimals, compute, weak_type=weak)
    scaled = lax.mul(lax.convert_element_type(a, compute, weak_type=weak), factor)
    return lax.convert_element_type(lax.div(lax.round(scaled, "half_even"), factor), a.dtype,
                                    weak_type=weak)


around = round


def rint(x, /):
    """Round half to even; an integer or bool ``x`` is converted to the default float
    (strongly typed, as JAX's)."""
    if not dtypes.is_inexact(_dtype_and_weak(x, "rint")[0]):
        return lax.convert_element_type(asarray(x, op="rint"), dtypes.default_float())
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


def copysign(x1, x2, /):
    x1, x2 = promote_args("copysign", x1, x2, kind="float")
    return lax.select(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


def floor_divide(x1, x2, /):
    x1, x2 = _numeric_args("floor_divide", x1, x2)
    if dtypes.is_unsigned(x1.dtype):
        return lax.div(x1, x2)
    if dtypes.is_integer(x1.dtype):
        # toward zero, then one less where the signs differ and the division is inexact; a
        # zero divisor counts as of another sign than any nonzero x1 (JAX compares lax.sign:
        # 5 // 0 is lax.div's -1, less 1), written with comparisons only, which the tile
        # kernels' scalar unit has
        q = lax.div(x1, x2)
        signs_differ = lax.bitwise_or(lax.ne(lax.lt(x1, 0), lax.lt(x2, 0)), lax.eq(x2, 0))
        needs_fix = lax.bitwise_and(lax.ne(lax.rem(x1, x2), 0), signs_differ)
        return lax.select(needs_fix, lax.sub(q, 1), q)
    mod = lax.rem(x1, x2)
    div = lax.div(lax.sub(x1, mod), x2)
    wrong_sign = lax.bitwise_and(lax.ne(mod, 0), lax.ne(lax.lt(x2, 0), lax.lt(mod, 0)))
    div = lax.select(wrong_sign, lax.sub(div, 1), div)
    fl = lax.floor(div)
    quotient = lax.select(lax.gt(lax.sub(div, fl), 0.5), lax.add(fl, 1), fl)
    # a zero divisor gives the IEEE quotient (±inf or nan), as in NumPy
    return lax.select(lax.eq(x2, 0), lax.div(x1, x2), quotient)


def _nonzero_divisor(x2):
    """An integer divisor with its zeros made ones: an integer remainder by zero is 0 in
    NumPy and JAX (``lax.rem`` by zero gives the dividend)."""
    if not dtypes.is_integer(x2.dtype):
        return x2
    return lax.select(lax.eq(x2, 0), lax.full_like(x2, 1), x2)


def remainder(x1, x2, /):
    x1, x2 = _numeric_args("remainder", x1, x2)
    x2 = _nonzero_divisor(x2)
    r = lax.rem(x1, x2)
    if dtypes.is_unsigned(r.dtype):
        return r
    wrong_sign = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(x2, 0)))
    return lax.select(wrong_sign, lax.add(r, x2), r)


mod = remainder


def fmod(x1, x2, /):
    x1, x2 = _numeric_args("fmod", x1, x2)
    return lax.rem(x1, _nonzero_divisor(x2))


def divmod(x1, x2, /):
    return floor_divide(x1, x2), remainder(x1, x2)


def _no_complex(name, *xs):
    """JAX leaves ``name`` undefined for complex values: say so."""
    if any(dtypes.is_complex(x.dtype) for x in xs):
        raise DtypeError(f"{name} is not defined for complex values ({xs[0].aval}); convert "
                         f"to real values first, e.g. with pnp.abs or pnp.real", user_frame())


def hypot(x1, x2, /):
    """``big * sqrt(1 + (small / big)**2)``: no overflow or underflow of the squares (1e20
    and 1e20 give 1.41e20 in float32); an infinite side gives inf even next to NaN."""
    x1, x2 = promote_args("hypot", x1, x2, kind="float")
    _no_complex("hypot", x1, x2)
    a, b = lax.abs(x1), lax.abs(x2)
    big, small = lax.max(a, b), lax.min(a, b)
    zero = lax.eq(big, _lax_like(big, 0))
    ratio = lax.div(small, lax.select(zero, lax.full_like(big, 1), big))
    scaled = lax.mul(big, lax.sqrt(lax.add(_lax_like(big, 1), lax.mul(ratio, ratio))))
    out = lax.select(zero, big, scaled)
    infinite = lax.bitwise_or(isposinf(a), isposinf(b))
    return lax.select(infinite, lax.full_like(out, np.inf), out)


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
    ln2 = _lax_like(x1 if x1.ndim >= x2.ndim else x2, float(np.log(2)))  # of the result's shape
    return lax.div(logaddexp(lax.mul(x1, ln2), lax.mul(x2, ln2)), ln2)


def deg2rad(x, /):
    (x,) = promote_args("deg2rad", x, kind="float")
    return lax.mul(x, _lax_like(x, float(np.pi / 180)))


def rad2deg(x, /):
    (x,) = promote_args("rad2deg", x, kind="float")
    return lax.mul(x, _lax_like(x, float(180 / np.pi)))


radians, degrees = deg2rad, rad2deg


def sinc(x, /):
    (x,) = promote_args("sinc", x, kind="float")
    px = lax.mul(x, _lax_like(x, float(np.pi)))
    safe = lax.select(lax.eq(x, 0), lax.add(px, 1), px)
    return lax.select(lax.eq(x, 0), lax.add(lax.mul(x, 0), 1), lax.div(lax.sin(safe), safe))


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
    if isinstance(x, _KeyArray) and isinstance(y, _KeyArray):
        # whole keys: select their words, the condition broadcast over the word axis
        return _KeyArray(where(lax.expand_dims(condition, (condition.ndim,)), x.data,
                                  y.data))
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
    # the replacements take x's dtype, strongly typed (so is the result), as JAX's
    nan, posinf, neginf = (_array_from(v, x.dtype, "nan_to_num")
                           if isinstance(v, (list, tuple)) else
                           lax.convert_element_type(v, x.dtype)
                           for v in (nan, posinf, neginf))
    x = where(isnan(x), nan, x)
    x = where(lax.eq(x, float("inf")), posinf, x)
    return where(lax.eq(x, float("-inf")), neginf, x)


def heaviside(x1, x2, /):
    """0 below zero, 1 above, ``x2`` at zero; NaN where ``x1`` is NaN (as NumPy and JAX)."""
    x1, x2 = promote_args("heaviside", x1, x2, kind="float")
    at_zero = where(lax.ne(x1, x1), x1, x2)
    return where(lax.lt(x1, 0), _lax_like(x1, 0),
                 where(lax.gt(x1, 0), _lax_like(x1, 1), at_zero))


def astype(x, dtype):
    # dtype None is the default float (float32; float64 in x64 mode), as JAX
    return lax.convert_element_type(asarray(x), dtypes.user_dtype(
        float if dtype is None else dtype, "astype"))


__all__ = [n for n in dir() if not n.startswith("_") and n not in
           ("annotations", "np", "dtypes", "lax", "ew", "asarray", "promote_args",
            "check_dtype_kind", "broadcast_shapes", "broadcast_to_shape", "user_frame",
            "DtypeError", "ShapeError", "UnsupportedError", "custom_jvp")]

_add_examples(globals(), """
absolute: Absolute value, elementwise (``abs`` is the same function); bools and unsigned
    integers are returned unchanged, complex numbers give their magnitude.
    >>> pnp.abs(pnp.array([-1.5, 0.0, 2.5]))
    Array([1.5, 0. , 2.5], dtype=float32)
arccos: Inverse cosine, elementwise, in radians in [0, pi] (``acos``); integers become floats.
    >>> pnp.arccos(pnp.array([0.0, 0.5, 1.0]))
    Array([1.5707964, 1.0471976, 0.       ], dtype=float32)
arccosh: Inverse hyperbolic cosine, elementwise (``acosh``); NaN below 1.
    >>> pnp.arccosh(pnp.array([1.0, 2.0, 10.0]))
    Array([0.      , 1.316958, 2.993223], dtype=float32)
add: Sum of ``x1`` and ``x2``, elementwise, broadcasting their shapes and promoting their
    dtypes as JAX.
    >>> pnp.add(pnp.array([1, 2, 3]), 10)
    Array([11, 12, 13], dtype=int32)
arcsin: Inverse sine, elementwise, in radians in [-pi/2, pi/2] (``asin``).
    >>> pnp.arcsin(pnp.array([0.0, 0.5, 1.0]))
    Array([0.       , 0.5235988, 1.5707964], dtype=float32)
arcsinh: Inverse hyperbolic sine, elementwise (``asinh``).
    >>> pnp.arcsinh(pnp.array([-1.5, 0.0, 2.5]))
    Array([-1.1947632,  0.       ,  1.6472311], dtype=float32)
arctan: Inverse tangent, elementwise, in radians in (-pi/2, pi/2) (``atan``).
    >>> pnp.arctan(pnp.array([-1.5, 0.0, 2.5]))
    Array([-0.98279375,  0.        ,  1.19029   ], dtype=float32)
arctan2: Angle of the point (``x2``, ``x1``) in radians in [-pi, pi], elementwise with
    broadcasting (``atan2``); the quadrant comes from both signs.
    >>> pnp.arctan2(pnp.array([1.0, 1.0, -1.0]), pnp.array([1.0, -1.0, -1.0]))
    Array([ 0.7853981,  2.3561945, -2.3561945], dtype=float32)
arctanh: Inverse hyperbolic tangent, elementwise (``atanh``); +-inf at +-1.
    >>> pnp.arctanh(pnp.array([-0.5, 0.0, 0.5]))
    Array([-0.54930615,  0.        ,  0.54930615], dtype=float32)
around:
    >>> pnp.round(pnp.array([0.5, 1.5, 2.675]), 1)
    Array([0.5, 1.5, 2.7], dtype=float32)
astype: ``x`` converted to ``dtype`` (floats to integers truncate toward zero).
    >>> pnp.astype(pnp.array([1.7, -2.7]), pnp.int32)
    Array([ 1, -2], dtype=int32)
cbrt: Real cube root, elementwise (negative for negative ``x``).
    >>> pnp.cbrt(pnp.array([-8.0, 1.0, 27.0]))
    Array([-2.       ,  1.       ,  2.9999998], dtype=float32)
ceil: Smallest integer-valued float not below ``x``, elementwise; integers and bools are
    returned unchanged.
    >>> pnp.ceil(pnp.array([-1.5, 0.0, 2.5]))
    Array([-1.,  0.,  3.], dtype=float32)
clip: ``a`` limited to [``min``, ``max``] elementwise (``a_min``/``a_max`` are the older
    names); either bound may be None.
    >>> pnp.clip(pnp.array([-2, 0, 3, 9]), 0, 5)
    Array([0, 0, 3, 5], dtype=int32)
copysign: ``|x1|`` with the sign of ``x2``, elementwise; the result is a float.
    >>> pnp.copysign(pnp.array([1.0, -2.0, 3.0]), -1.0)
    Array([-1., -2., -3.], dtype=float32)
cos: Cosine of ``x`` (radians), elementwise; integers become floats.
    >>> pnp.cos(pnp.array([0.0, 0.5, 1.0]))
    Array([1.        , 0.87758255, 0.5403023 ], dtype=float32)
cosh: Hyperbolic cosine, elementwise.
    >>> pnp.cosh(pnp.array([-1.5, 0.0, 2.5]))
    Array([2.3524096, 1.       , 6.13229  ], dtype=float32)
deg2rad: Degrees converted to radians, elementwise (``radians``).
    >>> pnp.deg2rad(pnp.array([0.0, 90.0, 180.0]))
    Array([0.       , 1.5707964, 3.1415927], dtype=float32)
degrees: Radians converted to degrees, elementwise (``rad2deg``).
    >>> pnp.degrees(pnp.array([0.0, pnp.pi / 2, pnp.pi]))
    Array([  0.,  90., 180.], dtype=float32)
divide: True division ``x1 / x2``, elementwise with broadcasting (``true_divide``); integers
    divide as floats.
    >>> pnp.divide(pnp.array([1, 2, 3]), 2)
    Array([0.5, 1. , 1.5], dtype=float32)
divmod: ``(floor_divide(x1, x2), mod(x1, x2))`` in one call, elementwise.
    >>> pnp.divmod(pnp.array([7, -7]), 3)
    (Array([ 2, -3], dtype=int32), Array([1, 2], dtype=int32))
equal: Whether ``x1 == x2``, elementwise with broadcasting; a bool array.
    >>> pnp.equal(pnp.array([1, 2, 3]), 2)
    Array([False,  True, False], dtype=bool)
exp: Exponential ``e**x``, elementwise; integers become floats.
    >>> pnp.exp(pnp.array([0.0, 0.5, 1.0]))
    Array([1.       , 1.6487212, 2.718282 ], dtype=float32)
exp2: ``2**x``, elementwise, as floats.
    >>> pnp.exp2(pnp.array([-1.0, 0.0, 3.0]))
    Array([0.5, 1. , 8. ], dtype=float32)
expm1: ``exp(x) - 1``, elementwise, accurate for small ``x``.
    >>> pnp.expm1(pnp.array([1e-6, 0.0, 1.0]))
    Array([1.0000005e-06, 0.0000000e+00, 1.7182819e+00], dtype=float32)
fabs:
    >>> pnp.fabs(pnp.array([-7, 0, 7]))
    Array([7., 0., 7.], dtype=float32)
trunc: ``x`` rounded toward zero, elementwise (``fix``); integers are returned unchanged.
    >>> pnp.trunc(pnp.array([-1.5, 0.0, 2.5]))
    Array([-1.,  0.,  2.], dtype=float32)
floor: Largest integer-valued float not above ``x``, elementwise; integers and bools are
    returned unchanged.
    >>> pnp.floor(pnp.array([-1.5, 0.0, 2.5]))
    Array([-2.,  0.,  2.], dtype=float32)
floor_divide: ``x1 // x2`` (rounded toward minus infinity), elementwise with broadcasting.
    >>> pnp.floor_divide(pnp.array([7, -7]), 2)
    Array([ 3, -4], dtype=int32)
fmax: Elementwise maximum that ignores NaN (NaN only where both are NaN).
    >>> pnp.fmax(pnp.array([1.0, pnp.nan, 3.0]), pnp.array([2.0, 0.0, pnp.nan]))
    Array([2., 0., 3.], dtype=float32)
fmin: Elementwise minimum that ignores NaN (NaN only where both are NaN).
    >>> pnp.fmin(pnp.array([1.0, pnp.nan, 3.0]), pnp.array([2.0, 0.0, pnp.nan]))
    Array([1., 0., 3.], dtype=float32)
fmod: Remainder of ``x1 / x2`` with the sign of ``x1`` (C ``fmod``), elementwise.
    >>> pnp.fmod(pnp.array([7, -7]), 3)
    Array([ 1, -1], dtype=int32)
greater: Whether ``x1 > x2``, elementwise with broadcasting; complex numbers compare by real
    part, then imaginary part.
    >>> pnp.greater(pnp.array([1, 2, 3]), 2)
    Array([False, False,  True], dtype=bool)
greater_equal: Whether ``x1 >= x2``, elementwise with broadcasting.
    >>> pnp.greater_equal(pnp.array([1, 2, 3]), 2)
    Array([False,  True,  True], dtype=bool)
heaviside: Heaviside step: 0 where ``x1 < 0``, 1 where ``x1 > 0`` and ``x2`` where ``x1 == 0``.
    >>> pnp.heaviside(pnp.array([-1.0, 0.0, 2.0]), 0.5)
    Array([0. , 0.5, 1. ], dtype=float32)
hypot: ``sqrt(x1**2 + x2**2)`` without overflow, elementwise.
    >>> pnp.hypot(pnp.array([3.0, 5.0]), pnp.array([4.0, 12.0]))
    Array([ 5., 13.], dtype=float32)
less: Whether ``x1 < x2``, elementwise with broadcasting; complex numbers compare by real part,
    then imaginary part.
    >>> pnp.less(pnp.array([1, 2, 3]), 2)
    Array([ True, False, False], dtype=bool)
less_equal: Whether ``x1 <= x2``, elementwise with broadcasting.
    >>> pnp.less_equal(pnp.array([1, 2, 3]), 2)
    Array([ True,  True, False], dtype=bool)
log: Natural logarithm, elementwise; -inf at 0, NaN below.
    >>> pnp.log(pnp.array([1.0, pnp.e, 0.0]))
    Array([  0.,   1., -inf], dtype=float32)
log10: Base-10 logarithm, elementwise.
    >>> pnp.log10(pnp.array([1.0, 10.0, 1000.0]))
    Array([0., 1., 3.], dtype=float32)
log1p: ``log(1 + x)``, elementwise, accurate for small ``x``.
    >>> pnp.log1p(pnp.array([1e-6, 0.0, 1.0]))
    Array([9.999995e-07, 0.000000e+00, 6.931472e-01], dtype=float32)
log2: Base-2 logarithm, elementwise.
    >>> pnp.log2(pnp.array([1.0, 2.0, 8.0]))
    Array([0., 1., 3.], dtype=float32)
logaddexp: ``log(exp(x1) + exp(x2))`` without overflow, elementwise.
    >>> pnp.logaddexp(pnp.array([0.0, 1000.0]), pnp.array([0.0, 1000.0]))
    Array([6.9314718e-01, 1.0006932e+03], dtype=float32)
logaddexp2: ``log2(2**x1 + 2**x2)`` without overflow, elementwise.
    >>> pnp.logaddexp2(pnp.array([0.0, 1.0]), pnp.array([0.0, 3.0]))
    Array([1.      , 3.321928], dtype=float32)
maximum: Elementwise maximum with broadcasting; NaN if either is NaN (see ``fmax``).
    >>> pnp.maximum(pnp.array([1, 5, 3]), pnp.array([4, 2, 3]))
    Array([4, 5, 3], dtype=int32)
minimum: Elementwise minimum with broadcasting; NaN if either is NaN (see ``fmin``).
    >>> pnp.minimum(pnp.array([1, 5, 3]), pnp.array([4, 2, 3]))
    Array([1, 2, 3], dtype=int32)
mod: Remainder of floor division, with the sign of ``x2`` (Python ``%``), elementwise
    (``remainder``).
    >>> pnp.mod(pnp.array([7, -7]), 3)
    Array([1, 2], dtype=int32)
multiply: Product of ``x1`` and ``x2``, elementwise with broadcasting.
    >>> pnp.multiply(pnp.array([1, 2, 3]), pnp.array([4, 5, 6]))
    Array([ 4, 10, 18], dtype=int32)
nan_to_num: ``x`` with NaN replaced by ``nan`` (0.0) and +-inf by ``posinf``/``neginf`` (the
    largest finite values of the dtype by default).
    >>> pnp.nan_to_num(pnp.array([pnp.nan, pnp.inf, -pnp.inf, 1.0]))
    Array([ 0.0000000e+00,  3.4028235e+38, -3.4028235e+38,  1.0000000e+00],      dtype=float32)
negative: ``-x``, elementwise.
    >>> pnp.negative(pnp.array([-7, 0, 7]))
    Array([ 7,  0, -7], dtype=int32)
nextafter: The next float after ``x1`` toward ``x2``, elementwise.
    >>> pnp.nextafter(pnp.array([1.0, 1.0]), pnp.array([2.0, 0.0])) - 1.0
    Array([ 1.1920929e-07, -5.9604645e-08], dtype=float32)
not_equal: Whether ``x1 != x2``, elementwise with broadcasting; a bool array.
    >>> pnp.not_equal(pnp.array([1, 2, 3]), 2)
    Array([ True, False,  True], dtype=bool)
positive: ``+x``: a copy of ``x`` as an array (for numbers only).
    >>> pnp.positive(pnp.array([-7, 0, 7]))
    Array([-7,  0,  7], dtype=int32)
reciprocal: ``1 / x``, elementwise, keeping the dtype (integer reciprocals truncate).
    >>> pnp.reciprocal(pnp.array([1.0, 2.0, 4.0]))
    Array([1.  , 0.5 , 0.25], dtype=float32)
rint: ``x`` rounded to the nearest integer, halves to even, elementwise; integers are returned
    unchanged.
    >>> pnp.rint(pnp.array([0.5, 1.5, -2.5, 2.7]))
    Array([ 0.,  2., -2.,  3.], dtype=float32)
sign: -1, 0 or 1 by the sign of ``x``, elementwise (NaN stays NaN; ``x / |x|`` for complex).
    >>> pnp.sign(pnp.array([-1.5, 0.0, 2.5]))
    Array([-1.,  0.,  1.], dtype=float32)
sin: Sine of ``x`` (radians), elementwise; integers become floats.
    >>> pnp.sin(pnp.array([0.0, 0.5, 1.0]))
    Array([0.        , 0.47942555, 0.841471  ], dtype=float32)
sinc: Normalized sinc ``sin(pi x) / (pi x)``, elementwise, 1 at 0.
    >>> pnp.sinc(pnp.array([0.0, 0.5, 1.0]))
    Array([ 1.0000000e+00,  6.3661975e-01, -2.7827534e-08], dtype=float32)
sinh: Hyperbolic sine, elementwise.
    >>> pnp.sinh(pnp.array([-1.5, 0.0, 2.5]))
    Array([-2.1292794,  0.       ,  6.0502043], dtype=float32)
sqrt: Square root, elementwise; NaN for negative reals.
    >>> pnp.sqrt(pnp.array([0.0, 4.0, 2.0]))
    Array([0.       , 2.       , 1.4142135], dtype=float32)
square: ``x * x``, elementwise, keeping the dtype.
    >>> pnp.square(pnp.array([-7, 0, 7]))
    Array([49,  0, 49], dtype=int32)
subtract: Difference ``x1 - x2``, elementwise with broadcasting.
    >>> pnp.subtract(pnp.array([1, 2, 3]), 1)
    Array([0, 1, 2], dtype=int32)
tan: Tangent of ``x`` (radians), elementwise.
    >>> pnp.tan(pnp.array([0.0, 0.5, 1.0]))
    Array([0.       , 0.5463025, 1.5574077], dtype=float32)
tanh: Hyperbolic tangent, elementwise.
    >>> pnp.tanh(pnp.array([-1.5, 0.0, 2.5]))
    Array([-0.9051482,  0.       ,  0.9866143], dtype=float32)
where:
    >>> pnp.where(pnp.array([True, False, True]), pnp.array([1, 2, 3]), 0)
    Array([1, 0, 3], dtype=int32)
    >>> pnp.where(pnp.array([0, 3, 0, 5]))
    (Array([1, 3], dtype=int32),)
""")
