"""The wrapped Cauchy distribution on ``[0, 2 pi]``."""
from __future__ import annotations

import math

import numpy as np

from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact, where_outside


@describe("The wrapped Cauchy log density ``log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c "
          "cos x)`` on ``[0, 2 pi]`` (``-inf`` outside, NaN unless ``0 < c < 1``).", """
>>> pto.scipy.stats.wrapcauchy.logpdf(pnp.array([0.0]), 0.5)
Array([-0.7392647], dtype=float32)""")
def logpdf(x, c):
    x, c = inexact("wrapcauchy.logpdf", x, c)
    c2 = pnp.square(c)
    value = pnp.subtract(pnp.subtract(pnp.log(pnp.subtract(1.0, c2)), math.log(2 * math.pi)),
                         pnp.log(pnp.subtract(pnp.add(1.0, c2),
                                              pnp.multiply(pnp.multiply(2.0, c), pnp.cos(x)))))
    outside = pnp.less(x, 0) | pnp.greater(x, 2 * math.pi)
    valid = pnp.greater(c, 0) & pnp.less(c, 1)
    return pnp.where(valid, where_outside(outside, value), np.nan)


@describe("The wrapped Cauchy density.", """
>>> pto.scipy.stats.wrapcauchy.pdf(pnp.array([0.0]), 0.5)
Array([0.47746485], dtype=float32)""")
def pdf(x, c):
    return pnp.exp(logpdf(x, c))
