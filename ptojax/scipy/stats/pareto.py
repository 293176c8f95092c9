"""The Pareto distribution on ``[loc + scale, inf)``."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact, standardized, where_outside


def _below(x, loc, scale):
    return pnp.less(x, pnp.add(loc, scale))


@describe("The Pareto log density ``log(b / scale) - (b + 1) log z``, ``z = (x - loc) / "
          "scale`` (``-inf`` below ``loc + scale``).", """
>>> pto.scipy.stats.pareto.logpdf(pnp.array([2.0]), 3.0)
Array([-1.6739764], dtype=float32)""")
def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact("pareto.logpdf", x, b, loc, scale)
    z = standardized(x, loc, scale)
    log_probs = pnp.negative(pnp.add(pnp.log(pnp.divide(scale, b)),
                                     pnp.multiply(pnp.add(b, 1.0), pnp.log(z))))
    return where_outside(_below(x, loc, scale), log_probs)


@describe("The Pareto density.", """
>>> pto.scipy.stats.pareto.pdf(pnp.array([2.0]), 3.0)
Array([0.1875], dtype=float32)""")
def pdf(x, b, loc=0, scale=1):
    return pnp.exp(logpdf(x, b, loc, scale))


@describe("The Pareto distribution function ``1 - z^-b``.", """
>>> pto.scipy.stats.pareto.cdf(pnp.array([2.0]), 3.0)
Array([0.875], dtype=float32)""")
def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact("pareto.cdf", x, b, loc, scale)
    value = pnp.subtract(1.0, pnp.power(standardized(x, loc, scale), pnp.negative(b)))
    return pnp.where(_below(x, loc, scale), 0.0, value)


@describe("The log of the Pareto distribution function ``log1p(-z^-b)``.", """
>>> pto.scipy.stats.pareto.logcdf(pnp.array([2.0]), 3.0)
Array([-0.13353139], dtype=float32)""")
def logcdf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact("pareto.logcdf", x, b, loc, scale)
    z = standardized(x, loc, scale)
    return where_outside(_below(x, loc, scale),
                         pnp.log1p(pnp.negative(pnp.power(z, pnp.negative(b)))))


@describe("The log of the Pareto survival function ``-b log z``.", """
>>> pto.scipy.stats.pareto.logsf(pnp.array([2.0]), 3.0)
Array([-2.0794415], dtype=float32)""")
def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = inexact("pareto.logsf", x, b, loc, scale)
    value = pnp.negative(pnp.multiply(b, pnp.log(standardized(x, loc, scale))))
    return pnp.where(_below(x, loc, scale), 0.0, value)


@describe("The Pareto survival function ``z^-b``.", """
>>> pto.scipy.stats.pareto.sf(pnp.array([2.0]), 3.0)
Array([0.125], dtype=float32)""")
def sf(x, b, loc=0, scale=1):
    return pnp.exp(logsf(x, b, loc, scale))


@describe("The Pareto quantile function ``loc + scale (1 - q)^(-1/b)`` (NaN outside "
          "[0, 1]).", """
>>> pto.scipy.stats.pareto.ppf(pnp.array([0.875]), 3.0)
Array([2.], dtype=float32)""")
def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = inexact("pareto.ppf", q, b, loc, scale)
    value = pnp.add(loc, pnp.multiply(scale, pnp.power(pnp.subtract(1.0, q),
                                                       pnp.negative(pnp.reciprocal(b)))))
    return pnp.where(pnp.isnan(q) | pnp.less(q, 0) | pnp.greater(q, 1), np.nan, value)
