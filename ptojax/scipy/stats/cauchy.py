"""The Cauchy distribution."""
from __future__ import annotations

import math

from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact, standardized


@describe("The Cauchy log density ``-log(pi scale (1 + z^2))``, ``z = (x - loc) / scale``.",
          """
>>> pto.scipy.stats.cauchy.logpdf(pnp.array([0.0]))
Array([-1.14473], dtype=float32)""")
def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("cauchy.logpdf", x, loc, scale)
    z = standardized(x, loc, scale)
    return pnp.negative(pnp.add(pnp.log(pnp.multiply(math.pi, scale)), pnp.log1p(pnp.square(z))))


@describe("The Cauchy density.", """
>>> pto.scipy.stats.cauchy.pdf(pnp.array([0.0]))
Array([0.31830987], dtype=float32)""")
def pdf(x, loc=0, scale=1):
    return pnp.exp(logpdf(x, loc, scale))


@describe("The Cauchy distribution function ``1/2 + arctan(z) / pi``.", """
>>> pto.scipy.stats.cauchy.cdf(pnp.array([1.0]))
Array([0.75], dtype=float32)""")
def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("cauchy.cdf", x, loc, scale)
    return pnp.add(0.5, pnp.divide(pnp.arctan(standardized(x, loc, scale)), math.pi))


@describe("The log of the Cauchy distribution function.", """
>>> pto.scipy.stats.cauchy.logcdf(pnp.array([0.0]))
Array([-0.6931472], dtype=float32)""")
def logcdf(x, loc=0, scale=1):
    return pnp.log(cdf(x, loc, scale))


@describe("The Cauchy survival function.", """
>>> pto.scipy.stats.cauchy.sf(pnp.array([1.0]))
Array([0.25], dtype=float32)""")
def sf(x, loc=0, scale=1):
    x, loc, scale = inexact("cauchy.sf", x, loc, scale)
    return cdf(pnp.negative(x), pnp.negative(loc), scale)


@describe("The log of the Cauchy survival function.", """
>>> pto.scipy.stats.cauchy.logsf(pnp.array([0.0]))
Array([-0.6931472], dtype=float32)""")
def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("cauchy.logsf", x, loc, scale)
    return logcdf(pnp.negative(x), pnp.negative(loc), scale)


@describe("The Cauchy quantile function ``loc + scale tan(pi (q - 1/2))``.", """
>>> pto.scipy.stats.cauchy.ppf(pnp.array([0.75]))
Array([0.99999994], dtype=float32)""")
def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact("cauchy.ppf", q, loc, scale)
    unscaled = pnp.tan(pnp.subtract(pnp.multiply(math.pi, q), math.pi / 2))
    return pnp.add(pnp.multiply(unscaled, scale), loc)


@describe("The inverse Cauchy survival function ``loc + scale tan(pi (1/2 - q))``.", """
>>> pto.scipy.stats.cauchy.isf(pnp.array([0.25]))
Array([1.], dtype=float32)""")
def isf(q, loc=0, scale=1):
    q, loc, scale = inexact("cauchy.isf", q, loc, scale)
    unscaled = pnp.tan(pnp.subtract(math.pi / 2, pnp.multiply(math.pi, q)))
    return pnp.add(pnp.multiply(unscaled, scale), loc)
