"""The softmax family: ``softmax``, ``log_softmax``, ``logsumexp``, ``logmeanexp``.

Reductions that exponentiate subtract the maximum first, under ``stop_gradient`` (the result
does not depend on it, so neither does its gradient). A ``where`` mask leaves elements out
of the reduction, as in JAX: masked-out outputs are 0 (softmax) or ``-inf`` (log_softmax).
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.nn.activations import float_input
from ptojax.numpy._axes import normalize_axes
from ptojax.numpy._promote import asarray as _asarray, promote_args


def _max(x, axes, where):
    """The maximum over ``axes`` (kept, ``-inf`` for an empty or fully masked slice),
    without gradient."""
    if where is None:
        return lax.stop_gradient(pnp.max(x, axis=axes, keepdims=True))
    return lax.stop_gradient(pnp.max(x, axis=axes, keepdims=True, initial=-np.inf,
                                     where=where))


def _masked(x, where, fill):
    return x if where is None else pnp.where(where, x, fill)


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` over ``axis``, computed without overflow.

    Args:
      x: input array.
      axis: an int, a tuple of ints or None (all axes), default -1.
      where: optional boolean mask of the elements to include; masked-out outputs are 0.

    Returns:
      An array of ``x``'s shape whose slices along ``axis`` sum to 1. As in JAX, a slice
      that is all ``-inf`` or holds a ``+inf`` gives NaN.

    Example:
      >>> pto.nn.softmax(pnp.array([0.0, 0.0]))
      Array([0.5, 0.5], dtype=float32)
    """
    x = float_input("softmax", x)
    axes = normalize_axes("softmax", axis, x.ndim)
    unnormalized = pnp.exp(pnp.subtract(_masked(x, where, -np.inf), _max(x, axes, where)))
    total = pnp.sum(unnormalized, axis=axes, keepdims=True, where=where)
    return _masked(pnp.divide(unnormalized, total), where, 0.0)


def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x)`` over ``axis``, computed without overflow.

    Args:
      x: input array.
      axis: an int, a tuple of ints or None (all axes), default -1.
      where: optional boolean mask of the elements to include; masked-out outputs are
        ``-inf``.

    Returns:
      An array of ``x``'s shape.

    Example:
      >>> pto.nn.log_softmax(pnp.array([0.0, 0.0]))
      Array([-0.6931472, -0.6931472], dtype=float32)
    """
    x = float_input("log_softmax", x)
    axes = normalize_axes("log_softmax", axis, x.ndim)
    shifted = pnp.subtract(_masked(x, where, -np.inf), _max(x, axes, where))
    total = pnp.sum(pnp.exp(shifted), axis=axes, keepdims=True, where=where)
    return _masked(pnp.subtract(shifted, pnp.log(total)), where, -np.inf)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` over ``axis``, computed without overflow.

    Args:
      a: input array.
      axis: an int, a tuple of ints or None (all axes, the default).
      b: optional weights broadcasting against ``a``; elements with ``b == 0`` are left
        out (so ``a = inf`` there does not make the result NaN).
      keepdims: keep the reduced axes with size 1.
      return_sign: return ``(log|sum|, sign(sum))``; otherwise a negative weighted sum
        gives NaN.
      where: optional boolean mask of the elements to include.

    Returns:
      The reduced array (or the pair). A slice of all ``-inf`` gives ``-inf``.

    Example:
      >>> pto.nn.logsumexp(pnp.array([0.0, 0.0]))
      Array(0.6931472, dtype=float32)
    """
    if where is not None:
        a = pnp.where(where, a, 0)
    if b is None:
        a = float_input("logsumexp", a)
    else:
        a, b = promote_args("logsumexp", a, b, kind="float")
        a = pnp.where(pnp.not_equal(b, 0), a, -np.inf)
    axes = normalize_axes("logsumexp", axis, a.ndim)
    top = _max(a, axes, where)
    top = pnp.where(pnp.isfinite(top), top, pnp.zeros_like(top))
    terms = pnp.exp(pnp.subtract(a, top))
    if b is not None:
        terms = pnp.multiply(terms, b)
    total = pnp.sum(terms, axis=axes, keepdims=True, where=where)
    sign = pnp.sign(total)
    out = pnp.add(pnp.log(pnp.abs(total)), top)
    if not keepdims:
        out, sign = pnp.squeeze(out, axes), pnp.squeeze(sign, axes)
    if out.weak_type:     # strongly typed even for a Python scalar, as JAX's
        out, sign = lax.convert_element_type(out, out.dtype), lax.convert_element_type(
            sign, sign.dtype)
    if return_sign:
        return out, sign
    return out if b is None else pnp.where(pnp.less(sign, 0), np.nan, out)


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``log(mean(exp(x)))`` over ``axis`` = ``logsumexp(x) - log(n)``.

    Args:
      x: input array.
      axis: an int, a tuple of ints or None (all axes, the default).
      where: optional boolean mask of the elements to include (``n`` counts them).
      keepdims: keep the reduced axes with size 1.

    Returns:
      The reduced array.

    Example:
      >>> pto.nn.logmeanexp(pnp.array([1.0, 1.0]))
      Array(1., dtype=float32)
    """
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    x = _asarray(x)
    axes = normalize_axes("logmeanexp", axis, x.ndim)
    if where is None:
        count = _asarray(math.prod(x.shape[d] for d in axes), lse.dtype)
    else:
        count = pnp.sum(pnp.ones(x.shape, lse.dtype), axis=axes, keepdims=keepdims,
                        where=where)
    return pnp.subtract(lse, pnp.log(count))
