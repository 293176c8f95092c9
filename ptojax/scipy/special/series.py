"""Elementwise power series summed until each element's terms stop mattering: one
``lax.while_loop`` over the whole array, each element frozen once its own test fails (the
values a per-element loop, as JAX's vectorized ``while_loop``s, gives)."""
from __future__ import annotations

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.dtypes import finfo
from ptojax.numpy._promote import asarray


MAX_TERMS = 250


def horner(coefficients, x):
    """The polynomial with ``coefficients`` (highest power first) at ``x``."""
    out = pnp.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        out = out * x + c
    return out


def sequences_as_arrays(name, *args):
    """The arguments, lists and tuples stacked into arrays: JAX's ``hyp1f1``/``hyp2f1`` (jitted
    and vectorized) take them as arrays."""
    return [asarray(a, op=name, sequences=True) if isinstance(a, (list, tuple)) else a
            for a in args]


def sum_series(first, ratio, *, start=1.0, weight=None, relative=True):
    """``start + sum_{k>=1} term_k * weight(k)`` with ``term_1 = first`` and ``term_{k+1} =
    term_k * ratio(k)``, stopping an element at ``k = 250`` or once its (unweighted) term is
    small: ``not |term| / |sum| > eps`` (``relative``, JAX's 1F1 loops, which also stop on a
    NaN ratio) or ``not |term| > eps |sum|`` (JAX's 2F1 Taylor loop)."""
    eps = finfo(first.dtype).eps

    def active(serie, k, term):
        if relative:
            return (k < MAX_TERMS) & (pnp.abs(term) / pnp.abs(serie) > eps)
        return (k < MAX_TERMS) & (pnp.abs(term) > eps * pnp.abs(serie))

    def body(state):
        serie, k, term, going = state
        weighted = term if weight is None else term * weight(k)
        serie = pnp.where(going, serie + weighted, serie)
        term = pnp.where(going, term * ratio(k), term)
        k = pnp.where(going, k + 1.0, k)
        return serie, k, term, going & active(serie, k, term)

    serie = pnp.full_like(first, start)
    k = pnp.ones_like(first)
    state = (serie, k, first, active(serie, k, first))
    return lax.while_loop(lambda s: pnp.any(s[3]), body, state)[0]
