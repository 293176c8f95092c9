"""The Bernoulli distribution: 1 with probability ``p``, 0 with ``1 - p``."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.scipy.special.entropy import xlog1py, xlogy
from ptojax.scipy.stats.common import describe, inexact, where_outside


@describe("The Bernoulli log mass ``k log p + (1 - k) log(1 - p)`` at ``k - loc`` in {0, 1} "
          "(``-inf`` elsewhere).", """
>>> pto.scipy.stats.bernoulli.logpmf(pnp.array([0.0, 1.0]), 0.25)
Array([-0.28768206, -1.3862944 ], dtype=float32)""")
def logpmf(k, p, loc=0):
    k, p, loc = inexact("bernoulli.logpmf", k, p, loc)
    x = pnp.subtract(k, loc)
    log_probs = pnp.add(xlogy(x, p), xlog1py(pnp.subtract(1.0, x), pnp.negative(p)))
    return where_outside(pnp.less(x, 0) | pnp.greater(x, 1), log_probs)


@describe("The Bernoulli mass function.", """
>>> pto.scipy.stats.bernoulli.pmf(pnp.array([0.0, 1.0]), 0.25)
Array([0.75, 0.25], dtype=float32)""")
def pmf(k, p, loc=0):
    return pnp.exp(logpmf(k, p, loc))


def _invalid_p(p):
    return pnp.isnan(p) | pnp.less(p, 0) | pnp.greater(p, 1)


@describe("The Bernoulli distribution function: 0 below 0, ``1 - p`` on [0, 1), 1 from 1 "
          "(NaN for an invalid ``p``).", """
>>> pto.scipy.stats.bernoulli.cdf(pnp.array([-1.0, 0.5, 1.0]), 0.25)
Array([0.  , 0.75, 1.  ], dtype=float32)""")
def cdf(k, p):
    k, p = inexact("bernoulli.cdf", k, p)
    value = pnp.where(pnp.less(k, 0), 0.0, pnp.where(pnp.less(k, 1), pnp.subtract(1.0, p), 1.0))
    return pnp.where(pnp.isnan(k) | _invalid_p(p), np.nan, value)


@describe("The Bernoulli quantile function: 0 for ``q <= 1 - p``, else 1.", """
>>> pto.scipy.stats.bernoulli.ppf(pnp.array([0.5, 0.9]), 0.25)
Array([0., 1.], dtype=float32)""")
def ppf(q, p):
    q, p = inexact("bernoulli.ppf", q, p)
    value = pnp.where(pnp.less_equal(q, pnp.subtract(1.0, p)), 0.0, 1.0)
    invalid = pnp.isnan(q) | _invalid_p(p) | pnp.less(q, 0) | pnp.greater(q, 1)
    return pnp.where(invalid, np.nan, value).astype(q.dtype)
