"""The generalized normal distribution; ``cdf`` is ``(1 + sign(x) P(1 / beta, |x|^beta)) / 2``
(``P`` the regularized lower incomplete gamma function), as JAX's."""
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


@describe("The generalized normal cumulative distribution.", """
>>> pto.scipy.stats.gennorm.cdf(pnp.array([0.0, 1.0]), 2.0)
Array([0.5       , 0.92135036], dtype=float32)""")
def cdf(x, beta):
    x, beta = inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + pnp.sign(x) * lax.igamma(1 / beta, pnp.abs(x) ** beta))
