"""The chi-squared distribution; ``cdf``/``sf`` are regularized incomplete gamma functions
of ``df / 2`` at ``(x - loc) / (2 scale)`` clamped at 0, as JAX's."""
from __future__ import annotations

import math

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.special.incomplete import gammainc, gammaincc
from ptojax.scipy.stats.common import describe, inexact, standardized, where_outside


@describe("The chi-squared log density ``(df/2 - 1) log y - y/2 - lgamma(df/2) - df/2 log 2 "
          "- log scale``, ``y = (x - loc) / scale`` (``-inf`` below ``loc``).", """
>>> pto.scipy.stats.chi2.logpdf(pnp.array([2.0]), 2.0)
Array([-1.6931472], dtype=float32)""")
def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact("chi2.logpdf", x, df, loc, scale)
    y = standardized(x, loc, scale)
    half_df = pnp.divide(df, 2.0)
    kernel = pnp.subtract(pnp.multiply(pnp.subtract(half_df, 1.0), pnp.log(y)),
                          pnp.divide(y, 2.0))
    normalizer = pnp.add(lax.lgamma(half_df), pnp.multiply(half_df, math.log(2.0)))
    log_probs = pnp.add(pnp.subtract(pnp.negative(normalizer), pnp.log(scale)), kernel)
    return where_outside(pnp.less(x, loc), log_probs)


@describe("The chi-squared density.", """
>>> pto.scipy.stats.chi2.pdf(pnp.array([2.0]), 2.0)
Array([0.18393971], dtype=float32)""")
def pdf(x, df, loc=0, scale=1):
    return pnp.exp(logpdf(x, df, loc, scale))


def _half_standardized(x, loc, scale):
    return pnp.clip(pnp.divide(pnp.subtract(x, loc), pnp.multiply(scale, 2.0)), 0.0, math.inf)


@describe("The chi-squared cumulative distribution ``P(df / 2, (x - loc) / (2 scale))``.", """
>>> pto.scipy.stats.chi2.cdf(pnp.array([2.0]), 3.0)
Array([0.4275933], dtype=float32)""")
def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(pnp.divide(df, 2.0), _half_standardized(x, loc, scale))


@describe("The log of ``cdf``.", """
>>> pto.scipy.stats.chi2.logcdf(pnp.array([2.0]), 3.0)
Array([-0.8495828], dtype=float32)""")
def logcdf(x, df, loc=0, scale=1):
    return pnp.log(cdf(x, df, loc, scale))


@describe("The chi-squared survival function ``1 - cdf``.", """
>>> pto.scipy.stats.chi2.sf(pnp.array([2.0]), 3.0)
Array([0.5724067], dtype=float32)""")
def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(pnp.divide(df, 2.0), _half_standardized(x, loc, scale))


@describe("The log of ``sf``.", """
>>> pto.scipy.stats.chi2.logsf(pnp.array([2.0]), 3.0)
Array([-0.5579055], dtype=float32)""")
def logsf(x, df, loc=0, scale=1):
    return pnp.log(sf(x, df, loc, scale))
