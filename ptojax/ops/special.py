"""Special functions — erf, erfc, erf_inv, lgamma, digamma — with every fact.

The numpy impls compute in float64 (series, continued fractions, Lanczos) and round to the
operand's dtype. PTO has no instruction for these, so erfc and lgamma tile as *expansions*:
float32 formulas in tileable ops (exp, log, division, selects), substituted before tiling.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.ops import references as ref, tile_forms
from ptojax.ops.arithmetic import NOT_TILED, abs, add, div, mul, neg, sub, unary_jvp
from ptojax.ops.convert import convert_element_type
from ptojax.ops.elementwise import elementwise, lax_function
from ptojax.ops.logic import eq, ge, lt, select
from ptojax.ops.transcendental import exp, log, sin

SQRT_PI = math.sqrt(math.pi)
TWO_OVER_SQRT_PI = 2.0 / SQRT_PI


# float64 numpy impls ---------------------------------------------------------------------------
def _erfc_cf(a):
    """erfc of ``a >= 2`` by its continued fraction, evaluated from the tail."""
    k = a.copy()
    for n in range(60, 0, -1):
        k = a + (n / 2.0) / k
    return np.exp(-a * a) / (SQRT_PI * k)


def _erf_f64(x):
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    small = a < 3.0
    out = np.empty_like(x)
    # |x| < 3: erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n 2^n x^(2n+1) / (2n+1)!!, all terms
    # positive, so no cancellation.
    xs = a[small]
    term = xs.copy()
    total = xs.copy()
    two_x2 = 2.0 * xs * xs
    for n in range(1, 75):
        term = term * two_x2 / (2 * n + 1)
        total += term
    out[small] = TWO_OVER_SQRT_PI * np.exp(-xs * xs) * total
    out[~small] = 1.0 - _erfc_cf(a[~small])
    out[np.isnan(x)] = np.nan
    return np.copysign(out, x)


def _erfc_f64(x):
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    near = a < 2.0
    c = np.empty_like(x)
    c[near] = 1.0 - _erf_f64(a[near])
    c[~near] = _erfc_cf(a[~near])
    c = np.where(x < 0, 2.0 - c, c)
    return np.where(np.isnan(x), np.nan, c)


def _erf_inv_f64(y):
    y = np.asarray(y, np.float64)
    # Giles' single-precision approximation as the starting point, then Newton on erf.
    w = -np.log((1.0 - y) * (1.0 + y))
    central = w < 5.0
    wc = np.where(central, w - 2.5, np.sqrt(np.maximum(w, 5.0)) - 3.0)
    pc = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                     0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                     1.50140941], wc)
    pt = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                     0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                     2.83297682], wc)
    x = np.where(central, pc, pt) * y
    finite = np.abs(y) < 1.0
    for _ in range(3):
        xf = np.where(finite, x, 0.0)
        step = (_erf_f64(xf) - y) / (TWO_OVER_SQRT_PI * np.exp(-xf * xf))
        x = np.where(finite, xf - step, x)
    x = np.where(y == 1.0, np.inf, np.where(y == -1.0, -np.inf, x))
    return np.where(np.abs(y) > 1.0, np.nan, x)


# Lanczos (g = 7, n = 9): |error| < 1e-15 relative for the series
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)


def _lgamma_positive(x):
    """lgamma for x >= 0.5."""
    y = x - 1.0
    series = _LANCZOS[0] + sum(c / (y + i) for i, c in enumerate(_LANCZOS[1:], 1))
    t = y + 7.5
    return 0.5 * math.log(2 * math.pi) + (y + 0.5) * np.log(t) - t + np.log(series)


def _lgamma_f64(x):
    x = np.asarray(x, np.float64)
    right = x >= 0.5
    xr = np.where(right, x, 1.0 - x)
    lg = _lgamma_positive(np.where(np.isfinite(xr), xr, 1.0))
    # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
    sin_pi = np.abs(np.sin(np.pi * (x - np.round(x))))   # exactly 0 at the integers
    out = np.where(right, lg, np.log(np.pi) - np.log(sin_pi) - lg)
    out = np.where(np.isinf(x), np.inf, out)
    return np.where(np.isnan(x), np.nan, out)


def _digamma_positive(x):
    """digamma for x > 0: recurrence up to x >= 6, then the asymptotic series."""
    shift = np.zeros_like(x)
    for _ in range(6):
        small = x < 6.0
        shift = np.where(small, shift - 1.0 / x, shift)
        x = np.where(small, x + 1.0, x)
    r = 1.0 / (x * x)
    tail = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r * (1 / 132)))))
    return shift + np.log(x) - 0.5 / x - tail


def _digamma_f64(x):
    x = np.asarray(x, np.float64)
    right = x > 0
    pos = _digamma_positive(np.where(right, x, 1.0 - x))
    # reflection: digamma(x) = digamma(1 - x) - pi / tan(pi x)
    out = np.where(right, pos, pos - np.pi / np.tan(np.pi * x))
    pole = (x <= 0) & (x == np.floor(x))
    out = np.where(pole | (x == -np.inf), np.nan, out)
    return np.where(x == np.inf, np.inf, out)


def _in_dtype(f64_fn):
    def impl(x):
        x = np.asarray(x)
        with np.errstate(all="ignore"):
            return f64_fn(x).astype(x.dtype)
    return impl


# tile expansions: float32 formulas in tileable primitives ---------------------------------------
EXPANDED_DTYPES = ("float32", "float16", "bfloat16")


def _expansion_check(eqn):
    dtype = eqn.inputs[0].type.dtype
    if dtype.name not in EXPANDED_DTYPES:
        return f"{eqn.prim.name} of {dtypes.short_name(dtype)} has no tile form (its tile " \
               f"expansion computes in float32)"
    return None


def _horner(t, coefficients):
    out = coefficients[0]
    for c in coefficients[1:]:
        out = add(mul(out, t), c)
    return out


# Numerical Recipes' erfcc: t exp(-z^2 + P(t)), t = 1/(1 + z/2); fractional error < 1.2e-7
_ERFC = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
         0.09678418, 0.37409196, 1.00002368, -1.26551223)


def _erfc_expansion(x):
    w = convert_element_type(x, dtypes.float32)
    z = abs(w)
    t = div(1.0, add(mul(z, 0.5), 1.0))
    # exp(-z^2) as exp(-zh^2) exp(-(z - zh)(z + zh)) with zh = z truncated to 1/16: zh^2 is
    # exact, so the tails keep their relative accuracy
    zh = div(convert_element_type(convert_element_type(mul(z, 16.0), dtypes.int32),
                                  dtypes.float32), 16.0)
    tail = sub(_horner(t, _ERFC), mul(sub(z, zh), add(z, zh)))
    ans = mul(mul(t, exp(neg(mul(zh, zh)))), exp(tail))
    return convert_element_type(select(ge(w, 0.0), ans, sub(2.0, ans)), x.dtype)


# Numerical Recipes' gammln (Lanczos g = 5): small cancellation, so float32-friendly
_GAMMLN = (76.18009172947146, -86.50532032941677, 24.01409824083091, -1.231739572450155,
           0.1208650973866179e-2, -0.5395239384953e-5)
# sin(s) for |s| <= pi/2: odd Taylor terms through s^15 (truncation < 1e-9)
_SIN = tuple(-1.0 / math.factorial(2 * k + 1) if k % 2 else 1.0 / math.factorial(2 * k + 1)
             for k in range(7, -1, -1))


def _lgamma_from_half(x):
    """lgamma(x) for x >= 0.5 (float32)."""
    tmp = add(x, 5.5)
    tmp = sub(tmp, mul(add(x, 0.5), log(tmp)))
    series = 1.000000000190015
    for j, c in enumerate(_GAMMLN, 1):
        series = add(series, div(c, add(x, float(j))))
    return sub(log(div(mul(series, 2.5066282746310005), x)), tmp)


def _abs_sin_pi(x):
    """|sin(pi x)| by reduction to the nearest integer (float -> int32 truncation)."""
    half = select(lt(x, 0.0), -0.5, 0.5)
    k = convert_element_type(convert_element_type(add(x, half), dtypes.int32), dtypes.float32)
    s = mul(sub(x, k), math.pi)
    return abs(mul(s, _horner(mul(s, s), _SIN)))


def _lgamma_expansion(x):
    w = convert_element_type(x, dtypes.float32)
    right = _lgamma_from_half(w)
    left = sub(sub(math.log(math.pi), log(_abs_sin_pi(w))), _lgamma_from_half(sub(1.0, w)))
    out = select(lt(w, 0.5), left, right)
    # x = +inf, and x <= -2^23 (every such float is an integer: a pole)
    out = select(eq(w, math.inf), w, out)
    out = select(lt(w, -8388608.0), abs(w), out)
    return convert_element_type(out, x.dtype)


# trigamma (digamma's derivative) as a composition ---------------------------------------------
def _trigamma_positive(x):
    """trigamma for x > 0: recurrence up to x >= 6, then the asymptotic series."""
    total = 0.0
    for _ in range(6):
        small = lt(x, 6.0)
        total = add(total, select(small, div(1.0, mul(x, x)), 0.0))
        x = select(small, add(x, 1.0), x)
    r = div(1.0, mul(x, x))
    tail = mul(r, _horner(r, (-1 / 30, 1 / 42, -1 / 30, 1 / 6)))
    return add(total, add(div(1.0, x), add(mul(r, 0.5), div(tail, x))))


def _trigamma(x):
    """polygamma(1, x), with the reflection trigamma(x) = pi^2/sin^2(pi x) - trigamma(1-x)."""
    right = lt(0.0, x)
    pos = _trigamma_positive(select(right, x, sub(1.0, x)))
    s = sin(mul(x, math.pi))
    return select(right, pos, sub(div(math.pi ** 2, mul(s, s)), pos))


# the primitives --------------------------------------------------------------------------------
def _special(name, f64_fn, **facts):
    return elementwise(name, _in_dtype(f64_fn), "float", nargs=1,
                       reference=ref.lax_op(name), **facts)


erf_p = _special("erf", _erf_f64, tile=NOT_TILED)
erfc_p = _special("erfc", _erfc_f64, host="erfc_f32({0})",
                  tile=tile_forms.expansion(_erfc_expansion, _expansion_check))
erf_inv_p = _special("erf_inv", _erf_inv_f64, tile=NOT_TILED)
lgamma_p = _special("lgamma", _lgamma_f64, host="lgamma_f32({0})",
                    tile=tile_forms.expansion(_lgamma_expansion, _expansion_check))
digamma_p = _special("digamma", _digamma_f64, tile=NOT_TILED)
erf, erfc, erf_inv, lgamma, digamma = map(lax_function, (erf_p, erfc_p, erf_inv_p, lgamma_p,
                                                         digamma_p))

erf_p.define(jvp=unary_jvp(erf_p, lambda x, o: mul(exp(neg(mul(x, x))), TWO_OVER_SQRT_PI)))
erfc_p.define(jvp=unary_jvp(erfc_p, lambda x, o: mul(exp(neg(mul(x, x))), -TWO_OVER_SQRT_PI)))
erf_inv_p.define(jvp=unary_jvp(erf_inv_p, lambda x, o: mul(exp(mul(o, o)), SQRT_PI / 2)))
lgamma_p.define(jvp=unary_jvp(lgamma_p, lambda x, o: digamma(x)))
digamma_p.define(jvp=unary_jvp(digamma_p, lambda x, o: _trigamma(x)))
