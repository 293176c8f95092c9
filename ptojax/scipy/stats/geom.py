"""The geometric distribution: the trial of the first success, on 1, 2, ..."""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.scipy.special.entropy import xlog1py
from ptojax.scipy.stats.common import describe, inexact, where_outside


@describe("The geometric log mass ``(y - 1) log(1 - p) + log p`` at ``y = k - loc >= 1``.",
          """
>>> pto.scipy.stats.geom.logpmf(pnp.array([2.0]), 0.5)
Array([-1.3862944], dtype=float32)""")
def logpmf(k, p, loc=0):
    k, p, loc = inexact("geom.logpmf", k, p, loc)
    y = pnp.subtract(k, loc)
    log_probs = pnp.add(xlog1py(pnp.subtract(y, 1.0), pnp.negative(p)), pnp.log(p))
    return where_outside(pnp.less_equal(y, 0), log_probs)


@describe("The geometric mass function.", """
>>> pto.scipy.stats.geom.pmf(pnp.array([2.0]), 0.5)
Array([0.25], dtype=float32)""")
def pmf(k, p, loc=0):
    return pnp.exp(logpmf(k, p, loc))
