"""The von Mises distribution on the circle, ``exp(kappa cos x) / (2 pi I_0(kappa))``."""
from __future__ import annotations

import math

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.stats.common import describe, inexact


@describe("The von Mises log density ``kappa (cos x - 1) - log(2 pi i0e(kappa))`` (NaN unless "
          "``kappa > 0``; not restricted to ``[-pi, pi]``, as JAX).", """
>>> pto.scipy.stats.vonmises.logpdf(pnp.array([0.0]), 1.0)
Array([-1.0737915], dtype=float32)""", arguments={"kappa": "the concentration (array)"})
def logpdf(x, kappa):
    x, kappa = inexact("vonmises.logpdf", x, kappa)
    value = kappa * (pnp.cos(x) - 1) - pnp.log(2 * math.pi * lax.bessel_i0e(kappa))
    return pnp.where(kappa > 0, value, np.nan)


@describe("The von Mises density.", """
>>> pto.scipy.stats.vonmises.pdf(pnp.array([0.0]), 1.0)
Array([0.34171048], dtype=float32)""", arguments={"kappa": "the concentration (array)"})
def pdf(x, kappa):
    return pnp.exp(logpdf(x, kappa))
