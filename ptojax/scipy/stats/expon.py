"""The exponential distribution on ``[loc, inf)``."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact, standardized, where_outside


@describe("The exponential log density ``-(x - loc) / scale - log scale`` (``-inf`` below "
          "``loc``).", """
>>> pto.scipy.stats.expon.logpdf(pnp.array([1.0]))
Array([-1.], dtype=float32)""")
def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("expon.logpdf", x, loc, scale)
    log_probs = pnp.negative(pnp.add(standardized(x, loc, scale), pnp.log(scale)))
    return where_outside(pnp.less(x, loc), log_probs)


@describe("The exponential density.", """
>>> pto.scipy.stats.expon.pdf(pnp.array([0.0]))
Array([1.], dtype=float32)""")
def pdf(x, loc=0, scale=1):
    return pnp.exp(logpdf(x, loc, scale))


@describe("The exponential distribution function ``-expm1(-(x - loc) / scale)``.", """
>>> pto.scipy.stats.expon.cdf(pnp.array([1.0]))
Array([0.63212055], dtype=float32)""")
def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("expon.cdf", x, loc, scale)
    value = pnp.negative(pnp.expm1(pnp.negative(standardized(x, loc, scale))))
    return pnp.where(pnp.less(x, loc), pnp.zeros_like(value), value)


@describe("The log of the exponential survival function ``-(x - loc) / scale``.", """
>>> pto.scipy.stats.expon.logsf(pnp.array([2.0]))
Array([-2.], dtype=float32)""")
def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("expon.logsf", x, loc, scale)
    value = pnp.negative(standardized(x, loc, scale))
    return pnp.where(pnp.less(x, loc), pnp.zeros_like(value), value)


@describe("The exponential survival function.", """
>>> pto.scipy.stats.expon.sf(pnp.array([0.0]))
Array([1.], dtype=float32)""")
def sf(x, loc=0, scale=1):
    return pnp.exp(logsf(x, loc, scale))


@describe("The log of the exponential distribution function.", """
>>> pto.scipy.stats.expon.logcdf(pnp.array([1.0]))
Array([-0.4586751], dtype=float32)""")
def logcdf(x, loc=0, scale=1):
    return pnp.log1p(pnp.negative(sf(x, loc, scale)))


@describe("The exponential quantile function ``loc - scale log1p(-q)`` (NaN outside "
          "[0, 1]).", """
>>> pto.scipy.stats.expon.ppf(pnp.array([0.0]))
Array([0.], dtype=float32)""")
def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact("expon.ppf", q, loc, scale)
    value = pnp.subtract(loc, pnp.multiply(scale, pnp.log1p(pnp.negative(q))))
    return pnp.where(pnp.isnan(q) | pnp.less(q, 0) | pnp.greater(q, 1), np.nan, value)
