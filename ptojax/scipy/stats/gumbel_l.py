"""The left-skewed Gumbel distribution (of minima)."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact, standardized


def _valid(value, scale):
    return pnp.where(pnp.greater(scale, 0), value, np.nan)


@describe("The left Gumbel log density ``z - exp(z) - log scale``, ``z = (x - loc) / scale``"
          " (NaN for ``scale <= 0``).", """
>>> pto.scipy.stats.gumbel_l.logpdf(pnp.array([0.0]))
Array([-1.], dtype=float32)""")
def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_l.logpdf", x, loc, scale)
    z = standardized(x, loc, scale)
    return _valid(pnp.subtract(pnp.subtract(z, pnp.exp(z)), pnp.log(scale)), scale)


@describe("The left Gumbel density.", """
>>> pto.scipy.stats.gumbel_l.pdf(pnp.array([0.0]))
Array([0.36787942], dtype=float32)""")
def pdf(x, loc=0, scale=1):
    return pnp.exp(logpdf(x, loc, scale))


@describe("The log of the left Gumbel distribution function ``log(1 - exp(-exp(z)))``.", """
>>> pto.scipy.stats.gumbel_l.logcdf(pnp.array([0.0]))
Array([-0.45867515], dtype=float32)""")
def logcdf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_l.logcdf", x, loc, scale)
    z = standardized(x, loc, scale)
    return _valid(pnp.log(pnp.negative(pnp.expm1(pnp.negative(pnp.exp(z))))), scale)


@describe("The left Gumbel distribution function.", """
>>> pto.scipy.stats.gumbel_l.cdf(pnp.array([0.0]))
Array([0.63212055], dtype=float32)""")
def cdf(x, loc=0, scale=1):
    return pnp.exp(logcdf(x, loc, scale))


@describe("The log of the left Gumbel survival function ``-exp(z)``.", """
>>> pto.scipy.stats.gumbel_l.logsf(pnp.array([0.0]))
Array([-1.], dtype=float32)""")
def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_l.logsf", x, loc, scale)
    return _valid(pnp.negative(pnp.exp(standardized(x, loc, scale))), scale)


@describe("The left Gumbel survival function.", """
>>> pto.scipy.stats.gumbel_l.sf(pnp.array([0.0]))
Array([0.36787942], dtype=float32)""")
def sf(x, loc=0, scale=1):
    return pnp.exp(logsf(x, loc, scale))


@describe("The left Gumbel quantile function ``loc + scale log(-log1p(-p))`` (NaN outside "
          "(0, 1)).", """
>>> pto.scipy.stats.gumbel_l.ppf(pnp.array([0.5]))
Array([-0.36651292], dtype=float32)""", arguments={"p": "probabilities in [0, 1] (array)"})
def ppf(p, loc=0, scale=1):
    p, loc, scale = inexact("gumbel_l.ppf", p, loc, scale)
    value = pnp.add(loc, pnp.multiply(scale, pnp.log(pnp.negative(pnp.log1p(pnp.negative(p))))))
    return pnp.where(pnp.greater(p, 0) & pnp.less(p, 1), value, np.nan)
