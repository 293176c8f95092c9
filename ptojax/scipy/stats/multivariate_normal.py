"""The multivariate normal distribution: a scalar (isotropic) covariance, or covariance
matrices through their Cholesky factors, as in JAX."""
from __future__ import annotations

import math

import numpy as np

from ptojax import numpy as pnp
from ptojax.batching.api import vmap
from ptojax.errors import ShapeError
from ptojax.ops.decompositions import cholesky, triangular_solve
from ptojax.scipy.stats.common import describe, inexact_dtypes
from ptojax.source_info import user_frame

_LOG_2PI = math.log(2 * math.pi)


@describe("The multivariate normal log density. With a scalar ``mean`` it is the univariate "
          "normal of variance ``cov``; with a vector ``mean`` (last axis of ``x``) and a "
          "scalar ``cov`` it is ``-|x - mean|^2 / (2 cov) - n/2 log(2 pi cov)``; with "
          "covariance matrices ``cov = L L^T`` it is ``-|L^-1 (x - mean)|^2 / 2 - n/2 log(2 pi) "
          "- sum(log diag L)``.", """
>>> pto.scipy.stats.multivariate_normal.logpdf(pnp.zeros(2), pnp.zeros(2), 1.0)
Array(-1.837877, dtype=float32)""", returns="An array: ``x``'s shape without its last axis (for a vector "
          "mean).")
def logpdf(x, mean, cov, allow_singular=None):
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not "
                                  "supported (as in JAX)")
    x, mean, cov = inexact_dtypes("multivariate_normal.logpdf", x, mean, cov)
    diff = pnp.subtract(x, mean)
    if not mean.ndim:
        return pnp.subtract(pnp.multiply(-0.5, pnp.divide(pnp.square(diff), cov)),
                            pnp.multiply(0.5, pnp.add(_LOG_2PI, pnp.log(cov))))
    n = mean.shape[-1]
    if cov.ndim:
        return _logpdf_with_matrix(diff, cov, n)
    squared = pnp.sum(pnp.square(diff), axis=-1)
    return pnp.subtract(pnp.multiply(-0.5, pnp.divide(squared, cov)),
                        pnp.multiply(n / 2, pnp.add(_LOG_2PI, pnp.log(cov))))


def _logpdf_with_matrix(diff, cov, n):
    """The log density for covariance matrices ``cov (..., n, n)``, broadcast against the
    deviations ``diff (..., n)``."""
    if cov.ndim < 2 or tuple(cov.shape[-2:]) != (n, n):
        raise ShapeError(f"multivariate_normal.logpdf: cov must be a scalar or ({n}, {n}) "
                         f"matrices for a mean of {n} entries, got shape {tuple(cov.shape)}",
                         user_frame(2))
    batch = np.broadcast_shapes(tuple(diff.shape[:-1]), tuple(cov.shape[:-2]))
    diffs = pnp.reshape(pnp.broadcast_to(diff, batch + (n,)), (-1, n))
    covs = pnp.reshape(pnp.broadcast_to(cov, batch + (n, n)), (-1, n, n))
    return pnp.reshape(vmap(_logpdf_one)(diffs, covs), batch)


def _logpdf_one(diff, cov):
    chol = cholesky(cov)
    y = triangular_solve(chol, diff, lower=True, transpose_a=True)
    return (-0.5 * pnp.sum(pnp.square(y)) - diff.shape[0] / 2 * _LOG_2PI
            - pnp.sum(pnp.log(pnp.diagonal(chol))))


@describe("The multivariate normal density.", """
>>> pto.scipy.stats.multivariate_normal.pdf(pnp.zeros(2), pnp.zeros(2), 1.0)
Array(0.15915497, dtype=float32)""", returns="An array: ``x``'s shape without its last axis (for a vector "
          "mean).")
def pdf(x, mean, cov):
    return pnp.exp(logpdf(x, mean, cov))
