"""The Poisson distribution; ``cdf`` is ``Q(floor(k - loc) + 1, mu)`` (0 below ``loc``), the
regularized upper incomplete gamma function, as JAX's."""
from __future__ import annotations

import math

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.special.entropy import entr, xlogy
from ptojax.scipy.special.incomplete import gammaincc
from ptojax.scipy.stats.common import describe, inexact, where_outside


@describe("The Poisson log mass ``y log mu - lgamma(y + 1) - mu`` at ``y = k - loc`` "
          "(``-inf`` for negative or non-integer ``k``).", """
>>> pto.scipy.stats.poisson.logpmf(pnp.array([0.0, 2.0]), 1.0)
Array([-1.       , -1.6931472], dtype=float32)""")
def logpmf(k, mu, loc=0):
    k, mu, loc = inexact("poisson.logpmf", k, mu, loc)
    y = pnp.subtract(k, loc)
    log_probs = pnp.subtract(pnp.subtract(xlogy(y, mu), lax.lgamma(pnp.add(y, 1.0))), mu)
    return where_outside(pnp.less(y, 0) | pnp.not_equal(pnp.round(k), k), log_probs)


@describe("The Poisson mass function.", """
>>> pto.scipy.stats.poisson.pmf(pnp.array([0.0]), 1.0)
Array([0.36787942], dtype=float32)""")
def pmf(k, mu, loc=0):
    return pnp.exp(logpmf(k, mu, loc))


def _summed_entropy(mu, terms, upper):
    """``sum_k entr(pmf(k))`` over ``k < min(terms, upper)`` (``mu`` flat)."""
    k = pnp.arange(terms, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu[None, :])
    return pnp.sum(entr(pnp.where(pnp.less(k, upper[None, :]), probs, 0.0)), axis=0)


@describe("The entropy of the Poisson distribution: its terms summed for ``mu < 100``, the "
          "asymptotic ``log(2 pi e mu) / 2 - 1 / (12 mu)`` above (``loc`` does not change "
          "it).", """
>>> pto.scipy.stats.poisson.entropy(pnp.array([1.0]))
Array([1.3048421], dtype=float32)""", arguments={"mu": "the mean (array)", "loc": "location, default 0"})
def entropy(mu, loc=0):
    mu, loc = inexact("poisson.entropy", mu, loc)
    shape = np.broadcast_shapes(mu.shape, loc.shape)
    flat = pnp.ravel(mu)
    small = _summed_entropy(flat, 35, pnp.ceil(pnp.add(flat, 20.0)))
    medium = _summed_entropy(flat, 250, pnp.ceil(pnp.add(pnp.add(
        flat, pnp.multiply(10.0, pnp.sqrt(flat))), 20.0)))
    large = pnp.subtract(pnp.multiply(0.5, pnp.log(pnp.multiply(2 * math.pi * math.e, flat))),
                         pnp.divide(1.0, pnp.multiply(12.0, flat)))
    out = pnp.where(pnp.equal(flat, 0), 0.0,
                    pnp.where(pnp.less(flat, 10), small,
                              pnp.where(pnp.less(flat, 100), medium, large)))
    return pnp.broadcast_to(pnp.reshape(out.astype(mu.dtype), mu.shape), shape)


@describe("The Poisson cumulative distribution ``P(K <= k)``.", """
>>> pto.scipy.stats.poisson.cdf(pnp.array([0.0, 2.0]), 1.5)
Array([0.22313017, 0.80884683], dtype=float32)""")
def cdf(k, mu, loc=0):
    k, mu, loc = inexact("poisson.cdf", k, mu, loc)
    x = pnp.subtract(k, loc)
    return pnp.where(x < 0, 0.0, gammaincc(pnp.floor(pnp.add(x, 1.0)), mu))
