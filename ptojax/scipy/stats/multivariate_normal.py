"""The multivariate normal distribution, for a scalar (isotropic) covariance. A covariance
matrix needs a Cholesky factorization, which ``pto.numpy.linalg`` does not have yet."""
from __future__ import annotations

import math

from ptojax import numpy as pnp
from ptojax.errors import UnsupportedError
from ptojax.scipy.stats.common import describe, inexact_dtypes
from ptojax.source_info import user_frame

_LOG_2PI = math.log(2 * math.pi)


@describe("The multivariate normal log density. With a scalar ``mean`` it is the univariate "
          "normal of variance ``cov``; with a vector ``mean`` (last axis of ``x``) and a "
          "scalar ``cov`` it is ``-|x - mean|^2 / (2 cov) - n/2 log(2 pi cov)``.", """
>>> pto.scipy.stats.multivariate_normal.logpdf(pnp.zeros(2), pnp.zeros(2), 1.0)
Array(-1.837877)""", returns="An array: ``x``'s shape without its last axis (for a vector "
          "mean).")
def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not "
                                  "supported (as in JAX)")
    x, mean, cov = inexact_dtypes("multivariate_normal.logpdf", x, mean, cov)
    if cov.ndim:
        raise UnsupportedError("multivariate_normal.logpdf: a covariance matrix needs a "
                               "Cholesky factorization, which pto.numpy.linalg does not have "
                               "yet; only a scalar (isotropic) cov is supported", user_frame())
    diff = pnp.subtract(x, mean)
    if not mean.ndim:
        return pnp.subtract(pnp.multiply(-0.5, pnp.divide(pnp.square(diff), cov)),
                            pnp.multiply(0.5, pnp.add(_LOG_2PI, pnp.log(cov))))
    n = mean.shape[-1]
    squared = pnp.sum(pnp.square(diff), axis=-1)
    return pnp.subtract(pnp.multiply(-0.5, pnp.divide(squared, cov)),
                        pnp.multiply(n / 2, pnp.add(_LOG_2PI, pnp.log(cov))))


@describe("The multivariate normal density.", """
>>> pto.scipy.stats.multivariate_normal.pdf(pnp.zeros(2), pnp.zeros(2), 1.0)
Array(0.15915497)""", returns="An array: ``x``'s shape without its last axis (for a vector "
          "mean).")
def pdf(x, mean, cov):
    return pnp.exp(logpdf(x, mean, cov))
