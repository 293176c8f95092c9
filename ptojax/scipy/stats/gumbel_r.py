"""The right-skewed Gumbel distribution (of maxima)."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.nn.activations import log1mexp
from ptojax.scipy.stats.common import describe, inexact, standardized


def _valid(value, scale):
    return pnp.where(pnp.greater(scale, 0), value, np.nan)


@describe("The right Gumbel log density ``-(z + exp(-z)) - log scale``, ``z = (x - loc) / "
          "scale`` (NaN for ``scale <= 0``).", """
>>> pto.scipy.stats.gumbel_r.logpdf(pnp.array([0.0]))
Array([-1.], dtype=float32)""")
def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_r.logpdf", x, loc, scale)
    z = standardized(x, loc, scale)
    return _valid(pnp.subtract(pnp.negative(pnp.add(z, pnp.exp(pnp.negative(z)))),
                               pnp.log(scale)), scale)


@describe("The right Gumbel density.", """
>>> pto.scipy.stats.gumbel_r.pdf(pnp.array([0.0]))
Array([0.36787942], dtype=float32)""")
def pdf(x, loc=0, scale=1):
    return pnp.exp(logpdf(x, loc, scale))


@describe("The log of the right Gumbel distribution function ``-exp(-z)``.", """
>>> pto.scipy.stats.gumbel_r.logcdf(pnp.array([0.0]))
Array([-1.], dtype=float32)""")
def logcdf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_r.logcdf", x, loc, scale)
    return _valid(pnp.negative(pnp.exp(pnp.negative(standardized(x, loc, scale)))), scale)


@describe("The right Gumbel distribution function.", """
>>> pto.scipy.stats.gumbel_r.cdf(pnp.array([0.0]))
Array([0.36787942], dtype=float32)""")
def cdf(x, loc=0, scale=1):
    return pnp.exp(logcdf(x, loc, scale))


@describe("The right Gumbel survival function ``1 - exp(-exp(-z))``.", """
>>> pto.scipy.stats.gumbel_r.sf(pnp.array([0.0]))
Array([0.6321206], dtype=float32)""")
def sf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_r.sf", x, loc, scale)
    neg_z = pnp.negative(standardized(x, loc, scale))
    return _valid(pnp.subtract(1.0, pnp.exp(pnp.negative(pnp.exp(neg_z)))), scale)


@describe("The log of the right Gumbel survival function ``log1mexp(exp(-z))``.", """
>>> pto.scipy.stats.gumbel_r.logsf(pnp.array([0.0]))
Array([-0.4586751], dtype=float32)""")
def logsf(x, loc=0, scale=1):
    x, loc, scale = inexact("gumbel_r.logsf", x, loc, scale)
    return _valid(log1mexp(pnp.exp(pnp.negative(standardized(x, loc, scale)))), scale)


@describe("The right Gumbel quantile function ``loc - scale log(-log p)`` (NaN outside "
          "(0, 1)).", """
>>> pto.scipy.stats.gumbel_r.ppf(pnp.array([0.5]))
Array([0.36651292], dtype=float32)""", arguments={"p": "probabilities in [0, 1] (array)"})
def ppf(p, loc=0, scale=1):
    p, loc, scale = inexact("gumbel_r.ppf", p, loc, scale)
    value = pnp.subtract(loc, pnp.multiply(scale, pnp.log(pnp.negative(pnp.log(p)))))
    return pnp.where(pnp.greater(p, 0) & pnp.less(p, 1), value, np.nan)
