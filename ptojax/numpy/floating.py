"""Floating-point anatomy and one special function: ``frexp``, ``ldexp``, ``modf``,
``spacing``, ``i0``.

There is no bitcast primitive, so exponents are found arithmetically: an estimate from
``log2`` corrected by one exact comparison, and powers of two built exactly by multiplying
the constants ``2**(±2**j)`` selected by the bits of the exponent (a product of powers of two
is exact until it leaves the dtype's range, where it rounds as ``2.0 ** k`` does).
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import DtypeError
from ptojax.numpy._constants import strong
from ptojax.numpy._promote import (asarray, broadcast_shapes, broadcast_to_shape, convert,
                                   promote_args)
from ptojax.numpy.math import copysign, isinf, isnan, where
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def _compute_dtype(dtype):
    """Narrow floats are taken apart in float32, where their subnormals are normal."""
    return dtypes.float32 if dtype.itemsize < 4 else dtype


def _exponent_limit(dtype) -> int:
    """An exponent bound beyond which ``m * 2**k`` (0.5 <= m < 1) is 0 or inf anyway."""
    info = dtypes.finfo(dtype)
    return int(info.maxexp - info.minexp + info.nmant + 2)


def _pow2(exponent: int, dtype) -> float:
    """``2.0 ** exponent`` rounded to ``dtype``: inf above its range, 0 below half its
    smallest subnormal."""
    info = dtypes.finfo(dtype)
    if exponent >= info.maxexp:
        return math.inf
    return 0.0 if exponent < info.minexp - info.nmant else 2.0 ** exponent


def _constant(value, dtype, shape):
    return lax.broadcast_in_dim(np.asarray(value, dtype), tuple(shape), ())


def exact_pow2(k, dtype):
    """``2.0 ** k`` in ``dtype`` for an int32 array ``k``, exactly (0 or inf out of range)."""
    limit = _exponent_limit(dtype)
    k = lax.clamp(-limit, k, limit)
    magnitude, negative = lax.abs(k), lax.lt(k, 0)
    out = lax.broadcast_in_dim(np.asarray(1, dtype), k.shape, ())
    for j in range(limit.bit_length()):
        step = 2 ** j
        factor = lax.select(negative, _constant(_pow2(-step, dtype), dtype, k.shape),
                            _constant(_pow2(step, dtype), dtype, k.shape))
        bit = lax.ne(lax.bitwise_and(magnitude, step), 0)
        out = lax.select(bit, lax.mul(out, factor), out)
    return out


def _float_operand(name, x):
    (x,) = promote_args(name, x, kind="float")
    return x


def frexp(x, /):
    """``(mantissa, exponent)`` with ``x == mantissa * 2**exponent``, ``0.5 <= |mantissa| <
    1`` and an int32 exponent; zeros, infinities and NaNs give ``(x, 0)``."""
    x = _float_operand("frexp", x)
    dtype, compute = x.dtype, _compute_dtype(x.dtype)
    info = dtypes.finfo(compute)
    special = lax.bitwise_or(lax.bitwise_or(isinf(x), isnan(x)), lax.eq(x, 0))
    ones = lax.broadcast_in_dim(np.asarray(1, compute), tuple(x.shape), ())
    xc = lax.select(special, ones, lax.convert_element_type(x, compute))  # no NaN paths
    a = lax.mul(xc, lax.sign(xc))  # |x| whose derivative is sign(x)
    # subnormals first scaled into the normal range, where log2 is reliable
    shift = info.nmant + 1
    tiny = lax.lt(a, float(info.tiny))
    a = lax.select(tiny, lax.mul(a, float(2 ** shift)), a)
    estimate = lax.add(lax.convert_element_type(
        lax.floor(lax.div(lax.log(a), float(np.log(2)))), dtypes.int32), 1)
    m = lax.mul(a, exact_pow2(lax.neg(estimate), compute))
    too_big, too_small = lax.ge(m, 1.0), lax.lt(m, 0.5)
    m = lax.select(too_big, lax.mul(m, 0.5), lax.select(too_small, lax.mul(m, 2.0), m))
    e = lax.add(estimate, lax.sub(lax.convert_element_type(too_big, dtypes.int32),
                                  lax.convert_element_type(too_small, dtypes.int32)))
    zero = lax.broadcast_in_dim(np.int32(0), e.shape, ())
    e = lax.sub(e, lax.select(tiny, lax.add(zero, shift), zero))
    mantissa = lax.convert_element_type(lax.mul(m, lax.sign(xc)), dtype)
    return lax.select(special, x, mantissa), lax.select(special, zero, e)


def ldexp(x1, x2, /):
    """``x1 * 2**x2`` for an integer ``x2``, without intermediate overflow (JAX's algorithm:
    split ``x1`` with frexp, add the exponents, scale once)."""
    x2 = asarray(x2, op="ldexp")
    if not (dtypes.is_integer(x2.dtype) or dtypes.is_bool(x2.dtype)):
        raise DtypeError(f"ldexp: the exponent x2 must be an integer array, got {x2.aval}",
                         user_frame())
    x1 = _float_operand("ldexp", x1)
    shape = broadcast_shapes("ldexp", tuple(x1.shape), tuple(x2.shape))
    x1 = broadcast_to_shape(x1, shape, "ldexp")
    x2 = broadcast_to_shape(convert(x2, dtypes.int32), shape, "ldexp")
    m, e = frexp(x1)
    limit = _exponent_limit(x1.dtype)
    e = lax.add(e, lax.clamp(-limit, x2, limit))
    positive = lax.gt(e, 0)
    m = lax.select(positive, lax.mul(m, 2.0), m)
    e = lax.select(positive, lax.sub(e, 1), e)
    scaled = lax.mul(m, exact_pow2(e, x1.dtype))
    keep = lax.bitwise_or(isinf(x1), lax.eq(x1, 0))
    return lax.select(keep, x1, scaled)


def modf(x, /, out=None):
    """``(fractional part, integral part)``, both with the sign of ``x``."""
    x = _float_operand("modf", x)
    whole = lax.select(lax.ge(x, 0), lax.floor(x), lax.ceil(x))
    return lax.sub(x, whole), whole


def spacing(x, /):
    """The distance from ``x`` to the next representable value away from zero (float16:
    towards +inf, as NumPy); strongly typed, as JAX's (computed on the bits)."""
    x = strong(_float_operand("spacing", x))
    if x.dtype == dtypes.float16:
        inf = lax.broadcast_in_dim(np.asarray(np.inf, x.dtype), x.shape, ())
        return lax.sub(lax.nextafter(x, inf), x)
    step = lax.sub(lax.nextafter(x, copysign(float("inf"), x)), x)
    tiny = float(dtypes.finfo(x.dtype).smallest_subnormal)
    return where(lax.eq(step, 0), copysign(tiny, x), step)


# i0 -------------------------------------------------------------------------------------------
# Chebyshev coefficients (first one halved) of exp(-x) I0(x) on 0 <= x <= 8 in t = x/4 - 1,
# and of sqrt(x) exp(-x) I0(x) on x >= 8 in t = 16/x - 1; computed with mpmath (40 digits,
# 80-point Chebyshev-Gauss quadrature), terms below 1e-18 dropped.
_I0E_SMALL = (
    0.33839763720473803, -0.3046826723431984, 0.17162090152220877, -0.09490109704804764,
    0.04930528423967071, -0.02373741480589947, 0.010546460394594998, -0.004324309995050576,
    0.0016394756169413357, -0.0005763755745385824, 0.00018850288509584165,
    -5.754195010082104e-05, 1.6448448070728896e-05, -4.4167383584587505e-06,
    1.1173875391201037e-06, -2.670793853940612e-07, 6.046995022541919e-08,
    -1.300025009986248e-08, 2.6598237246823866e-09, -5.189795601635263e-10,
    9.675809035373237e-11, -1.726826291441556e-11, 2.95505266312964e-12,
    -4.856446783111929e-13, 7.676185498604936e-14, -1.1685332877993451e-14,
    1.715391285555133e-15, -2.431279846547955e-16, 3.3307945188222384e-17,
    -4.4153416464793395e-18)
_I0E_LARGE = (
    0.4022452055070544, 0.0033691164782556943, 6.889758346916825e-05, 2.8913705208347567e-06,
    2.0489185894690638e-07, 2.266668990498178e-08, 3.3962320257083865e-09,
    4.94060238822497e-10, 1.1889147107846439e-11, -3.1499165279632416e-11,
    -1.3215811840447713e-11, -1.7941785315068062e-12, 7.180124451383666e-13,
    3.8527783827421426e-13, 1.54008621752141e-14, -4.150569347287222e-14,
    -9.554846698828307e-15, 3.8116806693526224e-15, 1.7725601330565263e-15,
    -3.425485619677219e-16, -2.8276239805165836e-16, 3.461222867697461e-17,
    4.46562142029676e-17, -4.830504485944182e-18, -7.233180487874754e-18,
    9.921475412173699e-19, 1.193650890845982e-18)


def _chebyshev(coefficients, t, eps):
    """Clenshaw's sum of the series, cut where the terms fall below the dtype's precision."""
    terms = [c for c in coefficients]
    while len(terms) > 1 and abs(terms[-1]) < eps / 16:
        terms.pop()
    b1 = b2 = lax.mul(t, 0.0)
    two_t = lax.mul(t, 2.0)
    for c in reversed(terms[1:]):
        b1, b2 = lax.add(lax.sub(lax.mul(two_t, b1), b2), c), b1
    return lax.add(lax.sub(lax.mul(t, b1), b2), terms[0])


def i0(x):
    """The modified Bessel function of the first kind of order 0 (narrow floats computed in
    float32), weak of a weak ``x`` (as an elementwise function). Its derivative at 0 is
    exactly 0."""
    x = _float_operand("i0", x)
    dtype, compute = x.dtype, _compute_dtype(x.dtype)
    xc = lax.convert_element_type(x, compute)
    a = lax.mul(xc, lax.sign(xc))  # |x| with derivative sign(x): 0 at 0, as I0 is even
    eps = float(dtypes.finfo(compute).eps)
    small = _chebyshev(_I0E_SMALL, lax.sub(lax.div(lax.min(a, 8.0), 4.0), 1.0), eps)
    large_x = lax.max(a, 8.0)
    large = lax.div(_chebyshev(_I0E_LARGE, lax.sub(lax.div(16.0, large_x), 1.0), eps),
                    lax.sqrt(large_x))
    scaled = lax.select(lax.le(a, 8.0), small, large)
    return lax.convert_element_type(lax.mul(lax.exp(a), scaled), dtype, weak_type=x.weak_type)


__all__ = ["frexp", "ldexp", "modf", "spacing", "i0"]


_add_examples(globals(), """
frexp:
    >>> pnp.frexp(pnp.array([8.0, 0.75]))
    (Array([0.5 , 0.75], dtype=float32), Array([4, 0], dtype=int32))
i0:
    >>> pnp.i0(pnp.array([0.0, 1.0]))
    Array([1.0000001, 1.2660661], dtype=float32)
ldexp:
    >>> pnp.ldexp(pnp.array([1.0, 0.75]), pnp.array([3, 1]))
    Array([8. , 1.5], dtype=float32)
modf:
    >>> pnp.modf(pnp.array([2.5, -1.25]))
    (Array([ 0.5 , -0.25], dtype=float32), Array([ 2., -1.], dtype=float32))
spacing:
    >>> pnp.spacing(pnp.array([1.0], dtype=pnp.float32))
    Array([1.1920929e-07], dtype=float32)
""")
