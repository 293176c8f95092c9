"""The normal distribution truncated to ``[a, b]`` (in standard units: ``loc + scale a`` to
``loc + scale b``). Masses are computed in logs, accurate far into either tail."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.nn.softmax_family import logsumexp
from ptojax.scipy.special.normal import log_ndtr, ndtr
from ptojax.scipy.stats import norm
from ptojax.scipy.stats.common import describe, inexact, standardized, where_outside

_BOUNDS = {"a": "lower bound in standard units (array)",
           "b": "upper bound in standard units (array)"}


def _log_difference(x, y):
    """``log(exp(x) - exp(y))`` for ``x >= y``."""
    return logsumexp(pnp.stack([x, y]), axis=0,
                     b=pnp.stack([pnp.ones_like(x), pnp.negative(pnp.ones_like(y))]))


def _log_gauss_mass(a, b):
    """``log(ndtr(b) - ndtr(a))``: from the tail the interval lies in, or ``log1p`` of the two
    tails when it holds 0."""
    a, b = pnp.broadcast_arrays(a, b)
    left, right = pnp.less_equal(b, 0), pnp.greater(a, 0)
    tail_a = pnp.where(right, pnp.negative(b), a)
    tail_b = pnp.where(right, pnp.negative(a), b)
    in_tail = _log_difference(log_ndtr(tail_b), log_ndtr(tail_a))
    central = pnp.log1p(pnp.subtract(pnp.negative(ndtr(a)), ndtr(pnp.negative(b))))
    return pnp.where(left | right, in_tail, central)


@describe("The truncated normal log density ``norm.logpdf(x, loc, scale) - log(ndtr(b) - "
          "ndtr(a))`` inside the bounds (``-inf`` outside, NaN when ``a >= b``).", """
>>> pto.scipy.stats.truncnorm.logpdf(pnp.array([0.0]), -1.0, 1.0)
Array([-0.5372234], dtype=float32)""", arguments=_BOUNDS)
def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("truncnorm.logpdf", x, a, b, loc, scale)
    value = pnp.subtract(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    z = standardized(x, loc, scale)
    value = where_outside(pnp.less(z, a) | pnp.greater(z, b), value)
    return pnp.where(pnp.greater_equal(a, b), np.nan, value)


@describe("The truncated normal density.", """
>>> pto.scipy.stats.truncnorm.pdf(pnp.array([0.0]), -1.0, 1.0)
Array([0.5843685], dtype=float32)""", arguments=_BOUNDS)
def pdf(x, a, b, loc=0, scale=1):
    return pnp.exp(logpdf(x, a, b, loc, scale))


@describe("The log of the truncated normal distribution function (0 above ``b``, ``-inf`` "
          "below ``a``, NaN when ``a >= b``).", """
>>> pto.scipy.stats.truncnorm.logcdf(pnp.array([0.0]), -1.0, 1.0)
Array([-0.69314706], dtype=float32)""", arguments=_BOUNDS)
def logcdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = pnp.broadcast_arrays(x, a, b)
    z = standardized(x, loc, scale)
    total = _log_gauss_mass(a, b)
    below = pnp.subtract(_log_gauss_mass(a, z), total)
    above = pnp.subtract(_log_gauss_mass(z, b), total)
    near_one = pnp.log1p(pnp.negative(pnp.exp(above)))   # accurate when the cdf is near 1
    value = pnp.where(pnp.greater_equal(z, b), 0.0,
                      pnp.where(pnp.less_equal(z, a), -np.inf,
                                pnp.where(pnp.greater(below, -0.1), near_one,
                                          pnp.where(pnp.greater(z, a), below, 0.0))))
    return pnp.where(pnp.greater_equal(a, b), np.nan, value)


@describe("The truncated normal distribution function.", """
>>> pto.scipy.stats.truncnorm.cdf(pnp.array([0.0]), -1.0, 1.0)
Array([0.5000001], dtype=float32)""", arguments=_BOUNDS)
def cdf(x, a, b, loc=0, scale=1):
    return pnp.exp(logcdf(x, a, b, loc, scale))


@describe("The log of the truncated normal survival function.", """
>>> pto.scipy.stats.truncnorm.logsf(pnp.array([0.0]), -1.0, 1.0)
Array([-0.69314706], dtype=float32)""", arguments=_BOUNDS)
def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(pnp.negative(x), pnp.negative(b), pnp.negative(a), pnp.negative(loc), scale)


@describe("The truncated normal survival function.", """
>>> pto.scipy.stats.truncnorm.sf(pnp.array([0.0]), -1.0, 1.0)
Array([0.5000001], dtype=float32)""", arguments=_BOUNDS)
def sf(x, a, b, loc=0, scale=1):
    return pnp.exp(logsf(x, a, b, loc, scale))
