"""The Laplace (double exponential) distribution."""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact, standardized


@describe("The Laplace log density ``-|x - loc| / scale - log(2 scale)``.", """
>>> pto.scipy.stats.laplace.logpdf(pnp.array([0.0]))
Array([-0.6931472], dtype=float32)""")
def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("laplace.logpdf", x, loc, scale)
    linear = pnp.divide(pnp.abs(pnp.subtract(x, loc)), scale)
    return pnp.negative(pnp.add(linear, pnp.log(pnp.multiply(2.0, scale))))


@describe("The Laplace density.", """
>>> pto.scipy.stats.laplace.pdf(pnp.array([0.0]))
Array([0.5], dtype=float32)""")
def pdf(x, loc=0, scale=1):
    return pnp.exp(logpdf(x, loc, scale))


@describe("The Laplace distribution function: ``exp(z) / 2`` for ``z <= 0``, else ``1 - "
          "exp(-z) / 2``.", """
>>> pto.scipy.stats.laplace.cdf(pnp.array([0.0]))
Array([0.5], dtype=float32)""")
def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("laplace.cdf", x, loc, scale)
    z = standardized(x, loc, scale)
    return pnp.where(pnp.less_equal(z, 0), pnp.multiply(0.5, pnp.exp(z)),
                     pnp.subtract(1.0, pnp.multiply(0.5, pnp.exp(pnp.negative(z)))))
