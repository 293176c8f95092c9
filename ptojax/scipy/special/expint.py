"""The exponential integrals ``exp1(x) = E1(x) = integral_x^inf exp(-t) / t dt`` and
``expi(x) = Ei(x) = integral_-inf^x exp(t) / t dt`` for real ``x``, computed in float64 (and
returned in the input's dtype) by classical expansions rather than JAX's rational fits:

- ``Ei(x)``, ``0 < x <= 40``: ``gamma + log x + sum_k x**k / (k k!)`` (positive terms, 120 of
  them); ``x > 40``: the asymptotic series ``exp(x) / x * sum_k k! / x**k`` (40 terms);
  ``x < 0``: ``-E1(-x)``;
- ``E1(x)``, ``0 < x <= 1``: ``-gamma - log x - sum_k (-x)**k / (k k!)``; ``x > 1``: the
  continued fraction ``exp(-x) / (x + 1 - 1 / (x + 3 - 4 / (x + 5 - ...)))`` (Lentz, 200
  steps).

Edge values are JAX's: ``exp1(0) = inf``, ``exp1(x < 0) = nan``, ``expi(0) = nan``. The
derivatives are ``-exp(-x) / x`` and ``exp(x) / x``.

``expn(n, x) = E_n(x)`` for integer ``n``: Lentz's continued fraction for ``x > 1`` and the
series with its ``log x`` and digamma term for ``x <= 1``, in float64.
"""
from __future__ import annotations

import functools

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.ops.convert import convert_element_type as convert_exactly
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.scipy.special.normal import inexact

_EULER_GAMMA = 0.57721566490153286061


def _series(x, terms, sign):
    """``sum_{k=1}^{terms} (sign x)**k / (k k!)``."""
    def step(k, carry):
        power, total = carry          # power = (sign x)**k / k!
        k = convert_exactly(k, x.dtype)
        power = power * (sign * x) / k
        return power, total + power / k
    return lax.fori_loop(1, terms + 1, step, (pnp.ones_like(x), pnp.zeros_like(x)))[1]


def _ei_asymptotic(x, terms=40):
    total, term = pnp.ones_like(x), pnp.ones_like(x)
    for k in range(1, terms):
        term = term * (k / x)
        total = total + term
    return pnp.exp(x) / x * total


def _e1_continued_fraction(x, steps=200):
    def step(i, carry):
        b, c, d, h = carry
        a = -convert_exactly(i * i, x.dtype)
        b = b + 2.0
        d = 1.0 / (a * d + b)
        c = b + a / c
        return b, c, d, h * (c * d)
    b = x + 1.0
    init = (b, pnp.full_like(x, 1e300), 1.0 / b, 1.0 / b)
    return lax.fori_loop(1, steps, step, init)[3] * pnp.exp(-x)


def _e1_f64(x):
    small = x <= 1.0
    xs = pnp.where(small & (x > 0), x, 1.0)
    xl = pnp.where(small, 2.0, x)
    near = -_EULER_GAMMA - pnp.log(xs) - _series(xs, 30, -1.0)
    out = pnp.where(small, near, _e1_continued_fraction(xl))
    return pnp.where(x == 0, np.inf, pnp.where(x < 0, np.nan, out))


def _ei_f64(x):
    positive = x > 0
    xp = pnp.where(positive, x, 1.0)
    series = _EULER_GAMMA + pnp.log(pnp.minimum(xp, 40.0)) + _series(pnp.minimum(xp, 40.0),
                                                                      120, 1.0)
    large = _ei_asymptotic(pnp.maximum(xp, 40.0))
    out_positive = pnp.where(xp > 40.0, large, series)
    out_negative = -_e1_f64(pnp.where(positive, 1.0, -x))
    return pnp.where(x == 0, np.nan, pnp.where(positive, out_positive, out_negative))


def _en_continued_fraction(n, x, steps=200):
    """``E_n(x)``, ``x > 1``, by Lentz's continued fraction."""
    def step(i, carry):
        b, c, d, h = carry
        i = convert_exactly(i, x.dtype)
        a = -i * (n - 1.0 + i)
        b = b + 2.0
        d = 1.0 / (a * d + b)
        c = b + a / c
        return b, c, d, h * (c * d)
    b = x + n
    init = (b, pnp.full_like(x, 1e300), 1.0 / b, 1.0 / b)
    return lax.fori_loop(1, steps, step, init)[3] * pnp.exp(-x)


def _en_series(n, x, terms=60):
    """``E_n(x)``, ``0 < x <= 1``, ``n >= 1``: the series in ``x`` with its ``log`` term."""
    nm1 = n - 1.0
    log_term = -pnp.log(x)
    start = pnp.where(nm1 != 0, 1.0 / pnp.where(nm1 != 0, nm1, 1.0), log_term - _EULER_GAMMA)

    def step(i, carry):
        fact, total, harmonic = carry      # harmonic = H_i, so digamma(i + 1) = H_i - gamma
        i = convert_exactly(i, x.dtype)
        fact = fact * (-x / i)
        harmonic = harmonic + 1.0 / i
        hit = i == nm1
        term = pnp.where(hit, fact * (log_term + harmonic - _EULER_GAMMA),
                         -fact / pnp.where(hit, 1.0, i - nm1))
        return fact, total + term, harmonic
    zeros = pnp.zeros_like(x)
    return lax.fori_loop(1, terms + 1, step, (pnp.ones_like(x), start, zeros))[1]


def _en_f64(n, x):
    x_big = pnp.where(x > 1.0, x, 2.0)
    x_small = pnp.where((x > 0) & (x <= 1.0), x, 0.5)
    n_pos = pnp.where(n >= 1, n, 1.0)
    out = pnp.where(x > 1.0, _en_continued_fraction(n_pos, x_big), _en_series(n_pos, x_small))
    out = pnp.where(n == 0, pnp.exp(-x) / x, out)
    at_zero = pnp.where(n >= 2, 1.0 / pnp.where(n >= 2, n - 1.0, 1.0), np.inf)
    out = pnp.where(x == 0, at_zero, out)
    return pnp.where((n < 0) | (x < 0), np.nan, out)


def _in_float64(fn, x):
    return fn(convert_exactly(x, dtypes.float64)).astype(x.dtype)


@custom_jvp
def _exp1(x):
    return _in_float64(_e1_f64, x)


_exp1.defjvps(lambda t, out, x: t * (-pnp.exp(-x) / x))


@custom_jvp
def _expi(x):
    return _in_float64(_ei_f64, x)


_expi.defjvps(lambda t, out, x: t * (pnp.exp(x) / x))


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _expn(n, x):
    wide_n, wide_x = convert_exactly(n, dtypes.float64), convert_exactly(x, dtypes.float64)
    return _en_f64(wide_n, wide_x).astype(x.dtype)


@_expn.defjvp
def _expn_jvp(n, primals, tangents):
    (x,), (t,) = primals, tangents
    return _expn(n, x), -t * _expn(n - 1, x)


def _real(name, x):
    x = inexact(name, x)
    if dtypes.is_complex(x.dtype):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return x


def exp1(x):
    """The exponential integral ``E1(x) = integral_x^inf exp(-t) / t dt`` (``x >= 0``).

    Example:
      >>> pto.scipy.special.exp1(pnp.array([0.5, 1.0, 10.0]))
      Array([5.5977362e-01, 2.1938394e-01, 4.1569688e-06], dtype=float32)
    """
    return _exp1(_real("exp1", x))


def expn(n, x):
    """The generalized exponential integral ``E_n(x) = integral_1^inf exp(-x t) / t**n dt``
    (integer ``n >= 0``, ``x >= 0``; NaN outside). ``E_n(0) = 1 / (n - 1)`` for ``n >= 2``
    (JAX returns ``1 / n`` there). Differentiable in ``x``: ``-E_{n-1}(x)``.

    Example:
      >>> pto.scipy.special.expn(2, pnp.array([0.5, 1.5, 3.0]))
      Array([0.32664385, 0.07310078, 0.01064193], dtype=float32)
    """
    n, x = inexact("expn", pnp.asarray(n), pnp.asarray(x))   # lists too, as JAX's
    if dtypes.is_complex(x.dtype):
        raise ValueError("expn does not support complex-valued inputs.")
    n, x = pnp.broadcast_arrays(n, x)
    return _expn(n, x)


def expi(x):
    """The exponential integral ``Ei(x) = integral_-inf^x exp(t) / t dt``.

    Example:
      >>> pto.scipy.special.expi(pnp.array([-1.0, 1.0, 10.0]))
      Array([-2.1938394e-01,  1.8951178e+00,  2.4922290e+03], dtype=float32)
    """
    return _expi(_real("expi", x))

