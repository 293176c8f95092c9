"""The beta-binomial distribution: binomial with a beta-distributed success probability."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.scipy.special.gamma_family import betaln
from ptojax.scipy.stats.common import describe, inexact, where_outside


@describe("The beta-binomial log mass at ``y = floor(k) - loc``: ``-log(n + 1) - "
          "betaln(n - y + 1, y + 1) + betaln(y + a, n - y + b) - betaln(a, b)``.", """
>>> pto.scipy.stats.betabinom.logpmf(pnp.array([1.0]), 3.0, 2.0, 2.0)
Array([-1.2039728], dtype=float32)""")
def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = inexact("betabinom.logpmf", k, n, a, b, loc)
    y = pnp.subtract(pnp.floor(k), loc)
    log_choose = pnp.negative(pnp.add(pnp.log1p(n), betaln(pnp.add(pnp.subtract(n, y), 1.0),
                                                          pnp.add(y, 1.0))))
    log_betas = pnp.subtract(betaln(pnp.add(y, a), pnp.add(pnp.subtract(n, y), b)),
                             betaln(a, b))
    log_probs = pnp.add(log_choose, log_betas)
    log_probs = pnp.where(pnp.equal(y, 0) & pnp.equal(n, 0), 0.0, log_probs)
    outside = pnp.less(y, pnp.negative(loc)) | pnp.greater(y, n) | \
        pnp.less_equal(pnp.add(y, a), 0)
    log_probs = where_outside(outside, log_probs)
    invalid = pnp.less(n, 0) | pnp.less_equal(a, 0) | pnp.less_equal(b, 0)
    return pnp.where(invalid, np.nan, log_probs)


@describe("The beta-binomial mass function.", """
>>> pto.scipy.stats.betabinom.pmf(pnp.array([1.0]), 3.0, 2.0, 2.0)
Array([0.29999998], dtype=float32)""")
def pmf(k, n, a, b, loc=0):
    return pnp.exp(logpmf(k, n, a, b, loc))
