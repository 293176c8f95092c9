"""The logistic distribution."""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.scipy.special.logistic import expit, logit
from ptojax.scipy.stats.common import describe, inexact, standardized


@describe("The logistic log density ``-2 logaddexp(z/2, -z/2) - log scale``, ``z = (x - "
          "loc) / scale``.", """
>>> pto.scipy.stats.logistic.logpdf(pnp.array([0.0]))
Array([-1.3862944], dtype=float32)""")
def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.logpdf", x, loc, scale)
    half_z = pnp.divide(standardized(x, loc, scale), 2.0)
    return pnp.subtract(pnp.multiply(-2.0, pnp.logaddexp(half_z, pnp.negative(half_z))),
                        pnp.log(scale))


@describe("The logistic density.", """
>>> pto.scipy.stats.logistic.pdf(pnp.array([0.0]))
Array([0.25], dtype=float32)""")
def pdf(x, loc=0, scale=1):
    return pnp.exp(logpdf(x, loc, scale))


@describe("The logistic distribution function ``expit(z)``.", """
>>> pto.scipy.stats.logistic.cdf(pnp.array([0.0]))
Array([0.5], dtype=float32)""")
def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.cdf", x, loc, scale)
    return expit(standardized(x, loc, scale))


@describe("The logistic survival function ``expit(-z)``.", """
>>> pto.scipy.stats.logistic.sf(pnp.array([0.0]))
Array([0.5], dtype=float32)""")
def sf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.sf", x, loc, scale)
    return expit(pnp.negative(standardized(x, loc, scale)))


@describe("The logistic quantile function ``loc + scale logit(x)`` (``x`` a probability).", """
>>> pto.scipy.stats.logistic.ppf(pnp.array([0.5]))
Array([0.], dtype=float32)""", arguments={"x": "probabilities in [0, 1] (array)"})
def ppf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.ppf", x, loc, scale)
    return pnp.add(pnp.multiply(logit(x), scale), loc)


@describe("The inverse logistic survival function ``loc - scale logit(x)`` (``x`` a probability).", """
>>> pto.scipy.stats.logistic.isf(pnp.array([0.5]))
Array([0.], dtype=float32)""", arguments={"x": "probabilities in [0, 1] (array)"})
def isf(x, loc=0, scale=1):
    x, loc, scale = inexact("logistic.isf", x, loc, scale)
    return pnp.add(pnp.multiply(pnp.negative(logit(x)), scale), loc)
