"""Order statistics of samples: ``mode`` (the most common value and its count) and
``rankdata`` (ranks with ties resolved as SciPy's methods), as JAX's: NaNs propagate (the
``"omit"`` and ``"raise"`` policies are not implemented, as in JAX)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray

_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """``mode``'s result: the modal values and how often each occurs."""
    mode: object
    count: object


def _check_nan_policy(name, nan_policy):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(f"{name}: logic for `nan_policy` of 'omit' is not "
                                  "implemented (as in JAX); drop the NaNs before calling it")
    if nan_policy == "raise":
        raise NotImplementedError(f"{name}: nan_policy='raise' would need to look at the "
                                  "values (not possible under jit, as in JAX); check for NaNs "
                                  "outside the function")


def _same(left, right):
    """``left == right``, NaNs equal to each other (as ``unique`` groups them)."""
    return (left == right) | (pnp.isnan(left) & pnp.isnan(right)) \
        if dtypes.issubdtype(left.dtype, np.inexact) else left == right


def _mode_of_rows(x):
    """The mode and count of each row of the 2-D ``x`` (the smallest value among ties)."""
    n = x.shape[-1]
    s = pnp.sort(x, axis=-1)
    index = lax.broadcasted_iota(np.int32, s.shape, 1)
    first = pnp.concatenate([pnp.ones(s.shape[:-1] + (1,), bool),
                             ~_same(s[:, 1:], s[:, :-1])], axis=-1)
    last = pnp.concatenate([~_same(s[:, :-1], s[:, 1:]),
                            pnp.ones(s.shape[:-1] + (1,), bool)], axis=-1)
    start = lax.cummax(pnp.where(first, index, 0), axis=1)
    end = lax.cummin(pnp.where(last, index, n - 1), axis=1, reverse=True)
    count = (end - start + 1).astype(dtypes.default_int())
    at = pnp.argmax(count, axis=-1)[:, None]
    return (pnp.take_along_axis(s, at, axis=-1)[:, 0],
            pnp.take_along_axis(count, at, axis=-1)[:, 0])


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along ``axis`` (the smallest one among ties) and its count.

    Args:
      a: array.
      axis: an int, or None for all elements, default 0.
      nan_policy: ``"propagate"`` only (NaNs are counted as one value), as JAX.
      keepdims: keep the reduced axis with size 1.

    Returns:
      ``ModeResult(mode, count)``; an empty axis gives NaN and a count of 0 (floats).

    Example:
      >>> pto.scipy.stats.mode(pnp.array([2, 4, 1, 1, 3, 4, 4]))
      ModeResult(mode=Array(4, dtype=int32), count=Array(3, dtype=int32))
    """
    x = pnp.atleast_1d(asarray(a, op="mode"))
    _check_nan_policy("mode", nan_policy)
    if axis is not None:
        axis = normalize_axis("mode", axis, x.ndim)
    if axis is None:
        shape = (1,) * x.ndim if keepdims else ()
        x, axis = pnp.ravel(x), 0
    else:
        shape = tuple(1 if i == axis else n for i, n in enumerate(x.shape) if keepdims or
                      i != axis)
    if x.shape[axis] == 0:
        float_dtype = dtypes.default_float()
        return ModeResult(pnp.full(shape, np.nan, float_dtype), pnp.zeros(shape, float_dtype))
    x = pnp.moveaxis(x, axis, -1)
    values, counts = _mode_of_rows(x.reshape(-1, x.shape[-1]))
    return ModeResult(values.reshape(shape), counts.reshape(shape))


def _ranks(a, method):
    """The ranks of the 1-D ``a`` by ``method``, in the default float dtype."""
    out_dtype = dtypes.default_float()
    n = a.size
    ordered, sorter = lax.sort_key_val(a, pnp.arange(n))
    inverse = pnp.zeros_like(sorter).at[sorter].set(pnp.arange(n, dtype=sorter.dtype))
    if method == "ordinal":
        ranks = (inverse + 1).astype(out_dtype)
    else:
        new = pnp.concatenate([pnp.array([True]), ordered[1:] != ordered[:-1]])
        dense = pnp.cumsum(new)[inverse]
        if method == "dense":
            ranks = dense.astype(out_dtype)
        else:
            count = pnp.nonzero(new, size=n + 1, fill_value=n)[0].astype(out_dtype)
            if method == "max":
                ranks = count[dense]
            elif method == "min":
                ranks = count[dense - 1] + 1
            else:
                ranks = 0.5 * (count[dense] + count[dense - 1] + 1)
    return pnp.where(pnp.any(pnp.isnan(a)), np.nan, ranks).astype(out_dtype)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks (from 1) of the values of ``a``, ties resolved by ``method``.

    Args:
      a: array.
      method: ``"average"`` (default), ``"min"``, ``"max"``, ``"dense"`` or ``"ordinal"``, as
        SciPy's.
      axis: rank along this axis; None (default) ranks all elements (flattened).
      nan_policy: ``"propagate"`` only (any NaN makes every rank NaN), as JAX.

    Returns:
      An array of the default float dtype, flat for ``axis=None``, else of ``a``'s shape.

    Example:
      >>> pto.scipy.stats.rankdata(pnp.array([1, 3, 2, 3]))
      Array([1. , 3.5, 2. , 3.5], dtype=float32)
    """
    a = asarray(a, op="rankdata")
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'")
    if axis is not None:
        return pnp.apply_along_axis(rankdata, axis, a, method)
    return _ranks(pnp.ravel(a), method)
