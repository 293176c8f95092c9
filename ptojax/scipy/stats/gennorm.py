"""The generalized normal distribution (``cdf`` needs the incomplete gamma function, which is
not here yet)."""
from __future__ import annotations

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact


@describe("The generalized normal log density ``log(beta / 2) - lgamma(1 / beta) - "
          "|x|^beta``.", """
>>> pto.scipy.stats.gennorm.logpdf(pnp.array([0.0]), 2.0)
Array([-0.5723649], dtype=float32)""")
def logpdf(x, beta):
    x, beta = inexact("gennorm.logpdf", x, beta)
    return pnp.subtract(pnp.subtract(pnp.log(pnp.multiply(0.5, beta)),
                                     lax.lgamma(pnp.reciprocal(beta))),
                        pnp.power(pnp.abs(x), beta))


@describe("The generalized normal density.", """
>>> pto.scipy.stats.gennorm.pdf(pnp.array([0.0]), 2.0)
Array([0.5641896], dtype=float32)""")
def pdf(x, beta):
    return pnp.exp(logpdf(x, beta))
