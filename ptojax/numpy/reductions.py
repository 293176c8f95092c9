"""Reductions of ``ptojax.numpy``: sum/mean/var/std/max/min/prod/argmax/argmin/any/all and
cumulative sums/products, with ``axis``, ``keepdims``, ``where`` and ``initial``.

f16/bf16/f8 means and variances are computed in f32 and rounded once at the end, as in JAX.
"""
from __future__ import annotations

import math


from ptojax import dtypes, lax
from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.numpy._axes import normalize_axes, single_axis
from ptojax.numpy._promote import (asarray, broadcast_to_shape, convert, supported_dtype,
                                   to_inexact)
from ptojax.source_info import user_frame


def _no_out(name, out):
    if out is not None:
        raise UnsupportedError(f"{name}: the out= argument is not supported (ptojax arrays are "
                               f"immutable); use the returned array", user_frame())


def _keep(out, x, axes, keepdims):
    if not keepdims:
        return out
    return lax.reshape(out, tuple(1 if d in axes else n for d, n in enumerate(x.shape)))


def _sum_dtype(dtype):
    """Sums of bools and narrow integers accumulate in the default integer width."""
    if dtype == dtypes.bool_ or (dtypes.is_integer(dtype) and dtype.itemsize < 4):
        return dtypes.uint32 if dtypes.is_unsigned(dtype) else dtypes.int32
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


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out("sum", out)
    a = asarray(a, op="sum")
    axes = normalize_axes("sum", axis, a.ndim)
    x = _where_fill("sum", convert(a, _result_dtype("sum", a, dtype, _sum_dtype)), where, 0)
    result = lax.reduce_sum(x, axes)
    if initial is not None:
        result = lax.add(result, convert(initial, result.dtype))
    return _keep(result, a, axes, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out("prod", out)
    a = asarray(a, op="prod")
    axes = normalize_axes("prod", axis, a.ndim)
    x = _where_fill("prod", convert(a, _result_dtype("prod", a, dtype, _sum_dtype)), where, 1)
    result = lax.reduce_prod(x, axes)
    if initial is not None:
        result = lax.mul(result, convert(initial, result.dtype))
    return _keep(result, a, axes, keepdims)


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
            return _keep(lax_reduce(a, axes), a, axes, keepdims)
        fill = convert(initial, a.dtype)
        result = lax_combine(lax_reduce(_where_fill(name, a, where, fill), axes), fill)
        return _keep(result, a, axes, keepdims)
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
        return _keep(lax_reduce(_where_fill(name, b, where, identity), axes), a, axes,
                     keepdims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Whether {name} elements over ``axis`` are nonzero."
    return fn


all = _logical_reduction("all", lax.reduce_and, True)
any = _logical_reduction("any", lax.reduce_or, False)


def _count(name, a, axes, where, dtype):
    """How many elements each reduction sees: a Python number, or an array under ``where``."""
    if where is None:
        return float(math.prod(a.shape[d] for d in axes))
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
    return _keep(convert(result, result_dtype), a, axes, keepdims)


def _variance_dtype(dtype):
    """Variances are real: of complex values, the mean squared magnitude (as JAX)."""
    return dtypes.real_dtype(to_inexact(dtype))


def _variance(name, a, axis, dtype, ddof, where):
    a = asarray(a, op=name)
    axes = normalize_axes(name, axis, a.ndim)
    result_dtype = _result_dtype(name, a, dtype, _variance_dtype)
    if dtypes.is_complex(a.dtype) and dtype is not None and not dtypes.is_complex(result_dtype):
        raise DtypeError(f"{name}: a real dtype ({result_dtype}) for the variance of complex "
                         f"values is not supported (as in JAX); leave dtype out for a real "
                         f"result", user_frame())
    compute = _computation_dtype(result_dtype)
    x = convert(a, dtypes.complex_dtype(compute) if dtypes.is_complex(a.dtype) else compute)
    centre = mean(x, axes, keepdims=True, where=where)
    centered = lax.sub(x, broadcast_to_shape(centre, x.shape))
    if dtypes.is_complex(x.dtype):
        squares = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        squares = lax.mul(centered, centered)
    squares = _where_fill(name, squares, where, 0)
    count = _count(name, a, axes, where, squares.dtype)
    normalizer = count - ddof if where is None else lax.sub(count, float(ddof))
    if where is None and normalizer <= 0:
        normalizer = float("nan")
    return lax.div(lax.reduce_sum(squares, axes), normalizer), result_dtype, axes, a


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    _no_out("var", out)
    result, result_dtype, axes, a = _variance("var", a, axis, dtype, ddof, where)
    return _keep(convert(result, result_dtype), a, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None):
    _no_out("std", out)
    result, result_dtype, axes, a = _variance("std", a, axis, dtype, ddof, where)
    return _keep(convert(lax.sqrt(result), result_dtype), a, axes, keepdims)


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
            result = lax_fn(lax.reshape(a, (a.size,)), 0)
            return lax.reshape(result, (1,) * a.ndim) if keepdims else result
        result = lax_fn(a, ax)
        return lax.expand_dims(result, (ax,)) if keepdims else result
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Index (int32) of the first {name[3:]}imum along ``axis`` (NaN counts as " \
                 f"the extremum)."
    return fn


argmax = _arg(lax.argmax, "argmax")
argmin = _arg(lax.argmin, "argmin")


def _cumulative_dtype(dtype):
    """Cumulative ops keep the input dtype (as JAX), except that bools count in int32."""
    return dtypes.int32 if dtype == dtypes.bool_ else dtype


def _cumulative(lax_fn, name):
    def fn(a, axis=None, dtype=None):
        a = asarray(a, op=name)
        if axis is None:
            a, axis = lax.reshape(a, (a.size,)), 0
        ax = single_axis(name, axis, a.ndim)
        return lax_fn(convert(a, _result_dtype(name, a, dtype, _cumulative_dtype)), ax)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Cumulative {name[3:]} along ``axis`` (flattened when axis is None)."
    return fn


cumsum = cumulative_sum = _cumulative(lax.cumsum, "cumsum")
cumprod = cumulative_prod = _cumulative(lax.cumprod, "cumprod")


def ptp(a, axis=None, out=None, keepdims=False):
    return lax.sub(max(a, axis, out, keepdims), min(a, axis, out, keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    a = asarray(a, op="count_nonzero")
    axes = normalize_axes("count_nonzero", axis, a.ndim)
    return sum(lax.ne(a, 0), axes, keepdims=keepdims)


__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod",
           "cumsum", "cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "ptp",
           "std", "sum", "var"]
