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
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.scipy.special.normal import inexact

_EULER_GAMMA = 0.57721566490153286061


def _series(x, terms, sign):
    """``sum_{k=1}^{terms} (sign x)**k / (k k!)``."""
    def step(k, carry):
        power, total = carry          # power = (sign x)**k / k!
        k = k.astype(x.dtype)
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
        a = -(i * i).astype(x.dtype)
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


def _in_float64(fn, x):
    return fn(x.astype(dtypes.float64)).astype(x.dtype)


@custom_jvp
def _exp1(x):
    return _in_float64(_e1_f64, x)


_exp1.defjvps(lambda t, out, x: t * (-pnp.exp(-x) / x))


@custom_jvp
def _expi(x):
    return _in_float64(_ei_f64, x)


_expi.defjvps(lambda t, out, x: t * (pnp.exp(x) / x))


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


def expi(x):
    """The exponential integral ``Ei(x) = integral_-inf^x exp(t) / t dt``.

    Example:
      >>> pto.scipy.special.expi(pnp.array([-1.0, 1.0, 10.0]))
      Array([-2.1938394e-01,  1.8951178e+00,  2.4922290e+03], dtype=float32)
    """
    return _expi(_real("expi", x))

