"""The negative binomial distribution: failures before the ``n``-th success."""
from __future__ import annotations

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.special.entropy import xlogy
from ptojax.scipy.stats.common import describe, inexact, where_outside


@describe("The negative binomial log mass ``lgamma(y + n) - lgamma(n) - lgamma(y + 1) + n log p"
          " + y log(1 - p)`` at ``y = k - loc`` (``-inf`` below ``loc``).", """
>>> pto.scipy.stats.nbinom.logpmf(pnp.array([1.0]), 2.0, 0.5)
Array([-1.3862944], dtype=float32)""", arguments={"n": "the number of successes (array)"})
def logpmf(k, n, p, loc=0):
    k, n, p, loc = inexact("nbinom.logpmf", k, n, p, loc)
    y = pnp.subtract(k, loc)
    log_choose = pnp.subtract(pnp.subtract(lax.lgamma(pnp.add(y, n)), lax.lgamma(n)),
                              lax.lgamma(pnp.add(y, 1.0)))
    log_linear = pnp.add(xlogy(n, p), xlogy(y, pnp.subtract(1.0, p)))
    return where_outside(pnp.less(k, loc), pnp.add(log_choose, log_linear))


@describe("The negative binomial mass function.", """
>>> pto.scipy.stats.nbinom.pmf(pnp.array([1.0]), 2.0, 0.5)
Array([0.25], dtype=float32)""", arguments={"n": "the number of successes (array)"})
def pmf(k, n, p, loc=0):
    return pnp.exp(logpmf(k, n, p, loc))
