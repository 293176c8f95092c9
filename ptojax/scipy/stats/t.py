"""Student's t distribution."""
from __future__ import annotations

import math

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact, standardized


@describe("The t log density ``lgamma((df+1)/2) - lgamma(df/2) - log(pi df scale^2)/2 - "
          "(df+1)/2 log1p(z^2 / df)``, ``z = (x - loc) / scale``.", """
>>> pto.scipy.stats.t.logpdf(pnp.array([0.0]), 1.0)
Array([-1.1447299], dtype=float32)""")
def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = inexact("t.logpdf", x, df, loc, scale)
    z = standardized(x, loc, scale)
    half_df = pnp.divide(df, 2.0)
    half_df_plus_half = pnp.add(half_df, 0.5)
    log_normalizer = pnp.subtract(
        pnp.add(lax.lgamma(half_df),
                pnp.divide(pnp.log(pnp.multiply(pnp.multiply(pnp.square(scale), math.pi), df)),
                           2.0)),
        lax.lgamma(half_df_plus_half))
    return pnp.negative(pnp.add(log_normalizer, pnp.multiply(
        half_df_plus_half, pnp.log1p(pnp.divide(pnp.square(z), df)))))


@describe("The t density.", """
>>> pto.scipy.stats.t.pdf(pnp.array([0.0]), 1.0)
Array([0.31830993], dtype=float32)""")
def pdf(x, df, loc=0, scale=1):
    return pnp.exp(logpdf(x, df, loc, scale))
