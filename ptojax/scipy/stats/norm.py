"""The normal distribution ``N(loc, scale^2)``."""
from __future__ import annotations

import math

from ptojax import numpy as pnp
from ptojax.scipy.special.normal import log_ndtr, ndtr, ndtri
from ptojax.scipy.stats.common import describe, inexact, standardized


@describe("The normal log density ``-z^2/2 - log(scale sqrt(2 pi))``, ``z = (x - loc) / "
          "scale``.", """
>>> pto.scipy.stats.norm.logpdf(pnp.array([0.0]))
Array([-0.9189386], dtype=float32)""")
def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.logpdf", x, loc, scale)
    log_normalizer = pnp.log(pnp.multiply(2 * math.pi, pnp.square(scale)))
    quadratic = pnp.divide(pnp.square(pnp.subtract(x, loc)), pnp.square(scale))
    return pnp.divide(pnp.add(log_normalizer, quadratic), -2.0)


@describe("The normal density.", """
>>> pto.scipy.stats.norm.pdf(pnp.array([0.0]))
Array([0.39894223], dtype=float32)""")
def pdf(x, loc=0, scale=1):
    return pnp.exp(logpdf(x, loc, scale))


@describe("The normal distribution function ``ndtr((x - loc) / scale)``.", """
>>> pto.scipy.stats.norm.cdf(pnp.array([0.0]))
Array([0.5], dtype=float32)""")
def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.cdf", x, loc, scale)
    return ndtr(standardized(x, loc, scale))


@describe("The log of the normal distribution function, accurate far into the left tail.",
          """
>>> pto.scipy.stats.norm.logcdf(pnp.array([0.0]))
Array([-0.6931472], dtype=float32)""")
def logcdf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.logcdf", x, loc, scale)
    return log_ndtr(standardized(x, loc, scale))


@describe("The normal survival function ``1 - cdf``, accurate in the right tail.", """
>>> pto.scipy.stats.norm.sf(pnp.array([0.0]))
Array([0.5], dtype=float32)""")
def sf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.sf", x, loc, scale)
    return cdf(pnp.negative(x), pnp.negative(loc), scale)


@describe("The log of the normal survival function.", """
>>> pto.scipy.stats.norm.logsf(pnp.array([0.0]))
Array([-0.6931472], dtype=float32)""")
def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("norm.logsf", x, loc, scale)
    return logcdf(pnp.negative(x), pnp.negative(loc), scale)


@describe("The normal quantile function (the inverse of ``cdf``).", """
>>> pto.scipy.stats.norm.ppf(pnp.array([0.5]), loc=1.0)
Array([1.], dtype=float32)""")
def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact("norm.ppf", q, loc, scale)
    return pnp.add(pnp.multiply(ndtri(q), scale), loc)


@describe("The inverse of the normal survival function, ``ppf(1 - q)``.", """
>>> pto.scipy.stats.norm.isf(pnp.array([0.5]))
Array([0.], dtype=float32)""")
def isf(q, loc=0, scale=1):
    q, loc, scale = inexact("norm.isf", q, loc, scale)
    return ppf(pnp.subtract(1.0, q), loc, scale)
