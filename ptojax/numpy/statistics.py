"""Statistics: ``average``, ``quantile``/``percentile``/``median`` and their NaN-ignoring
forms, ``cov``, ``corrcoef`` — JAX's definitions, composed of sort, gather and reductions.

Quantiles sort the reduced axis and interpolate between the two order statistics around
``q * (n - 1)`` (``n``: the slice's length, or its number of non-NaN values for the nan*
forms); a slice holding a NaN gives NaN (nan* forms: only an all-NaN slice).
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.numpy._axes import normalize_axes
from ptojax.numpy._promote import (asarray, broadcast_to_shape, convert, promote_args,
                                   promote_dtypes, supported_dtype)
from ptojax.numpy import math as ew
from ptojax.numpy import reductions as red
from ptojax.numpy.indexing import take_along_axis
from ptojax.numpy.products import dot
from ptojax.numpy.manipulation import atleast_2d, concatenate, diagonal, reshape
from ptojax.ops.dimension_size import dimension_size
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


# average ---------------------------------------------------------------------------------------
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The (weighted) mean over ``axis``; ``returned=True`` also gives the sum of the weights
    (broadcast to the result's shape). 1-D weights apply along a single ``axis``."""
    if weights is None:
        (a,) = promote_args("average", a, kind="float")
        axes = normalize_axes("average", axis, a.ndim)
        avg = red.mean(a, axes, keepdims=keepdims)
        total = float(math.prod(a.shape[d] for d in axes))
        weights_sum = lax.broadcast_in_dim(np.asarray(total, avg.dtype), tuple(avg.shape), ())
    else:
        a, weights = promote_dtypes("average", a, weights, kind="float")
        axes = normalize_axes("average", axis, a.ndim)
        if tuple(weights.shape) != tuple(a.shape):
            weights = _weights_along(a, weights, axis, axes)
        weights_sum = red.sum(weights, axes, keepdims=keepdims)
        avg = ew.divide(red.sum(ew.multiply(a, weights), axes, keepdims=keepdims), weights_sum)
    if returned:
        return avg, broadcast_to_shape(weights_sum, tuple(avg.shape), "average")
    return avg


def _weights_along(a, weights, axis, axes):
    if axis is None:
        raise ShapeError(f"average: weights {weights.aval} differ in shape from {a.aval}; "
                         f"give the axis they apply along", user_frame())
    if tuple(weights.shape) != tuple(a.shape[d] for d in axes):
        raise ShapeError(f"average: weights {weights.aval} must have the shape of {a.aval} "
                         f"or its sizes along axis {axis}", user_frame())
    return lax.broadcast_in_dim(weights, tuple(a.shape), axes)


# quantiles -------------------------------------------------------------------------------------
def _reduced_last(name, a, axis, keepdims):
    """``a`` with the reduced axes merged into one last axis, and the shape a result with
    kept dimensions has (None: the reduced shape as is)."""
    if axis is None:
        return reshape(a, (a.size,)), ((1,) * a.ndim if keepdims else None)
    axes = normalize_axes(name, axis, a.ndim)
    kept = [d for d in range(a.ndim) if d not in axes]
    x = lax.transpose(a, tuple(kept) + axes)
    x = reshape(x, tuple(a.shape[d] for d in kept) + (math.prod(a.shape[d] for d in axes),))
    keep_shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape))
    return x, (keep_shape if keepdims else None)


def _quantile(name, a, q, axis, method, keepdims, squash_nans, weights=None):
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {', '.join(_METHODS)}, got "
                         f"{method!r}")
    (a,) = promote_args(name, a, kind="float")
    (q,) = promote_args(name, q, kind="float")
    # interpolation happens in q's dtype (as JAX), or in float64 for float64 data
    q = convert(q, a.dtype if a.dtype == dtypes.float64 else q.dtype)
    if q.ndim > 1:
        raise ShapeError(f"{name}: q must be a scalar or 1-D, got {q.aval}", user_frame())
    if weights is not None and method != "inverted_cdf":
        raise UnsupportedError(f"{name}: weights are only supported with "
                               f"method='inverted_cdf', got method={method!r}", user_frame())
    x, keep_shape = _reduced_last(name, a, axis, keepdims)
    if weights is not None:
        weights = _quantile_weights(name, a, convert(weights, a.dtype), axis)
        weights, _ = _reduced_last(name, weights, axis, keepdims)
    n = x.shape[-1]
    nans = ew.isnan(x)
    if squash_nans:
        present = lax.convert_element_type(lax.bitwise_not(nans), q.dtype)
        count = red.sum(present, -1)              # per slice
    else:
        x = ew.where(red.any(nans, -1, keepdims=True), convert(float("nan"), x.dtype), x)
        count = lax.broadcast_in_dim(dimension_size(n, q.dtype), tuple(x.shape[:-1]), ())
    if weights is not None or method == "inverted_cdf":
        result = _inverted_cdf(x, q, count, nans, weights, squash_nans)
    else:
        result = _interpolated(x, q, count, method)
    result = lax.convert_element_type(result, a.dtype)
    if keep_shape is not None:
        result = reshape(result, tuple(q.shape) + keep_shape)
    return result


def _last_first(x):
    """``x`` with its last axis moved to the front."""
    return lax.transpose(x, (x.ndim - 1,) + tuple(range(x.ndim - 1)))


def _q_shaped(result, q):
    """A result whose first axis runs over the flattened ``q``, given ``q``'s shape."""
    return lax.reshape(result, tuple(q.shape) + tuple(result.shape[1:]))


def _order_statistics(x_sorted, positions):
    """``x_sorted[..., positions]``: positions is ``rest + (k,)`` int32; the result is
    ``(k,) + rest``."""
    return _last_first(take_along_axis(x_sorted, positions, -1, mode="clip"))


def _per_q(q, count):
    """``q`` against each slice's ``count``: shape ``rest + (len(q),)``."""
    qv = lax.reshape(q, (q.size,))
    shape = tuple(count.shape) + (q.size,)
    return (lax.broadcast_in_dim(qv, shape, (len(shape) - 1,)),
            lax.broadcast_in_dim(count, shape, tuple(range(count.ndim))))


def _interpolated(x, q, count, method):
    x_sorted = lax.sort(x, dimension=x.ndim - 1)
    qs, counts = _per_q(q, count)
    last = lax.sub(counts, 1.0)
    position = lax.mul(qs, last)
    low, high = lax.floor(position), lax.ceil(position)
    high_weight = lax.sub(position, low)
    low_weight = lax.sub(1.0, high_weight)
    zero = lax.mul(last, 0.0)
    to_index = lambda p: lax.convert_element_type(lax.max(zero, lax.min(p, last)),
                                                  dtypes.int32)
    low_value = _order_statistics(x_sorted, to_index(low))
    high_value = _order_statistics(x_sorted, to_index(high))
    low_weight, high_weight = _last_first(low_weight), _last_first(high_weight)
    if method == "linear":
        compute = q.dtype
        result = lax.add(lax.mul(lax.convert_element_type(low_value, compute), low_weight),
                         lax.mul(lax.convert_element_type(high_value, compute), high_weight))
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        result = lax.select(lax.le(high_weight, 0.5), low_value, high_value)
    else:  # midpoint
        result = lax.mul(lax.add(low_value, high_value), 0.5)
    return _q_shaped(result, q)


def _quantile_weights(name, a, weights, axis):
    if tuple(weights.shape) == tuple(a.shape):
        return weights
    if axis is None:
        raise ShapeError(f"{name}: weights {weights.aval} must have the shape of {a.aval} "
                         f"when axis is None", user_frame())
    axes = normalize_axes(name, axis, a.ndim)
    if tuple(weights.shape) != tuple(a.shape[d] for d in axes):
        raise ShapeError(f"{name}: weights {weights.aval} must match the reduced axes of "
                         f"{a.aval}", user_frame())
    return lax.broadcast_in_dim(weights, tuple(a.shape), axes)


def _inverted_cdf(x, q, count, nans, weights, squash_nans):
    """The first order statistic whose cumulative weight reaches ``q`` of the total
    (negative or NaN weights make the slice NaN)."""
    if weights is None:
        weights = lax.broadcast_in_dim(np.asarray(1, x.dtype), tuple(x.shape), ())
    x_sorted, weights = lax.sort((x, weights), dimension=x.ndim - 1, num_keys=1)
    nans_sorted = ew.isnan(x_sorted)
    bad = lax.bitwise_or(lax.lt(weights, 0.0), ew.isnan(weights))
    clean = ew.where(lax.bitwise_or(bad, nans_sorted), convert(0.0, weights.dtype), weights)
    cumulative = lax.cumsum(clean, x.ndim - 1)
    total = lax.slice_in_dim(cumulative, x.shape[-1] - 1, x.shape[-1], 1, x.ndim - 1)
    qs, counts = _per_q(q, count)
    target = lax.mul(convert(qs, weights.dtype), broadcast_to_shape(total, tuple(qs.shape)))
    below = ew.less(lax.expand_dims(cumulative, (x.ndim,)),  # rest + (n, k)
                    lax.expand_dims(target, (x.ndim - 1,)))
    index = red.sum(below, x.ndim - 1)                       # rest + (k,)
    last = lax.convert_element_type(lax.sub(counts, 1.0), dtypes.int32)
    result = _order_statistics(x_sorted, lax.max(lax.min(index, last), 0))
    if squash_nans:
        force_nan = lax.bitwise_or(red.any(bad, -1), lax.eq(count, 0))
    else:
        force_nan = lax.bitwise_or(red.any(bad, -1), red.any(nans, -1))
    result = ew.where(broadcast_to_shape(force_nan, tuple(result.shape)),
                     convert(float("nan"), result.dtype), result)
    return _q_shaped(result, q)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The ``q``-th quantiles (0 <= q <= 1) over ``axis``; the result has ``q``'s shape in
    front. ``weights`` only with method="inverted_cdf"."""
    _no_out_or_overwrite("quantile", out, overwrite_input)
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """``quantile`` ignoring NaNs (NaN only for an all-NaN slice)."""
    _no_out_or_overwrite("nanquantile", out, overwrite_input)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """``quantile`` with ``q`` in percent."""
    _no_out_or_overwrite("percentile", out, overwrite_input)
    return _quantile("percentile", a, _percent(q), axis, method, keepdims, False, weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """``nanquantile`` with ``q`` in percent."""
    _no_out_or_overwrite("nanpercentile", out, overwrite_input)
    return _quantile("nanpercentile", a, _percent(q), axis, method, keepdims, True, weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median over ``axis`` (the midpoint of the two middle values)."""
    _no_out_or_overwrite("median", out, overwrite_input)
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``median`` ignoring NaNs."""
    _no_out_or_overwrite("nanmedian", out, overwrite_input)
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True)


def _percent(q):
    (q,) = promote_args("percentile", q, kind="float")
    return ew.true_divide(q, 100)


def _no_out_or_overwrite(name, out, overwrite_input):
    if out is not None or overwrite_input:
        raise UnsupportedError(f"{name}: out= and overwrite_input=True are not supported "
                               f"(ptojax arrays are immutable)", user_frame())


# covariance ------------------------------------------------------------------------------------
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """The covariance matrix of the variables (rows, or columns with ``rowvar=False``) of
    ``m`` (and ``y``); a single variable gives a 0-d result."""
    promoted = promote_dtypes("cov", *((m,) if y is None else (m, y)), kind="float")
    if any(v.ndim > 2 for v in promoted):
        raise ShapeError(f"cov: inputs must have at most 2 dimensions, got "
                         f"{', '.join(str(v.aval) for v in promoted)}", user_frame())
    x = atleast_2d(promoted[0])
    if not rowvar and promoted[0].ndim != 1:
        x = lax.transpose(x, (1, 0))
    if x.shape[0] == 0:
        return lax.broadcast_in_dim(np.asarray(0, x.dtype), (0, 0), ())
    if y is not None:
        yy = atleast_2d(promoted[1])
        if not rowvar and yy.shape[0] != 1:
            yy = lax.transpose(yy, (1, 0))
        x = concatenate([x, yy], 0)
    if x.shape[1] == 0:
        shape = () if x.shape[0] == 1 else (x.shape[0], x.shape[0])
        return lax.broadcast_in_dim(np.asarray(np.nan, x.dtype), shape, ())
    if ddof is None:
        ddof = 0 if bias else 1
    w = _cov_weights(x, fweights, aweights)
    if dtype is not None:
        x = convert(x, supported_dtype(dtype, "cov"))
        w = convert(w, x.dtype) if w is not None else None
    avg, w_sum = average(x, axis=1, weights=None if w is None else
                         lax.broadcast_in_dim(w, tuple(x.shape), (1,)), returned=True)
    w_sum = lax.index_in_dim(w_sum, 0, 0, keepdims=False)
    if w is None:
        f = float(x.shape[1] - ddof)
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = ew.subtract(w_sum, ddof)
    else:
        aw = ew.absolute(asarray(aweights, op="cov"))
        f = ew.subtract(w_sum, ew.divide(ew.multiply(ddof, red.sum(ew.multiply(w, aw))), w_sum))
    centered = ew.subtract(x, lax.expand_dims(avg, (1,)))
    weighted = centered if w is None else ew.multiply(centered, w)
    out = ew.true_divide(dot(centered, lax.transpose(weighted, (1, 0))), f)
    return _squeeze_all(out)


def _cov_weights(x, fweights, aweights):
    n = x.shape[1]
    w = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        weights = asarray(weights, op="cov")
        if weights.ndim > 1 or weights.shape[0] != n:
            raise ShapeError(f"cov: {name} must be 1-D with one weight per observation "
                             f"({n}), got {weights.aval}", user_frame())
        if name == "fweights" and not dtypes.is_integer(weights.dtype):
            raise TypeError(f"cov: fweights must be integers, got {weights.aval}")
        weights = ew.absolute(weights)
        w = weights if w is None else ew.multiply(w, weights)
    return w


def _squeeze_all(x):
    return lax.squeeze(x, tuple(d for d, n in enumerate(x.shape) if n == 1))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients (``cov`` normalized by the standard deviations,
    clipped to [-1, 1])."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ew.divide(c, c)
    stddev = ew.sqrt(diagonal(c))
    c = ew.divide(ew.divide(c, lax.expand_dims(stddev, (1,))), lax.expand_dims(stddev, (0,)))
    return ew.clip(c, -1, 1)


__all__ = ["average", "corrcoef", "cov", "median", "nanmedian", "nanpercentile",
           "nanquantile", "percentile", "quantile"]


_add_examples(globals(), """
average:
    >>> pnp.average(pnp.array([1.0, 2.0, 3.0]), weights=pnp.array([3.0, 1.0, 0.0]))
    Array(1.25, dtype=float32)
corrcoef:
    >>> pnp.corrcoef(pnp.array([1.0, 2.0, 3.0]), pnp.array([2.0, 4.0, 7.0]))
    Array([[1.       , 0.9933992],
           [0.9933992, 0.9999999]], dtype=float32)
cov:
    >>> pnp.cov(pnp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]))
    Array([[1., 2.],
           [2., 4.]], dtype=float32)
median:
    >>> pnp.median(pnp.array([3.0, 1.0, 4.0, 2.0]))
    Array(2.5, dtype=float32)
nanmedian:
    >>> pnp.nanmedian(pnp.array([3.0, pnp.nan, 1.0]))
    Array(2., dtype=float32)
percentile:
    >>> pnp.percentile(pnp.array([1.0, 2.0, 3.0, 4.0]), 50)
    Array(2.5, dtype=float32)
nanpercentile:
    >>> pnp.nanpercentile(pnp.array([1.0, pnp.nan, 3.0]), 50)
    Array(2., dtype=float32)
quantile:
    >>> pnp.quantile(pnp.array([1.0, 2.0, 3.0, 4.0]), pnp.array([0.25, 0.75]))
    Array([1.75, 3.25], dtype=float32)
nanquantile:
    >>> pnp.nanquantile(pnp.array([1.0, pnp.nan, 3.0]), 0.5)
    Array(2., dtype=float32)
""")
