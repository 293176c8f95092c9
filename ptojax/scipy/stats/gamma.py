"""The gamma distribution (``cdf``/``sf`` need the incomplete gamma function, which is not
here yet)."""
from __future__ import annotations

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.special.entropy import xlogy
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
