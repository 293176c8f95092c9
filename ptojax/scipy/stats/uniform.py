"""The uniform distribution on ``[loc, loc + scale]``."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact, where_outside


def _outside(x, loc, scale):
    return pnp.greater(x, pnp.add(loc, scale)) | pnp.less(x, loc)


@describe("The uniform log density ``-log scale`` on ``[loc, loc + scale]`` (``-inf`` "
          "outside).", """
>>> pto.scipy.stats.uniform.logpdf(pnp.array([0.5, 2.0]))
Array([ -0., -inf], dtype=float32)""")
def logpdf(x, loc=0, scale=1):
    x, loc, scale = inexact("uniform.logpdf", x, loc, scale)
    return where_outside(_outside(x, loc, scale), pnp.negative(pnp.log(scale)))


@describe("The uniform density.", """
>>> pto.scipy.stats.uniform.pdf(pnp.array([0.5, 2.0]))
Array([1., 0.], dtype=float32)""")
def pdf(x, loc=0, scale=1):
    return pnp.exp(logpdf(x, loc, scale))


@describe("The uniform distribution function ``clip((x - loc) / scale, 0, 1)`` (NaN for a "
          "NaN ``x``).", """
>>> pto.scipy.stats.uniform.cdf(pnp.array([-1.0, 0.25, 2.0]))
Array([0.  , 0.25, 1.  ], dtype=float32)""")
def cdf(x, loc=0, scale=1):
    x, loc, scale = inexact("uniform.cdf", x, loc, scale)
    value = pnp.divide(pnp.subtract(x, loc), scale)
    value = pnp.where(pnp.less(x, loc), 0.0,
                      pnp.where(pnp.greater(x, pnp.add(loc, scale)), 1.0, value))
    return value.astype(x.dtype)


@describe("The uniform quantile function ``loc + scale q`` (NaN outside [0, 1]).", """
>>> pto.scipy.stats.uniform.ppf(pnp.array([0.25]), loc=1.0, scale=2.0)
Array([1.5], dtype=float32)""")
def ppf(q, loc=0, scale=1):
    q, loc, scale = inexact("uniform.ppf", q, loc, scale)
    value = pnp.add(loc, pnp.multiply(scale, q))
    return pnp.where(pnp.isnan(q) | pnp.less(q, 0) | pnp.greater(q, 1), np.nan, value)
