"""Reductions of ``ptojax.numpy``: sum/mean/var/std/max/min/prod/argmax/argmin/any/all and
cumulative sums/products, with ``axis`` and ``keepdims``."""
from __future__ import annotations

import builtins

from ptojax import dtypes, lax
from ptojax.errors import AxisError
from ptojax.numpy._promote import asarray, convert, to_inexact
from ptojax.source_info import user_frame


def _axes(x, axis) -> tuple:
    if axis is None:
        return tuple(range(x.ndim))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, int) or not -x.ndim <= a < builtins.max(x.ndim, 1) or \
                (x.ndim == 0 and a not in (0, -1)):
            raise AxisError(f"axis {a} is out of bounds for an array of rank {x.ndim}",
                            user_frame(4))
        out.append(a % builtins.max(x.ndim, 1))
    if len(set(out)) != len(out):
        raise AxisError(f"repeated axis in {axis}", user_frame(4))
    return tuple(sorted(out)) if x.ndim else ()


def _keep(out, x, axes, keepdims):
    if not keepdims:
        return out
    return lax.reshape(out, tuple(1 if d in axes else n for d, n in enumerate(x.shape)))


def _sum_dtype(dtype):
    if dtype == dtypes.bool_ or (dtypes.is_integer(dtype) and dtype.itemsize < 4):
        return dtypes.uint32 if dtypes.is_unsigned(dtype) else dtypes.int32
    return dtype


def _where_fill(x, where, fill):
    if where is None:
        return x
    from ptojax.numpy.math import where as where_fn
    return where_fn(where, x, fill)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a = asarray(a)
    axes = _axes(a, axis)
    a = convert(a, dtypes.canonicalize(dtype) if dtype else _sum_dtype(a.dtype))
    a = _where_fill(a, where, 0)
    result = lax.reduce_sum(a, axes)
    if initial is not None:
        result = lax.add(result, initial)
    return _keep(result, a, axes, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a = asarray(a)
    axes = _axes(a, axis)
    a = convert(a, dtypes.canonicalize(dtype) if dtype else _sum_dtype(a.dtype))
    a = _where_fill(a, where, 1)
    result = lax.reduce_prod(a, axes)
    if initial is not None:
        result = lax.mul(result, initial)
    return _keep(result, a, axes, keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    a = asarray(a)
    axes = _axes(a, axis)
    result = lax.reduce_max(a, axes)
    if initial is not None:
        result = lax.max(result, convert(initial, a.dtype))
    return _keep(result, a, axes, keepdims)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    a = asarray(a)
    axes = _axes(a, axis)
    result = lax.reduce_min(a, axes)
    if initial is not None:
        result = lax.min(result, convert(initial, a.dtype))
    return _keep(result, a, axes, keepdims)


amax, amin = max, min


def all(a, axis=None, out=None, keepdims=False, where=None):
    a = asarray(a)
    axes = _axes(a, axis)
    b = a if a.dtype == dtypes.bool_ else lax.ne(a, 0)
    b = _where_fill(b, where, True)
    return _keep(lax.reduce_and(b, axes), a, axes, keepdims)


def any(a, axis=None, out=None, keepdims=False, where=None):
    a = asarray(a)
    axes = _axes(a, axis)
    b = a if a.dtype == dtypes.bool_ else lax.ne(a, 0)
    b = _where_fill(b, where, False)
    return _keep(lax.reduce_or(b, axes), a, axes, keepdims)


def _count(a, axes):
    import math
    return math.prod(a.shape[d] for d in axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    a = asarray(a)
    axes = _axes(a, axis)
    dt = dtypes.canonicalize(dtype) if dtype else to_inexact(a.dtype)
    total = sum(convert(a, dt), axes, where=where)
    if where is None:
        result = lax.div(total, float(_count(a, axes)))
    else:
        from ptojax.numpy._promote import broadcast_to_shape
        mask = broadcast_to_shape(asarray(where), a.shape)
        result = lax.div(total, sum(lax.convert_element_type(mask, dt), axes))
    return _keep(result, a, axes, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    a = asarray(a)
    axes = _axes(a, axis)
    dt = dtypes.canonicalize(dtype) if dtype else to_inexact(a.dtype)
    a = convert(a, dt)
    from ptojax.numpy._promote import broadcast_to_shape
    centered = lax.sub(a, broadcast_to_shape(mean(a, axes, keepdims=True), a.shape))
    sq = lax.mul(centered, centered)
    n = _count(a, axes) - ddof
    result = lax.div(sum(sq, axes), float(n) if n > 0 else float("nan"))
    return _keep(result, a, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where))


def _arg(prim_fn, name):
    def fn(a, axis=None, out=None, keepdims=False):
        a = asarray(a)
        if axis is None:
            flat = lax.reshape(a, (a.size,))
            result = prim_fn(flat, 0)
            return lax.reshape(result, (1,) * a.ndim) if keepdims else result
        (ax,) = _axes(a, axis)
        result = prim_fn(a, ax)
        return lax.expand_dims(result, (ax,)) if keepdims else result
    fn.__name__ = name
    return fn


argmax = _arg(lax.argmax, "argmax")
argmin = _arg(lax.argmin, "argmin")


def _cumulative(lax_fn, name, promote):
    def fn(a, axis=None, dtype=None):
        a = asarray(a)
        if axis is None:
            a, axis = lax.reshape(a, (a.size,)), 0
        (ax,) = _axes(a, axis)
        dt = dtypes.canonicalize(dtype) if dtype else (_sum_dtype(a.dtype) if promote
                                                       else a.dtype)
        return lax_fn(convert(a, dt), ax)
    fn.__name__ = name
    return fn


cumsum = _cumulative(lax.cumsum, "cumsum", True)
cumprod = _cumulative(lax.cumprod, "cumprod", True)
cumulative_sum, cumulative_prod = cumsum, cumprod


def ptp(a, axis=None, keepdims=False):
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    a = asarray(a)
    return sum(lax.ne(a, 0), axis, keepdims=keepdims)
