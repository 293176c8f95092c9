"""The Dirichlet distribution on the probability simplex."""
from __future__ import annotations

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.errors import ShapeError
from ptojax.scipy.special.entropy import xlogy
from ptojax.scipy.stats.common import describe, inexact_dtypes, where_outside
from ptojax.source_info import user_frame


def _on_simplex(x):
    return pnp.all(pnp.greater(x, 0), axis=0) & \
        pnp.less(pnp.abs(pnp.subtract(pnp.sum(x, axis=0), 1.0)), 1e-6)


@describe("The Dirichlet log density ``sum((alpha - 1) log x) - log B(alpha)``. ``x`` holds "
          "the components along its first axis (all of them, or all but the last, which is "
          "then ``1 - sum``); ``-inf`` off the simplex.", """
>>> pto.scipy.stats.dirichlet.logpdf(pnp.array([0.2, 0.8]), pnp.array([2.0, 2.0]))
Array(-0.04082203, dtype=float32)""", returns="An array of ``x``'s shape without its first axis.")
def logpdf(x, alpha):
    x, alpha = inexact_dtypes("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ShapeError(f"dirichlet.logpdf: alpha must be 1-D, got {alpha.aval}", user_frame())
    if not x.ndim or x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ShapeError(f"dirichlet.logpdf: x must have {alpha.shape[0]} (or "
                         f"{alpha.shape[0] - 1}) entries along its first axis, like alpha "
                         f"{alpha.aval}; got {x.aval}", user_frame())
    if x.shape[0] != alpha.shape[0]:
        x = pnp.concatenate([x, pnp.subtract(1.0, pnp.sum(x, axis=0, keepdims=True))], axis=0)
    log_beta = pnp.subtract(pnp.sum(lax.lgamma(alpha)), lax.lgamma(pnp.sum(alpha)))
    alpha = pnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    log_probs = pnp.subtract(pnp.sum(xlogy(pnp.subtract(alpha, 1.0), x), axis=0), log_beta)
    return where_outside(~_on_simplex(x), log_probs)


@describe("The Dirichlet density.", """
>>> pto.scipy.stats.dirichlet.pdf(pnp.array([0.2, 0.8]), pnp.array([2.0, 2.0]))
Array(0.96000004, dtype=float32)""", returns="An array of ``x``'s shape without its first axis.")
def pdf(x, alpha):
    return pnp.exp(logpdf(x, alpha))
