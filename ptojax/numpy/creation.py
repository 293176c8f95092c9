"""Array creation: array/asarray/zeros/ones/full/arange/linspace/eye/... and *_like."""
from __future__ import annotations

import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ShapeError
from ptojax.numpy._promote import asarray as _asarray, dtype_and_weak
from ptojax.runtime.array import Array
from ptojax.trace import Tracer


def asarray(a, dtype=None, copy=None):
    return _asarray(a, dtype)


def array(object, dtype=None, copy=True, ndmin: int = 0):
    out = _asarray(object, dtype)
    if out.ndim < ndmin:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def _shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise ShapeError(f"shape must be a tuple of ints, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"negative dimensions are not allowed: {shape}")
    return shape


def full(shape, fill_value, dtype=None):
    shape = _shape(shape)
    if dtype is None:
        dt, _ = dtype_and_weak(fill_value)
    else:
        dt = dtypes.canonicalize(dtype)
    fill = _asarray(fill_value, dt)
    if fill.ndim == 0 and type(fill) is Array:
        return Array(np.full(shape, fill._value, dt))
    from ptojax.numpy._promote import broadcast_to_shape
    return broadcast_to_shape(fill, shape)


def zeros(shape, dtype=None):
    return full(shape, 0, dtypes.canonicalize(dtype or dtypes.float32))


def ones(shape, dtype=None):
    return full(shape, 1, dtypes.canonicalize(dtype or dtypes.float32))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def _like_dtype(a, dtype):
    return dtypes.canonicalize(dtype) if dtype is not None else _asarray(a).dtype


def _like_shape(a, shape):
    return _shape(shape) if shape is not None else tuple(np.shape(a) if not hasattr(a, "shape")
                                                         else a.shape)


def full_like(a, fill_value, dtype=None, shape=None):
    return full(_like_shape(a, shape), fill_value, _like_dtype(a, dtype))


def zeros_like(a, dtype=None, shape=None):
    return full_like(a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return full_like(a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            from ptojax.errors import ConcretizationError
            raise ConcretizationError("pnp.arange needs concrete start/stop/step (its length "
                                      "is part of the shape); pass them as static values")
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if dtype is None:
        is_float = any(isinstance(v, float) or (hasattr(v, "dtype") and
                                                dtypes.is_float(np.dtype(v.dtype)))
                       for v in (start, stop, step))
        dtype = dtypes.float32 if is_float else dtypes.int32
    dtype = dtypes.canonicalize(dtype)
    values = np.arange(_py(start), _py(stop), _py(step))
    if dtypes.is_integer(dtype) and len(values) and values.dtype.kind == "i":
        return lax.iota(dtype, len(values)) if (_py(start), _py(step)) == (0, 1) else \
            Array(values.astype(dtype))
    return Array(values.astype(dtype))


def _py(v):
    return v.item() if hasattr(v, "item") else v


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0):
    from ptojax.numpy import math as m
    from ptojax.numpy.manipulation import expand_dims, moveaxis
    num = int(num)
    if num < 0:
        raise ShapeError(f"linspace: number of samples {num} must be non-negative")
    dtype = dtypes.canonicalize(dtype) if dtype is not None else dtypes.float32
    compute = dtypes.float64 if dtype == dtypes.float64 else dtypes.float32
    start, stop = _asarray(start, compute), _asarray(stop, compute)
    div = (num - 1) if endpoint else num
    step = m.divide(m.subtract(stop, start), float(max(div, 1)))
    ramp = lax.iota(compute, num)
    for _ in range(max(start.ndim, stop.ndim)):
        ramp = expand_dims(ramp, -1)
    out = m.add(start, m.multiply(ramp, step))
    if endpoint and num > 1:
        out = m.where(m.equal(ramp, num - 1), stop, out)
    if axis != 0:
        out = moveaxis(out, 0, axis)
    out = lax.convert_element_type(out, dtype)
    return (out, lax.convert_element_type(step, dtype)) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    M = N if M is None else M
    dtype = dtypes.canonicalize(dtype or dtypes.float32)
    rows = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    return lax.convert_element_type(lax.eq(lax.add(rows, k), cols), dtype)


def identity(n: int, dtype=None):
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
    M = N if M is None else M
    dtype = dtypes.canonicalize(dtype or dtypes.float32)
    rows = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    return lax.convert_element_type(lax.ge(lax.add(rows, k), cols), dtype)


def meshgrid(*xs, indexing="xy"):
    xs = [_asarray(x) for x in xs]
    shape = [x.size for x in xs]
    if indexing == "xy" and len(xs) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        d = i
        if indexing == "xy" and len(xs) >= 2 and i < 2:
            d = 1 - i
        out.append(lax.broadcast_in_dim(lax.reshape(x, (x.size,)), tuple(shape), (d,)))
    return out

