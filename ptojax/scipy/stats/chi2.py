"""The chi-squared distribution (``cdf``/``sf`` need the incomplete gamma function, which is
not here yet)."""
from __future__ import annotations

import math

from ptojax import lax
from ptojax import numpy as pnp
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
