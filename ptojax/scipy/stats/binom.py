"""The binomial distribution: successes in ``n`` trials of probability ``p``."""
from __future__ import annotations

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.special.entropy import xlog1py, xlogy
from ptojax.scipy.stats.common import describe, inexact, where_outside


@describe("The binomial log mass ``log C(n, y) + y log p + (n - y) log(1 - p)`` at "
          "``y = k - loc`` (``-inf`` outside ``[0, n]``).", """
>>> pto.scipy.stats.binom.logpmf(pnp.array([1.0]), 2.0, 0.5)
Array([-0.6931472], dtype=float32)""")
def logpmf(k, n, p, loc=0):
    k, n, p, loc = inexact("binom.logpmf", k, n, p, loc)
    y = pnp.subtract(k, loc)
    log_choose = pnp.subtract(lax.lgamma(pnp.add(n, 1.0)),
                              pnp.add(lax.lgamma(pnp.add(y, 1.0)),
                                      lax.lgamma(pnp.add(pnp.subtract(n, y), 1.0))))
    log_linear = pnp.add(xlogy(y, p), xlog1py(pnp.subtract(n, y), pnp.negative(p)))
    log_probs = pnp.add(log_choose, log_linear)
    certain = (pnp.equal(y, 0) & pnp.equal(n, 0)) | pnp.equal(log_linear, 0)
    log_probs = pnp.where(certain, 0.0, log_probs)
    inside = pnp.greater_equal(k, loc) & pnp.less(k, pnp.add(pnp.add(loc, n), 1.0))
    return where_outside(~inside, log_probs)


@describe("The binomial mass function.", """
>>> pto.scipy.stats.binom.pmf(pnp.array([1.0]), 2.0, 0.5)
Array([0.5], dtype=float32)""")
def pmf(k, n, p, loc=0):
    return pnp.exp(logpmf(k, n, p, loc))
