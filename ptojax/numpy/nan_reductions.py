"""Reductions that ignore NaNs: ``nansum nanprod nanmax nanmin nanmean nanvar nanstd
nanargmax nanargmin nancumsum nancumprod`` (JAX's semantics: NaNs are replaced by the
reduction's identity; an all-NaN slice gives NaN for nanmax/nanmin/nanmean/nanvar and -1 for
nanargmax/nanargmin). Integer and bool inputs have no NaNs and reduce as usual."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import DtypeError
from ptojax.numpy._axes import normalize_axes
from ptojax.numpy._promote import (asarray, broadcast_shapes, broadcast_to_shape, convert,
                                   supported_dtype, to_inexact)
from ptojax.numpy import math as m
from ptojax.numpy import reductions as red
from ptojax.numpy.reductions import cumulate
from ptojax.public import add_examples as _add_examples
from ptojax.source_info import user_frame


def _nan_free(a, fill):
    """``a`` with NaNs replaced by ``fill`` (inexact inputs only)."""
    return m.where(m.isnan(a), convert(fill, a.dtype), a)


def _has_nans(a) -> bool:
    return dtypes.is_float(a.dtype)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a = asarray(a, op="nansum")
    x = _nan_free(a, 0) if _has_nans(a) else a
    return red.sum(x, axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    a = asarray(a, op="nanprod")
    x = _nan_free(a, 1) if _has_nans(a) else a
    return red.prod(x, axis, dtype, out, keepdims, initial, where)


def _nan_extremum(name, reduce, identity):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        a = asarray(a, op=name)
        if not _has_nans(a):
            return reduce(a, axis, out, keepdims, initial, where)
        result = reduce(_nan_free(a, identity), axis, out, keepdims, initial, where)
        if initial is not None:
            return result
        all_nan = red.all(m.isnan(a), axis, keepdims=keepdims)
        return m.where(all_nan, convert(float("nan"), result.dtype), result)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {name[3:]}imum over ``axis`` ignoring NaNs (NaN where a slice is all "
                  f"NaN and no initial= is given).")
    return fn


nanmax = _nan_extremum("nanmax", red.max, float("-inf"))
nanmin = _nan_extremum("nanmin", red.min, float("inf"))


def _nan_arg(name, reduce, identity):
    def fn(a, axis=None, out=None, keepdims=False):
        a = asarray(a, op=name)
        if not _has_nans(a):
            return reduce(a, axis, out, keepdims)
        nans = m.isnan(a)
        result = reduce(_nan_free(a, identity), axis, out, keepdims)
        all_nan = red.all(nans, axis, keepdims=keepdims)
        return m.where(all_nan, np.int32(-1), result)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Index of the {name[6:]}imum ignoring NaNs (-1 where a slice is all NaN)."
    return fn


nanargmax = _nan_arg("nanargmax", red.argmax, float("-inf"))
nanargmin = _nan_arg("nanargmin", red.argmin, float("inf"))


def _count_not_nan(a, axes, keepdims, where, dtype):
    present = lax.bitwise_not(m.isnan(a))
    return red.sum(present, axes, dtype=dtype, keepdims=keepdims, where=where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    a = asarray(a, op="nanmean")
    if not _has_nans(a):
        return red.mean(a, axis, dtype, out, keepdims, where=where)
    red._no_out("nanmean", out)
    dtype = supported_dtype(dtype, "nanmean") if dtype is not None else to_inexact(a.dtype)
    axes = normalize_axes("nanmean", axis, a.ndim)
    total = nansum(a, axes, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(total, _count_not_nan(a, axes, keepdims, where, dtype))


def _nan_variance(name, a, axis, dtype, ddof, keepdims, where, mean):
    """Variances are real: of complex values, the mean squared magnitude (as ``var``)."""
    a = asarray(a, op=name)
    axes = normalize_axes(name, axis, a.ndim)
    result_dtype = supported_dtype(dtype, name) if dtype is not None else \
        dtypes.real_dtype(to_inexact(a.dtype))
    if dtypes.is_complex(a.dtype) and dtype is not None and not dtypes.is_complex(result_dtype):
        raise DtypeError(f"{name}: a real dtype ({result_dtype}) for the variance of complex "
                         f"values is not supported (as in JAX); leave dtype out for a real "
                         f"result", user_frame())
    real = dtypes.real_dtype(result_dtype)
    compute = dtypes.float32 if real.itemsize < 4 else real
    if dtypes.is_complex(a.dtype):
        compute = dtypes.complex_dtype(compute)
    x = convert(a, compute)
    centre = nanmean(x, axes, dtype=compute, keepdims=True, where=where) if mean is None \
        else convert(mean, compute)
    shape = broadcast_shapes(name, tuple(x.shape), tuple(centre.shape))
    x, centre = broadcast_to_shape(x, shape), broadcast_to_shape(centre, shape)
    # the double where keeps NaN out of the gradient
    centered = m.where(m.isnan(x), convert(0, compute), lax.sub(x, centre))
    squares = lax.real(lax.mul(centered, lax.conj(centered))) if dtypes.is_complex(compute) \
        else lax.mul(centered, centered)
    compute = squares.dtype
    total = red.sum(squares, axes, keepdims=keepdims, where=where)
    count = _count_not_nan(x, axes, keepdims, where, dtypes.int32)
    normalizer = lax.sub(count, np.int32(ddof))
    empty = lax.le(normalizer, 0)
    divisor = lax.convert_element_type(m.where(empty, np.int32(1), normalizer), compute)
    result = lax.div(m.where(empty, convert(float("nan"), compute), total), divisor)
    return result, result_dtype


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    red._no_out("nanvar", out)
    result, dtype = _nan_variance("nanvar", a, axis, dtype, ddof, keepdims, where, mean)
    return lax.convert_element_type(result, dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    red._no_out("nanstd", out)
    result, dtype = _nan_variance("nanstd", a, axis, dtype, ddof, keepdims, where, mean)
    return lax.convert_element_type(lax.sqrt(result), dtype)


def _nan_cumulative(name, lax_fn, identity):
    def fn(a, axis=None, dtype=None, out=None):
        red._no_out(name, out)
        a = asarray(a, op=name)
        x = _nan_free(a, identity) if _has_nans(a) else a
        return cumulate(name, lax_fn, x, axis, dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Cumulative {name[6:]} along ``axis`` with NaNs counted as {identity}."
    return fn


nancumsum = _nan_cumulative("nancumsum", lax.cumsum, 0)
nancumprod = _nan_cumulative("nancumprod", lax.cumprod, 1)


__all__ = ["nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmin",
           "nanprod", "nanstd", "nansum", "nanvar"]


_add_examples(globals(), """
nanmean: The mean along ``axis`` ignoring NaNs (NaN where all are NaN).
    >>> pnp.nanmean(pnp.array([1.0, pnp.nan, 3.0]))
    Array(2., dtype=float32)
nanprod: The product along ``axis`` treating NaNs as one.
    >>> pnp.nanprod(pnp.array([2.0, pnp.nan, 3.0]))
    Array(6., dtype=float32)
nanstd: The standard deviation along ``axis`` ignoring NaNs.
    >>> pnp.nanstd(pnp.array([1.0, pnp.nan, 3.0]))
    Array(1., dtype=float32)
nansum: The sum along ``axis`` treating NaNs as zero.
    >>> pnp.nansum(pnp.array([1.0, pnp.nan, 3.0]))
    Array(4., dtype=float32)
nanvar: The variance along ``axis`` ignoring NaNs.
    >>> pnp.nanvar(pnp.array([1.0, pnp.nan, 3.0]))
    Array(1., dtype=float32)
nanargmax:
    >>> pnp.nanargmax(pnp.array([1.0, pnp.nan, 3.0]))
    Array(2, dtype=int32)
nanargmin:
    >>> pnp.nanargmin(pnp.array([pnp.nan, 2.0, 1.0]))
    Array(2, dtype=int32)
nancumprod:
    >>> pnp.nancumprod(pnp.array([2.0, pnp.nan, 3.0]))
    Array([2., 2., 6.], dtype=float32)
nancumsum:
    >>> pnp.nancumsum(pnp.array([1.0, pnp.nan, 3.0]))
    Array([1., 1., 4.], dtype=float32)
nanmax:
    >>> pnp.nanmax(pnp.array([1.0, pnp.nan, 3.0]))
    Array(3., dtype=float32)
nanmin:
    >>> pnp.nanmin(pnp.array([1.0, pnp.nan, 3.0]))
    Array(1., dtype=float32)
""")
