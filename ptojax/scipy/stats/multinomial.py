"""The multinomial distribution: counts of ``n`` draws over categories of probabilities
``p`` (the last axis)."""
from __future__ import annotations

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.errors import DtypeError
from ptojax.scipy.special.entropy import xlogy
from ptojax.scipy.stats.common import describe, inexact, where_outside
from ptojax.source_info import user_frame


@describe("The multinomial log mass ``lgamma(n + 1) + sum(x log p - lgamma(x + 1))`` over the "
          "last axis (``-inf`` unless the counts sum to ``n``).", """
>>> pto.scipy.stats.multinomial.logpmf(pnp.array([1, 1]), 2, pnp.array([0.5, 0.5]))
Array(-0.6931472, dtype=float32)""", arguments={"x": "integer counts per category (last axis)",
                                 "n": "the number of draws (integer)",
                                 "p": "the category probabilities (last axis)"},
          returns="An array of ``x``'s shape without its last axis.")
def logpmf(x, n, p):
    p = inexact("multinomial.logpmf", p)
    x, n = pnp.asarray(x), pnp.asarray(n)
    if not (pnp.issubdtype(x.dtype, pnp.integer) and pnp.issubdtype(n.dtype, pnp.integer)):
        raise DtypeError(f"multinomial.logpmf: x and n must be integers, got {x.aval} and "
                         f"{n.aval}", user_frame())
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    log_probs = pnp.add(lax.lgamma(pnp.add(n, 1.0)),
                        pnp.sum(pnp.subtract(xlogy(x, p), lax.lgamma(pnp.add(x, 1.0))), axis=-1))
    return where_outside(pnp.not_equal(pnp.sum(x), n), log_probs)


@describe("The multinomial mass function.", """
>>> pto.scipy.stats.multinomial.pmf(pnp.array([1, 1]), 2, pnp.array([0.5, 0.5]))
Array(0.5, dtype=float32)""", arguments={"x": "integer counts per category (last axis)",
                          "n": "the number of draws (integer)",
                          "p": "the category probabilities (last axis)"},
          returns="An array of ``x``'s shape without its last axis.")
def pmf(x, n, p):
    return pnp.exp(logpmf(x, n, p))
