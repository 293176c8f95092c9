"""The beta distribution on ``[loc, loc + scale]``; ``cdf``/``sf`` are regularized
incomplete beta functions of ``y = (x - loc) / scale`` clamped to ``[0, 1]``, as JAX's."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.scipy.special.entropy import xlog1py, xlogy
from ptojax.scipy.special.gamma_family import betaln
from ptojax.scipy.special.incomplete import betainc
from ptojax.scipy.stats.common import describe, inexact, standardized, where_outside


@describe("The beta log density ``(a-1) log y + (b-1) log(1-y) - betaln(a, b) - log scale``,"
          " ``y = (x - loc) / scale`` (``-inf`` outside [0, 1], NaN for non-positive "
          "``a``, ``b`` or ``scale``).", """
>>> pto.scipy.stats.beta.logpdf(pnp.array([0.5]), 2.0, 2.0)
Array([0.40546513], dtype=float32)""")
def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("beta.logpdf", x, a, b, loc, scale)
    y = standardized(x, loc, scale)
    log_linear = pnp.add(xlogy(pnp.subtract(a, 1.0), y),
                         xlog1py(pnp.subtract(b, 1.0), pnp.negative(y)))
    log_probs = pnp.subtract(pnp.subtract(log_linear, betaln(a, b)), pnp.log(scale))
    outside = pnp.greater(x, pnp.add(loc, scale)) | pnp.less(x, loc)
    invalid = pnp.less_equal(a, 0) | pnp.less_equal(b, 0) | pnp.less_equal(scale, 0)
    return pnp.where(invalid, np.nan, where_outside(outside, log_probs))


@describe("The beta density.", """
>>> pto.scipy.stats.beta.pdf(pnp.array([0.5]), 2.0, 2.0)
Array([1.5], dtype=float32)""")
def pdf(x, a, b, loc=0, scale=1):
    return pnp.exp(logpdf(x, a, b, loc, scale))


@describe("The beta cumulative distribution ``I_y(a, b)``, ``y = (x - loc) / scale`` clamped "
          "to [0, 1].", """
>>> pto.scipy.stats.beta.cdf(pnp.array([0.5]), 2.0, 3.0)
Array([0.6875], dtype=float32)""")
def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, pnp.clip(standardized(x, loc, scale), 0.0, 1.0))


@describe("The log of ``cdf``.", """
>>> pto.scipy.stats.beta.logcdf(pnp.array([0.5]), 2.0, 3.0)
Array([-0.37469345], dtype=float32)""")
def logcdf(x, a, b, loc=0, scale=1):
    return pnp.log(cdf(x, a, b, loc, scale))


@describe("The beta survival function ``I_{1-y}(b, a)``.", """
>>> pto.scipy.stats.beta.sf(pnp.array([0.5]), 2.0, 3.0)
Array([0.3125], dtype=float32)""")
def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = inexact("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1.0 - pnp.clip(standardized(x, loc, scale), 0.0, 1.0))


@describe("The log of ``sf``.", """
>>> pto.scipy.stats.beta.logsf(pnp.array([0.5]), 2.0, 3.0)
Array([-1.1631508], dtype=float32)""")
def logsf(x, a, b, loc=0, scale=1):
    return pnp.log(sf(x, a, b, loc, scale))
