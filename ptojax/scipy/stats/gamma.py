"""The gamma distribution; ``cdf``/``sf`` are the regularized incomplete gamma functions of
``y = (x - loc) / scale`` (clamped at 0 below ``loc``), as JAX's."""
from __future__ import annotations

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.special.entropy import xlogy
from ptojax.scipy.special.incomplete import gammainc, gammaincc
from ptojax.scipy.stats.common import describe, inexact, standardized, where_outside


@describe("The gamma log density ``(a - 1) log y - y - lgamma(a) - log scale``, ``y = (x - "
          "loc) / scale`` (``-inf`` below ``loc``).", """
>>> pto.scipy.stats.gamma.logpdf(pnp.array([1.0]), 2.0)
Array([-1.], dtype=float32)""")
def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = inexact("gamma.logpdf", x, a, loc, scale)
    inside = pnp.greater_equal(x, loc)
    y = pnp.where(inside, standardized(x, loc, scale), 1.0)
    log_linear = pnp.subtract(xlogy(pnp.subtract(a, 1.0), y), y)
    log_probs = pnp.subtract(log_linear, pnp.add(lax.lgamma(a), pnp.log(scale)))
    return where_outside(~inside, log_probs)


@describe("The gamma density.", """
>>> pto.scipy.stats.gamma.pdf(pnp.array([1.0]), 2.0)
Array([0.36787942], dtype=float32)""")
def pdf(x, a, loc=0, scale=1):
    return pnp.exp(logpdf(x, a, loc, scale))


@describe("The gamma cumulative distribution ``P(a, y)``, ``y = (x - loc) / scale`` (0 below "
          "``loc``).", """
>>> pto.scipy.stats.gamma.cdf(pnp.array([1.0]), 2.0)
Array([0.26424113], dtype=float32)""")
def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, pnp.clip(standardized(x, loc, scale), 0.0, np.inf))


@describe("The log of ``cdf``.", """
>>> pto.scipy.stats.gamma.logcdf(pnp.array([1.0]), 2.0)
Array([-1.3308933], dtype=float32)""")
def logcdf(x, a, loc=0, scale=1):
    return pnp.log(cdf(x, a, loc, scale))


@describe("The gamma survival function ``Q(a, y) = 1 - cdf`` (1 below ``loc``).", """
>>> pto.scipy.stats.gamma.sf(pnp.array([1.0]), 2.0)
Array([0.7357589], dtype=float32)""")
def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = inexact("gamma.sf", x, a, loc, scale)
    y = standardized(x, loc, scale)
    return pnp.where(y < 0, 1.0, gammaincc(a, y))


@describe("The log of ``sf``.", """
>>> pto.scipy.stats.gamma.logsf(pnp.array([1.0]), 2.0)
Array([-0.30685282], dtype=float32)""")
def logsf(x, a, loc=0, scale=1):
    return pnp.log(sf(x, a, loc, scale))
