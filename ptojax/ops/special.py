"""Special functions — erf, erfc, erf_inv, lgamma, digamma, the regularized incomplete gamma
(igamma, igammac, igamma_grad_a) and beta (betainc) functions, the exponentially scaled Bessel
functions bessel_i0e and bessel_i1e — with every fact.

The numpy impls compute in float64 (series, continued fractions, Lanczos) and round to the
operand's dtype. PTO has no instruction for these, so erfc and lgamma tile as *expansions*:
float32 formulas in tileable ops (exp, log, division, selects), substituted before tiling.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.ops import references as ref, tile_forms
from ptojax.errors import UnsupportedError
from ptojax.ops.arithmetic import (NOT_TILED, abs, add, binary_jvp, div, mul, neg, sign, sub,
                                   times, unary_jvp)
from ptojax.ops.broadcast import fit_shape
from ptojax.ops.convert import convert_element_type
from ptojax.ops.elementwise import broadcast_ones, elementwise, lax_function, operands
from ptojax.ops.logic import eq, ge, le, lt, select
from ptojax.ops.tangents import Zero, is_zero
from ptojax.ops.transcendental import exp, log, log1p, sin, sqrt
from ptojax.trace import Unsupported
from ptojax.public import add_examples as _add_examples

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


_libm_erf = np.frompyfunc(math.erf, 1, 1)


# Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision:
# erf_inv(y) = y P(w), w = -log((1 - y)(1 + y)), P a polynomial in w - 2.5 for w < 5 (central)
# and in sqrt(w) - 3 beyond (tails); XLA computes float32 erf_inv this way.
_GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
               0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erf_inv_f64(y):
    y = np.asarray(y, np.float64)
    # Giles' single-precision approximation as the starting point, then Newton on erf.
    w = -np.log((1.0 - y) * (1.0 + y))
    central = w < 5.0
    wc = np.where(central, w - 2.5, np.sqrt(np.maximum(w, 5.0)) - 3.0)
    pc = np.polyval(_GILES_CENTRAL, wc)
    pt = np.polyval(_GILES_TAIL, wc)
    x = np.where(central, pc, pt) * y
    finite = np.abs(y) < 1.0
    # Giles is good to ~1e-7; Newton doubles the digits: two steps reach float64. The steps
    # use libm's erf elementwise: the series of _erf_f64 (75 terms) made random.normal's
    # erf_inv the costliest equation of a small training step (8x slower on 320 values).
    for _ in range(2):
        xf = np.where(finite, x, 0.0)
        erf_x = np.asarray(_libm_erf(xf), np.float64)
        step = (erf_x - y) / (TWO_OVER_SQRT_PI * np.exp(-xf * xf))
        x = np.where(finite, xf - step, x)
    x = np.where(y == 1.0, np.inf, np.where(y == -1.0, -np.inf, x))
    return np.where(np.abs(y) > 1.0, np.nan, x)


# Giles' double-precision erf_inv (the same paper; XLA's float64 ErfInv): y P(w) with P of
# degree 22 in w - 3.125 for w < 6.25, 18 in sqrt(w) - 3.25 for w < 16, 16 in sqrt(w) - 5
# beyond; highest power first. Its error is far below a float32 ulp.
_GILES_DP_CENTRAL = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
_GILES_DP_MIDDLE = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
_GILES_DP_TAIL = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)


def _horner_in_place(coeffs, t):
    """The polynomial ``coeffs`` (highest power first) at ``t``, which it overwrites."""
    p = np.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        p *= t
        p += c
    return p


def _erf_inv_giles_dp(y):
    """erf_inv of float64 ``y`` by Giles' double-precision polynomials, with no Newton step:
    enough for operands of 32 bits or fewer (within 3e-11 relative of the Newton-refined
    impl over float32 operands: rounded to float32, the same value on every 331st float32
    bit pattern in (-1, 1)), and 15x cheaper than Newton with libm erf per element. The central
    polynomial runs on every element in place; the few beyond it (|y| > 0.999) are redone."""
    shape, y = y.shape, y.ravel()
    w = 1.0 - y
    w *= 1.0 + y
    np.log(w, out=w)
    np.negative(w, out=w)
    rest = np.flatnonzero(~(w < 6.25))
    wr = w[rest]
    w -= 3.125
    p = _horner_in_place(_GILES_DP_CENTRAL, w)
    if rest.size:
        root = np.sqrt(wr)
        p[rest] = np.where(root < 4.0, _horner_in_place(_GILES_DP_MIDDLE, root - 3.25),
                           _horner_in_place(_GILES_DP_TAIL, root - 5.0))
    p *= y
    outside = np.flatnonzero(~(np.abs(y) < 1.0))
    if outside.size:   # +-inf at +-1, NaN beyond and for NaN
        yo = y[outside]
        p[outside] = np.where(np.abs(yo) == 1.0, yo * np.inf, np.nan)
    return p.reshape(shape)


def _erf_inv_impl(y):
    """erf_inv in the operand's dtype: Newton-refined float64 for float64 operands, Giles'
    double-precision polynomials for narrower ones (the same value once rounded)."""
    dtype = np.asarray(y).dtype
    with np.errstate(all="ignore"):
        y64 = np.asarray(y, np.float64)
        f = _erf_inv_f64 if dtype.itemsize > 4 else _erf_inv_giles_dp
        return np.asarray(f(y64)).astype(dtype)


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


# regularized incomplete gamma P(a, x), Q(a, x) and dP/da: the series of P for x < 1 or
# x <= a, else the continued fraction of Q (Cephes' igam/igamc), each carrying its derivative
# in a alongside (forward mode), in float64
_EPS = float(np.finfo(np.float64).eps)
_CONVERGED = 16 * _EPS   # a value's successive terms / convergents agree to a few ulp
# a derivative in ``a`` sums cancelling terms: its convergents stall at tens of ulp of noise
# (waiting for 16 ulp ran all _MAX_TERMS, 70 ms for 50 elements), so it converges at 1024 ulp
_DERIVATIVE_CONVERGED = 1024 * _EPS
_MAX_TERMS = 2000


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a))."""
    return a * np.log(x) - x - _lgamma_f64(a)


def _p_series(a, x, derivative):
    """(P, dP/da) by P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1)...(a+n)); dP/da
    converged only if ``derivative``."""
    r, term, total = a.copy(), np.ones_like(a), np.ones_like(a)
    dterm, dtotal = np.zeros_like(a), np.zeros_like(a)
    for _ in range(_MAX_TERMS):
        r = r + 1.0
        dterm = dterm * (x / r) - term * x / (r * r)
        term = term * (x / r)
        total, dtotal = total + term, dtotal + dterm
        if np.all(term <= _CONVERGED * total) and (not derivative or np.all(
                np.abs(dterm) <= _DERIVATIVE_CONVERGED * np.abs(dtotal))):
            break
    scale = np.exp(_log_prefactor(a, x)) / a
    dlog = np.log(x) - _digamma_f64(a + 1.0)
    return total * scale, scale * (total * dlog + dtotal)


def _q_continued_fraction(a, x, derivative):
    """(Q, dQ/da) by the continued fraction of Q = x^a e^-x / Gamma(a) * K, evaluated with
    its convergents p/q (rescaled against overflow) and their derivatives in a (converged
    only if ``derivative``)."""
    y, z, c = 1.0 - a, x + 2.0 - a, np.zeros_like(a)
    p2, q2, p1, q1 = np.ones_like(a), x.copy(), x + 1.0, (x + 2.0 - a) * x
    dp2, dq2, dp1, dq1 = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a), -x
    k = p1 / q1
    dk = (dp1 - k * dq1) / q1
    for _ in range(_MAX_TERMS):
        c, y, z = c + 1.0, y + 1.0, z + 2.0
        yc = y * c
        p, q = p1 * z - p2 * yc, q1 * z - q2 * yc
        dp, dq = dp1 * z - p1 - dp2 * yc + p2 * c, dq1 * z - q1 - dq2 * yc + q2 * c
        ok = q != 0
        k_new = np.where(ok, p / np.where(ok, q, 1.0), k)
        dk_new = np.where(ok, (dp - k_new * dq) / np.where(ok, q, 1.0), dk)
        done = np.all(np.abs(k_new - k) <= _CONVERGED * np.abs(k_new)) and (
            not derivative or np.all(np.abs(dk_new - dk) <= _DERIVATIVE_CONVERGED * np.abs(dk_new)))
        k, dk = k_new, dk_new
        p2, q2, p1, q1, dp2, dq2, dp1, dq1 = p1, q1, p, q, dp1, dq1, dp, dq
        big = np.abs(p) > 1.0 / _EPS
        for v in (p2, q2, p1, q1, dp2, dq2, dp1, dq1):
            v[big] *= _EPS
        if done:
            break
    scale = np.exp(_log_prefactor(a, x))
    return k * scale, scale * (k * (np.log(x) - _digamma_f64(a)) + dk)


def _igamma_parts(a, x, derivative=False):
    """(P, Q, dP/da) where a > 0 and 0 < x < inf (NaN elsewhere); dP/da is accurate only
    with ``derivative``."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    p, q, dp = (np.full(a.shape, np.nan) for _ in range(3))
    valid = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
    series = valid & ((x < 1.0) | (x <= a))
    fraction = valid & ~series
    if series.any():
        p[series], dp[series] = _p_series(a[series], x[series], derivative)
        q[series] = 1.0 - p[series]
    if fraction.any():
        q[fraction], dq = _q_continued_fraction(a[fraction], x[fraction], derivative)
        p[fraction], dp[fraction] = 1.0 - q[fraction], -dq
    return p, q, dp


def _igamma_edges(a, x, out, at_zero, at_inf):
    """JAX's values where the series do not apply: x = 0, x = inf; NaN for x < 0, a < 0,
    a = x = 0 or NaN operands."""
    out = np.where(x == 0, at_zero, out)
    out = np.where(np.isposinf(x), at_inf, out)
    bad = (x < 0) | (a < 0) | ((a == 0) & (x == 0)) | np.isnan(a) | np.isnan(x)
    return np.where(bad, np.nan, out)


def _igamma_f64(a, x):
    p = _igamma_edges(a, x, _igamma_parts(a, x)[0], 0.0, 1.0)
    return np.where((a == 0) & (x > 0), 1.0, p)


def _igammac_f64(a, x):
    q = _igamma_edges(a, x, _igamma_parts(a, x)[1], 1.0, 0.0)
    return np.where((a == 0) & (x > 0), 0.0, q)


def _igamma_grad_a_f64(a, x):
    dp = np.where(x == 0, 0.0, _igamma_parts(a, x, derivative=True)[2])
    return np.where((x < 0) | (a <= 0) | np.isnan(a) | np.isnan(x), np.nan, dp)


# regularized incomplete beta I_x(a, b): its continued fraction (Numerical Recipes' betacf,
# modified Lentz) where x < (a + 1) / (a + b + 2), else through I_x(a, b) = 1 - I_1-x(b, a)
_TINY = 1e-300


def _beta_fraction(a, b, x):
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
    h = d.copy()
    for m in range(1, _MAX_TERMS):
        m2 = 2.0 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < _TINY, _TINY, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < _TINY, _TINY, c)
            step = d * c
            h = h * step
        if np.all(np.abs(step - 1.0) <= _CONVERGED):
            break
    return h


def _log_beta(a, b):
    return _lgamma_f64(a) + _lgamma_f64(b) - _lgamma_f64(a + b)


def _betainc_f64(a, b, x):
    a, b, x = (np.asarray(v, np.float64) for v in np.broadcast_arrays(a, b, x))
    out = np.full(a.shape, np.nan)
    inside = (a > 0) & (b > 0) & (x > 0) & (x < 1) & np.isfinite(a) & np.isfinite(b)
    direct = inside & (x < (a + 1.0) / (a + b + 2.0))
    flipped = inside & ~direct
    for mask, (p, q, y) in ((direct, (a, b, x)), (flipped, (b, a, 1.0 - x))):
        if mask.any():
            p, q, y = p[mask], q[mask], y[mask]
            value = np.exp(p * np.log(y) + q * np.log1p(-y) - _log_beta(p, q)) / p * \
                _beta_fraction(p, q, y)
            out[mask] = value if mask is direct else 1.0 - value
    # the limits, as JAX: a = 0 (or b = inf) puts all mass at 0, b = 0 (or a = inf) at 1
    a_zero, b_zero = (a == 0) | np.isposinf(b), (b == 0) | np.isposinf(a)
    out = np.where((x == 0) & (a > 0) & (b >= 0) & ~b_zero, 0.0, out)
    out = np.where((x == 1) & (b > 0) & (a >= 0) & ~a_zero, 1.0, out)
    out = np.where((b_zero & (x != 1)) | (a_zero & (x == 0)), 0.0, out)
    out = np.where((a_zero & (x != 0)) | (b_zero & (x == 1)), 1.0, out)
    bad = (a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_zero & b_zero) | \
        np.isnan(a) | np.isnan(b) | np.isnan(x)
    return np.where(bad, np.nan, out)


# exponentially scaled modified Bessel functions: the power series up to |x| = 20, the
# asymptotic series of Hankel beyond (its smallest term there is ~e^-40)
_SERIES_LIMIT = 20.0


def _bessel_ie_f64(order):
    def fn(x):
        x = np.asarray(x, np.float64)
        ax = np.abs(x)
        near = ax <= _SERIES_LIMIT
        out = np.empty_like(ax)
        out[near] = _bessel_series(order, ax[near]) * np.exp(-ax[near])
        out[~near] = _bessel_asymptotic(order, ax[~near])
        out = np.where(np.isposinf(ax), 0.0, out)
        out = np.copysign(out, x) if order == 1 else out
        return np.where(np.isnan(x), np.nan, out)
    return fn


def _bessel_series(order, x):
    """I_order(x) = (x/2)^order sum_k (x^2/4)^k / (k! (k + order)!)."""
    q = x * x / 4.0
    term = (x / 2.0) ** order / math.factorial(order)
    total = term.copy()
    for k in range(1, 80):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _bessel_asymptotic(order, x):
    """e^-x I_order(x) ~ 1/sqrt(2 pi x) sum_k (-1)^k prod_j (4 order^2 - (2j-1)^2) / (j 8x)."""
    mu = 4.0 * order * order
    term = np.ones_like(x)
    total = term.copy()
    for j in range(1, 40):
        term = -term * (mu - (2 * j - 1) ** 2) / (j * 8.0 * x)
        total = total + term
    return total / np.sqrt(2.0 * np.pi * x)


def _in_dtype(f64_fn):
    """A float64 function applied to operands of any float dtype, rounded to theirs."""
    def impl(*xs):
        dtype = np.asarray(xs[0]).dtype
        with np.errstate(all="ignore"):
            return np.asarray(f64_fn(*(np.asarray(x, np.float64) for x in xs))).astype(dtype)
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


def _erf_inv_expansion(x):
    """Giles' approximation in float32 (``_GILES_CENTRAL``), as XLA: a few float32 ulp from
    the float64 impl; +-inf at +-1, NaN beyond (log of a negative)."""
    y = convert_element_type(x, dtypes.float32)
    w = neg(log(mul(sub(1.0, y), add(1.0, y))))
    p = select(lt(w, 5.0), _horner(sub(w, 2.5), _GILES_CENTRAL),
               _horner(sub(sqrt(w), 3.0), _GILES_TAIL))
    r = select(eq(abs(y), 1.0), mul(y, math.inf), mul(p, y))
    return convert_element_type(r, x.dtype)


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
def _special(name, f64_fn, nargs=1, **facts):
    return elementwise(name, _in_dtype(f64_fn), "float", nargs=nargs,
                       reference=ref.lax_op(name), **facts)


erf_p = _special("erf", _erf_f64, tile=NOT_TILED)
erfc_p = _special("erfc", _erfc_f64, host="erfc_f32({0})",
                  tile=tile_forms.expansion(_erfc_expansion, _expansion_check))
erf_inv_p = elementwise("erf_inv", _erf_inv_impl, "float", reference=ref.lax_op("erf_inv"),
                        tile=tile_forms.expansion(_erf_inv_expansion, _expansion_check))
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


# incomplete gamma and beta, Bessel ------------------------------------------------------------
def _gamma_density(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)."""
    return exp(sub(sub(mul(sub(a, 1.0), log(x)), x), lgamma(a)))


def _beta_density(a, b, x):
    """d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)."""
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    return exp(sub(add(mul(sub(b, 1.0), log1p(neg(x))), mul(sub(a, 1.0), log(x))), log_beta))


def _betainc_jvp(primals, tangents):
    """Only in x, as JAX (which has no derivative in a or b either)."""
    (a, b, x), (ta, tb, tx) = primals, tangents
    if not (is_zero(ta) and is_zero(tb)):
        raise UnsupportedError("betainc: the derivative with respect to a and b is not "
                               "supported (as in JAX); differentiate with respect to x only")
    out = betainc_p.bind(a, b, x)
    if is_zero(tx):
        return out, Zero(out.aval)
    return out, mul(fit_shape(tx, out.shape), _beta_density(a, b, x))


igamma_p = _special("igamma", _igamma_f64, nargs=2, tile=NOT_TILED)
igammac_p = _special("igammac", _igammac_f64, nargs=2, tile=NOT_TILED)
igamma_grad_a_p = _special(
    "igamma_grad_a", _igamma_grad_a_f64, nargs=2, tile=NOT_TILED,
    jvp=Unsupported("igamma_grad_a has no derivative (as in JAX): igamma is differentiable "
                    "once in a"))
betainc_p = elementwise("betainc", _in_dtype(_betainc_f64), "float", nargs=3,
                        reference=ref.lax_op("betainc"), tile=NOT_TILED, jvp=_betainc_jvp)
bessel_i0e_p = _special("bessel_i0e", _bessel_ie_f64(0), tile=NOT_TILED)
bessel_i1e_p = _special("bessel_i1e", _bessel_ie_f64(1), tile=NOT_TILED)
igamma, igammac, igamma_grad_a, betainc, bessel_i0e, bessel_i1e = map(lax_function, (
    igamma_p, igammac_p, igamma_grad_a_p, betainc_p, bessel_i0e_p, bessel_i1e_p))

def random_gamma_grad(a, x):
    """``d x / d a`` of a Gamma(``a``, 1) sample ``x`` held at its quantile (implicit
    reparameterization, as JAX's ``lax.random_gamma_grad``): ``-(d P(a, x) / d a) / p(x)``,
    evaluated in float64 (in the tails both factors underflow narrower floats)."""
    a, x = broadcast_ones(operands(a, x))
    dtype = a.dtype
    # weak only of weak 0-d operands, as JAX's (a composite whose constants are weak only so)
    weak = a.ndim == 0 and getattr(a, "weak_type", False) and getattr(x, "weak_type", False)
    a, x = convert_element_type(a, dtypes.float64), convert_element_type(x, dtypes.float64)
    return convert_element_type(neg(div(igamma_grad_a(a, x), _gamma_density(a, x))), dtype,
                                weak_type=weak)


igamma_p.define(jvp=binary_jvp(igamma_p, times(lambda a, x, o: igamma_grad_a(a, x)),
                               times(lambda a, x, o: _gamma_density(a, x))))
igammac_p.define(jvp=binary_jvp(igammac_p, times(lambda a, x, o: neg(igamma_grad_a(a, x))),
                                times(lambda a, x, o: neg(_gamma_density(a, x)))))


def _bessel_i1e_derivative(x, out):
    """i0e(x) - i1e(x) (sign(x) + 1/x), and 1/2 at |x| <= eps (as JAX)."""
    eps = float(dtypes.finfo(x.dtype).eps)
    tiny = le(abs(x), eps)
    safe = select(tiny, convert_element_type(eps, x.dtype), x)
    slope = sub(bessel_i0e(safe), mul(out, add(sign(safe), div(1.0, safe))))
    return select(tiny, convert_element_type(0.5, x.dtype), slope)


bessel_i0e_p.define(jvp=unary_jvp(bessel_i0e_p, lambda x, o: sub(bessel_i1e(x),
                                                                   mul(sign(x), o))))
bessel_i1e_p.define(jvp=unary_jvp(bessel_i1e_p, _bessel_i1e_derivative))


_add_examples(globals(), """
bessel_i0e: The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``.
    >>> pto.lax.bessel_i0e(pnp.array([0.0, 0.5, 1.0]))
    Array([1.        , 0.64503527, 0.4657596 ], dtype=float32)
bessel_i1e: The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``.
    >>> pto.lax.bessel_i1e(pnp.array([0.0, 0.5, 1.0]))
    Array([0.        , 0.1564208 , 0.20791042], dtype=float32)
betainc: The regularized incomplete beta function ``I_x(a, b)``, elementwise.
    >>> pto.lax.betainc(2.0, 3.0, pnp.array([0.25, 0.5]))
    Array([0.26171875, 0.6875    ], dtype=float32)
digamma: The digamma function (derivative of ``lgamma``), elementwise.
    >>> pto.lax.digamma(pnp.array([1.0, 2.0]))
    Array([-0.5772157 ,  0.42278433], dtype=float32)
erf: The error function, elementwise.
    >>> pto.lax.erf(pnp.array([0.0, 0.5, 1.0]))
    Array([0.       , 0.5204999, 0.8427008], dtype=float32)
erf_inv: The inverse error function, elementwise.
    >>> pto.lax.erf_inv(pnp.array([-0.5, 0.0, 0.5]))
    Array([-0.47693628,  0.        ,  0.47693628], dtype=float32)
erfc: The complementary error function ``1 - erf(x)``, elementwise.
    >>> pto.lax.erfc(pnp.array([0.0, 0.5, 1.0]))
    Array([1.        , 0.47950011, 0.1572992 ], dtype=float32)
igamma: The regularized lower incomplete gamma function ``P(a, x)``, elementwise.
    >>> pto.lax.igamma(2.0, pnp.array([0.5, 1.0, 4.0]))
    Array([0.09020401, 0.26424113, 0.9084218 ], dtype=float32)
random_gamma_grad: ``d x / d a`` of Gamma(a, 1) samples ``x`` (implicit
    reparameterization), elementwise.
    >>> pto.lax.random_gamma_grad(2.0, pnp.array([0.5, 2.0]))
    Array([0.49802673, 1.0862086 ], dtype=float32)
igamma_grad_a: The derivative of ``igamma(a, x)`` with respect to ``a``, elementwise.
    >>> pto.lax.igamma_grad_a(2.0, pnp.array([0.5, 1.0]))
    Array([-0.15103424, -0.27619603], dtype=float32)
igammac: The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``,
    elementwise.
    >>> pto.lax.igammac(2.0, pnp.array([0.5, 1.0, 4.0]))
    Array([0.909796  , 0.7357589 , 0.09157819], dtype=float32)
lgamma: ``log |Gamma(x)|``, elementwise.
    >>> pto.lax.lgamma(pnp.array([0.5, 1.0, 5.0]))
    Array([0.5723649, 0.       , 3.1780539], dtype=float32)
""")
