"""Reductions of ``ptojax.numpy``: sum/mean/var/std/max/min/prod/argmax/argmin/any/all and
cumulative sums/products, with ``axis``, ``keepdims``, ``where`` and ``initial``.

f16/bf16/f8 means and variances are computed in f32 and rounded once at the end, as in JAX.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import AxisError, DtypeError, ShapeError, UnsupportedError
from ptojax.ir.symbolic import is_symbolic
from ptojax.ops.dimension_size import dimension_size
from ptojax.numpy._constants import strong
from ptojax.numpy._axes import normalize_axes, single_axis
from ptojax.numpy._promote import (asarray, broadcast_shapes, broadcast_to_shape, convert,
                                   supported_dtype, to_inexact)
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def _no_out(name, out):
    if out is not None:
        raise UnsupportedError(f"{name}: the out= argument is not supported (ptojax arrays are "
                               f"immutable); use the returned array", user_frame())


def _keep(out, x, axes, keepdims):
    if not keepdims:
        return out
    return lax.reshape(out, tuple(1 if d in axes else n for d, n in enumerate(x.shape)))


def _sum_dtype(dtype, promote_integers=True):
    """Sums of bools count in the default integer (int32; int64 in x64 mode); narrower
    integers accumulate in the default integer width unless ``promote_integers=False``."""
    default = dtypes.default_int()
    if dtype == dtypes.bool_:
        return default
    if promote_integers and dtypes.is_integer(dtype) and dtype.itemsize < default.itemsize:
        return dtypes.default_uint() if dtypes.is_unsigned(dtype) else default
    return dtype


def _computation_dtype(dtype):
    """Means and variances of narrow floats are computed in f32."""
    return dtypes.float32 if dtypes.is_float(dtype) and dtype.itemsize < 4 else dtype


def _where_fill(name, x, where, fill):
    if where is None:
        return x
    mask = broadcast_to_shape(asarray(where, op=name), x.shape, name)
    return lax.select(mask if mask.dtype == dtypes.bool_ else lax.ne(mask, 0), x,
                      convert(fill, x.dtype))


def _result_dtype(name, a, dtype, default):
    return supported_dtype(dtype, name) if dtype is not None else default(a.dtype)


def _additive(name, lax_reduce, lax_combine, identity):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
           promote_integers=True):
        _no_out(name, out)
        a = asarray(a, op=name)
        axes = normalize_axes(name, axis, a.ndim)
        result_dtype = _result_dtype(name, a, dtype,
                                     lambda d: _sum_dtype(d, promote_integers))
        x = _where_fill(name, convert(a, result_dtype), where, identity)
        result = lax_reduce(x, axes)
        if initial is not None:
            result = lax_combine(result, convert(initial, result.dtype))
        return _keep(strong(result), a, axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {name} over ``axis``; bools and narrow integers accumulate in 32 bits "
                  f"unless ``promote_integers=False`` (as JAX).")
    return fn


sum = _additive("sum", lax.reduce_sum, lax.add, 0)
prod = _additive("prod", lax.reduce_prod, lax.mul, 1)


def _extremum(name, lax_reduce, lax_combine):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _no_out(name, out)
        a = asarray(a, op=name)
        axes = normalize_axes(name, axis, a.ndim)
        if initial is None:
            if where is not None:
                raise ShapeError(f"{name}: a where= mask needs an initial= value (the maximum "
                                 f"or minimum of nothing is undefined)", user_frame())
            if math.prod(a.shape[d] for d in axes) == 0:
                raise ShapeError(f"{name}: reducing axes {axes} of the empty {a.aval} has no "
                                 f"result; pass initial= or reduce a non-empty array",
                                 user_frame())
            return _keep(strong(lax_reduce(a, axes)), a, axes, keepdims)
        fill = convert(initial, a.dtype)
        result = lax_combine(lax_reduce(_where_fill(name, a, where, fill), axes), fill)
        return _keep(strong(result), a, axes, keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The {name}imum over ``axis`` (NaN propagates)."
    return fn


max = amax = _extremum("max", lax.reduce_max, lax.max)
min = amin = _extremum("min", lax.reduce_min, lax.min)


def _logical_reduction(name, lax_reduce, identity):
    def fn(a, axis=None, out=None, keepdims=False, *, where=None):
        _no_out(name, out)
        a = asarray(a, op=name)
        axes = normalize_axes(name, axis, a.ndim)
        b = a if a.dtype == dtypes.bool_ else lax.ne(a, 0)
        return _keep(strong(lax_reduce(_where_fill(name, b, where, identity), axes)), a, axes,
                     keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Whether {name} elements over ``axis`` are nonzero."
    return fn


all = _logical_reduction("all", lax.reduce_and, True)
any = _logical_reduction("any", lax.reduce_or, False)


def _count(name, a, axes, where, dtype):
    """How many elements each reduction sees: a Python number, or an array under ``where``."""
    if where is None:
        n = math.prod(a.shape[d] for d in axes)
        return dimension_size(n, dtype) if is_symbolic(n) else float(n)
    mask = broadcast_to_shape(asarray(where, op=name), a.shape, name)
    return lax.reduce_sum(lax.convert_element_type(lax.ne(mask, 0) if mask.dtype !=
                                                   dtypes.bool_ else mask, dtype), axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out("mean", out)
    a = asarray(a, op="mean")
    axes = normalize_axes("mean", axis, a.ndim)
    result_dtype = _result_dtype("mean", a, dtype, to_inexact)
    compute = _computation_dtype(result_dtype)
    x = _where_fill("mean", convert(a, compute), where, 0)
    result = lax.div(lax.reduce_sum(x, axes), _count("mean", a, axes, where, compute))
    return _keep(strong(convert(result, result_dtype)), a, axes, keepdims)


def _variance_dtype(dtype):
    """Variances are real: of complex values, the mean squared magnitude (as JAX)."""
    return dtypes.real_dtype(to_inexact(dtype))


def _variance(name, a, axis, dtype, ddof, where, mean_value, correction):
    if correction is None:
        correction = ddof
    elif ddof != 0:
        raise ValueError(f"{name}: ddof and correction cannot both be given")
    a = asarray(a, op=name)
    axes = normalize_axes(name, axis, a.ndim)
    result_dtype = _result_dtype(name, a, dtype, _variance_dtype)
    if dtypes.is_complex(a.dtype) and dtype is not None and not dtypes.is_complex(result_dtype):
        raise DtypeError(f"{name}: a real dtype ({result_dtype}) for the variance of complex "
                         f"values is not supported (as in JAX); leave dtype out for a real "
                         f"result", user_frame())
    compute = _computation_dtype(result_dtype)
    x = convert(a, dtypes.complex_dtype(compute) if dtypes.is_complex(a.dtype) else compute)
    if mean_value is None:
        centre = mean(x, axes, keepdims=True, where=where)
    else:
        centre = convert(mean_value, x.dtype)
    shape = broadcast_shapes(name, tuple(x.shape), tuple(centre.shape))
    centered = lax.sub(broadcast_to_shape(x, shape), broadcast_to_shape(centre, shape))
    if dtypes.is_complex(x.dtype):
        squares = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        squares = lax.mul(centered, centered)
    squares = _where_fill(name, squares, where, 0)
    count = _count(name, a, axes, where, squares.dtype)
    static = type(count) is float   # else counted by the program (where=, symbolic sizes)
    normalizer = count - correction if static else lax.sub(count, float(correction))
    total = lax.reduce_sum(squares, axes)
    if static:
        result = lax.div(total, normalizer if normalizer > 0 else float("nan"))
    else:
        result = lax.select(lax.gt(normalizer, 0), lax.div(total, normalizer),
                            lax.add(lax.mul(total, 0), float("nan")))
    return result, result_dtype, axes, a


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    _no_out("var", out)
    result, result_dtype, axes, a = _variance("var", a, axis, dtype, ddof, where, mean,
                                              correction)
    return _keep(strong(convert(result, result_dtype)), a, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    _no_out("std", out)
    result, result_dtype, axes, a = _variance("std", a, axis, dtype, ddof, where, mean,
                                              correction)
    return _keep(strong(convert(lax.sqrt(result), result_dtype)), a, axes, keepdims)


def _arg(lax_fn, name):
    def fn(a, axis=None, out=None, keepdims=False):
        _no_out(name, out)
        a = asarray(a, op=name)
        flat = axis is None
        ax = 0 if flat else single_axis(name, axis, a.ndim)
        if (a.size if flat else a.shape[ax]) == 0:
            where = f"the empty {a.aval}" if flat else f"axis {ax} of {a.aval}"
            raise ShapeError(f"{name}: {where} has no elements, so no {name[3:]}imum",
                             user_frame())
        if flat:
            result = lax_fn(lax.reshape(a, (a.size,)), 0, dtypes.default_int())
            return lax.reshape(result, (1,) * a.ndim) if keepdims else result
        result = lax_fn(a, ax, dtypes.default_int())
        return lax.expand_dims(result, (ax,)) if keepdims else result
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Index (int32; int64 in x64 mode) of the first {name[3:]}imum along ``axis`` (NaN counts as " \
                 f"the extremum)."
    return fn


argmax = _arg(lax.argmax, "argmax")
argmin = _arg(lax.argmin, "argmin")


def cumulate(name, lax_fn, a, axis, dtype, promote_integers=False):
    """``lax_fn`` (cumsum/cumprod) along ``axis`` (flattened when None), JAX's dtype rules:
    the input dtype, bools counted in int32, narrow integers in 32 bits with
    ``promote_integers``; ``dtype=bool`` accumulates the nonzero flags and reports where the
    total is nonzero."""
    if axis is None or a.ndim == 0:
        a = lax.reshape(a, (a.size,))
        axis = 0 if axis is None else axis
    ax = single_axis(name, axis, a.ndim)
    if dtype is not None and supported_dtype(dtype, name) == dtypes.bool_:
        flags = a if a.dtype == dtypes.bool_ else lax.ne(a, 0)
        total = lax_fn(lax.convert_element_type(flags, dtypes.int32), ax)
        return lax.ne(total, 0)
    return strong(lax_fn(convert(a, _result_dtype(name, a, dtype, lambda d: _sum_dtype(
        d, promote_integers))), ax))


def _cumulative(lax_fn, name):
    def fn(a, axis=None, dtype=None, out=None):
        _no_out(name, out)
        return cumulate(name, lax_fn, asarray(a, op=name), axis, dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Cumulative {name[3:]} along ``axis`` (flattened when axis is None)."
    return fn


cumsum = _cumulative(lax.cumsum, "cumsum")
cumprod = _cumulative(lax.cumprod, "cumprod")


def _array_api_cumulative(lax_fn, name, identity, promote_integers):
    def fn(x, /, *, axis=None, dtype=None, include_initial=False):
        x = asarray(x, op=name)
        if x.ndim == 0:
            raise ShapeError(f"{name}: the input must have at least one dimension, got "
                             f"{x.aval}", user_frame())
        if axis is None:
            if x.ndim > 1:
                raise AxisError(f"{name}: axis is required for an input of rank {x.ndim} "
                                f"(it may only be omitted for 1-D inputs)", user_frame())
            axis = 0
        axis = single_axis(name, axis, x.ndim)
        out = cumulate(name, lax_fn, x, axis, dtype, promote_integers)
        if include_initial:
            shape = tuple(1 if d == axis else n for d, n in enumerate(out.shape))
            first = lax.broadcast_in_dim(np.asarray(identity, out.dtype), shape, ())
            out = lax.concatenate([first, out], axis)
        return out
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The array API's cumulative {name[11:]} along ``axis`` (required unless "
                  f"1-D); ``include_initial`` prepends the identity.")
    return fn


cumulative_sum = _array_api_cumulative(lax.cumsum, "cumulative_sum", 0, True)
cumulative_prod = _array_api_cumulative(lax.cumprod, "cumulative_prod", 1, False)


def ptp(a, axis=None, out=None, keepdims=False):
    return lax.sub(max(a, axis, out, keepdims), min(a, axis, out, keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    a = asarray(a, op="count_nonzero")
    axes = normalize_axes("count_nonzero", axis, a.ndim)
    return sum(lax.ne(a, 0), axes, keepdims=keepdims)


__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod",
           "cumsum", "cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "ptp",
           "std", "sum", "var"]


_add_examples(globals(), """
count_nonzero: The number of nonzero elements of ``a`` along ``axis`` (all by default).
    >>> pnp.count_nonzero(pnp.arange(6).reshape(2, 3), axis=0)
    Array([1, 2, 2], dtype=int32)
mean: The arithmetic mean along ``axis`` (all elements by default), in a float dtype; ``where``
    selects the elements counted.
    >>> pnp.mean(pnp.arange(6).reshape(2, 3), axis=1)
    Array([1., 4.], dtype=float32)
ptp: Peak to peak: ``max - min`` along ``axis``.
    >>> pnp.ptp(pnp.arange(6).reshape(2, 3), axis=1)
    Array([2, 2], dtype=int32)
std: The standard deviation along ``axis``, with ``ddof`` delta degrees of freedom.
    >>> pnp.std(pnp.array([1.0, 2.0, 3.0, 4.0]))
    Array(1.118034, dtype=float32)
    >>> pnp.std(pnp.array([1.0, 2.0, 3.0, 4.0]), ddof=1)
    Array(1.2909944, dtype=float32)
var: The variance along ``axis``, with ``ddof`` delta degrees of freedom.
    >>> pnp.var(pnp.array([1.0, 2.0, 3.0, 4.0]))
    Array(1.25, dtype=float32)
all:
    >>> pnp.all(pnp.array([[True, False], [True, True]]), axis=1)
    Array([False,  True], dtype=bool)
any:
    >>> pnp.any(pnp.array([[True, False], [False, False]]), axis=1)
    Array([ True, False], dtype=bool)
amax:
    >>> pnp.amax(pnp.array([[1, 5, 2], [4, 0, 3]]), axis=0)
    Array([4, 5, 3], dtype=int32)
amin:
    >>> pnp.amin(pnp.array([[1, 5, 2], [4, 0, 3]]), axis=0)
    Array([1, 0, 2], dtype=int32)
max:
    >>> pnp.max(pnp.array([[1, 5, 2], [4, 0, 3]]))
    Array(5, dtype=int32)
    >>> pnp.max(pnp.array([[1, 5, 2], [4, 0, 3]]), axis=1, keepdims=True)
    Array([[5],
           [4]], dtype=int32)
min:
    >>> pnp.min(pnp.array([[1, 5, 2], [4, 0, 3]]), axis=1)
    Array([1, 0], dtype=int32)
argmax:
    >>> pnp.argmax(pnp.array([[1, 5, 2], [4, 0, 3]]), axis=1)
    Array([1, 0], dtype=int32)
argmin:
    >>> pnp.argmin(pnp.array([[1, 5, 2], [4, 0, 3]]))
    Array(4, dtype=int32)
cumprod:
    >>> pnp.cumprod(pnp.array([1, 2, 3, 4]))
    Array([ 1,  2,  6, 24], dtype=int32)
cumsum:
    >>> pnp.cumsum(pnp.array([[1, 5, 2], [4, 0, 3]]), axis=1)
    Array([[1, 6, 8],
           [4, 4, 7]], dtype=int32)
cumulative_prod:
    >>> pnp.cumulative_prod(pnp.array([1, 2, 3]), include_initial=True)
    Array([1, 1, 2, 6], dtype=int32)
cumulative_sum:
    >>> pnp.cumulative_sum(pnp.array([1, 2, 3]))
    Array([1, 3, 6], dtype=int32)
prod:
    >>> pnp.prod(pnp.array([[1, 5, 2], [4, 0, 3]]), axis=0)
    Array([4, 0, 6], dtype=int32)
sum:
    >>> pnp.sum(pnp.array([[1, 5, 2], [4, 0, 3]]))
    Array(15, dtype=int32)
    >>> pnp.sum(pnp.array([[1, 5, 2], [4, 0, 3]]), axis=0)
    Array([5, 5, 5], dtype=int32)
""")
