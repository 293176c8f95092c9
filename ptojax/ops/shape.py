"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims, rev, slice,
concatenate, pad, iota."""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.errors import AxisError, DtypeError, ShapeError
from ptojax.ir.types import TensorType
from ptojax.ops.checks import check_axes, check_axis, fmt_types, require_same_dtype
from ptojax.trace import Primitive


def _broadcast_in_dim_abstract(x, shape, broadcast_dimensions):
    shape, bdims = tuple(shape), tuple(broadcast_dimensions)
    if len(bdims) != x.ndim:
        raise ShapeError(f"broadcast_in_dim: {x} needs {x.ndim} broadcast_dimensions, got "
                         f"{bdims}")
    if any(not 0 <= d < len(shape) for d in bdims) or list(bdims) != sorted(set(bdims)):
        raise ShapeError(f"broadcast_in_dim: broadcast_dimensions {bdims} must be increasing "
                         f"and within the rank of {shape}")
    for i, d in enumerate(bdims):
        if x.shape[i] not in (1, shape[d]):
            raise ShapeError(f"broadcast_in_dim: cannot broadcast {x} to shape {shape}: "
                             f"operand dimension {i} has size {x.shape[i]}, target dimension "
                             f"{d} has size {shape[d]}")
    return TensorType(shape, x.dtype, x.weak_type)


def _broadcast_in_dim(x, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(np.reshape(x, expanded), shape)


broadcast_in_dim_p = Primitive("broadcast_in_dim", _broadcast_in_dim_abstract,
                               _broadcast_in_dim)


def _reshape_abstract(x, new_sizes):
    new_sizes = tuple(new_sizes)
    if any(not isinstance(d, (int, np.integer)) or d < 0 for d in new_sizes) or \
            math.prod(new_sizes) != x.size:
        raise ShapeError(f"reshape: cannot reshape {x} ({x.size} elements) to {new_sizes}")
    return TensorType(new_sizes, x.dtype, x.weak_type)


reshape_p = Primitive("reshape", _reshape_abstract,
                      lambda x, new_sizes: np.reshape(x, new_sizes))


def _transpose_abstract(x, permutation):
    perm = tuple(permutation)
    if sorted(perm) != list(range(x.ndim)):
        raise AxisError(f"transpose: {perm} is not a permutation of the axes of {x}")
    return TensorType(tuple(x.shape[p] for p in perm), x.dtype, x.weak_type)


transpose_p = Primitive("transpose", _transpose_abstract,
                        lambda x, permutation: np.transpose(x, permutation))


def _squeeze_abstract(x, dimensions):
    dims = check_axes("squeeze", dimensions, x.ndim)
    for d in dims:
        if x.shape[d] != 1:
            raise ShapeError(f"squeeze: dimension {d} of {x} has size {x.shape[d]}, not 1")
    return TensorType(tuple(s for i, s in enumerate(x.shape) if i not in dims), x.dtype,
                      x.weak_type)


squeeze_p = Primitive("squeeze", _squeeze_abstract,
                      lambda x, dimensions: np.squeeze(x, tuple(dimensions)))


def _expand_dims_abstract(x, dimensions):
    out_ndim = x.ndim + len(dimensions)
    dims = check_axes("expand_dims", dimensions, out_ndim)
    shape, it = [], iter(x.shape)
    for i in range(out_ndim):
        shape.append(1 if i in dims else next(it))
    return TensorType(shape, x.dtype, x.weak_type)


expand_dims_p = Primitive("expand_dims", _expand_dims_abstract,
                          lambda x, dimensions: np.expand_dims(x, tuple(dimensions)))


def _rev_abstract(x, dimensions):
    check_axes("rev", dimensions, x.ndim)
    return x


rev_p = Primitive("rev", _rev_abstract, lambda x, dimensions: np.flip(x, tuple(dimensions)))


def _slice_abstract(x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ShapeError(f"slice: {x} needs {x.ndim} start/limit/stride entries, got "
                         f"{start_indices}, {limit_indices}, {strides}")
    shape = []
    for d, (lo, hi, st) in enumerate(zip(start_indices, limit_indices, strides)):
        if not 0 <= lo <= hi <= x.shape[d] or st < 1:
            raise ShapeError(f"slice: [{lo}:{hi}:{st}] is out of bounds for dimension {d} "
                             f"of {x}")
        shape.append(max(0, -(-(hi - lo) // st)))
    return TensorType(shape, x.dtype, x.weak_type)


def _slice(x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(slice(lo, hi, st) for lo, hi, st in zip(start_indices, limit_indices,
                                                            strides))]


slice_p = Primitive("slice", _slice_abstract, _slice)


def _concatenate_abstract(*xs, dimension):
    if not xs:
        raise ShapeError("concatenate needs at least one operand")
    require_same_dtype("concatenate", xs)
    d = check_axis("concatenate", dimension, xs[0].ndim) if xs[0].ndim else None
    if d is None:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    for x in xs:
        if x.ndim != xs[0].ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape,
                                                                            xs[0].shape))
                                       if i != d):
            raise ShapeError(f"concatenate along {d}: shapes must agree except on that "
                             f"dimension, got {fmt_types(xs)}")
    shape = list(xs[0].shape)
    shape[d] = sum(x.shape[d] for x in xs)
    return TensorType(shape, xs[0].dtype, all(x.weak_type for x in xs))


concatenate_p = Primitive("concatenate", _concatenate_abstract,
                          lambda *xs, dimension: np.concatenate(xs, axis=dimension))


def _pad_abstract(x, padding_value, padding_config):
    require_same_dtype("pad", (x, padding_value))
    if padding_value.shape != ():
        raise ShapeError(f"pad: the padding value must be a scalar, got {padding_value}")
    if len(padding_config) != x.ndim:
        raise ShapeError(f"pad: {x} needs {x.ndim} (low, high, interior) entries, got "
                         f"{padding_config}")
    shape = []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise ShapeError(f"pad: interior padding must be >= 0, got {interior}")
        size = lo + hi + n + max(n - 1, 0) * interior
        if size < 0:
            raise ShapeError(f"pad: padding {padding_config} leaves a negative size")
        shape.append(size)
    return TensorType(shape, x.dtype, x.weak_type)


def _pad(x, padding_value, padding_config):
    grown = [(max(lo, 0), max(hi, 0), it) for lo, hi, it in padding_config]
    shape = [lo + hi + n + max(n - 1, 0) * it for n, (lo, hi, it) in zip(x.shape, grown)]
    out = np.full(shape, padding_value, dtype=x.dtype)
    out[tuple(slice(lo, lo + n + max(n - 1, 0) * it, it + 1)
              for n, (lo, hi, it) in zip(x.shape, grown))] = x
    crop = tuple(slice(-lo if lo < 0 else 0, s + hi if hi < 0 else s)
                 for s, (lo, hi, _) in zip(shape, padding_config))
    return out[crop]


pad_p = Primitive("pad", _pad_abstract, _pad)


def _iota_abstract(dtype, shape, dimension):
    dtype = dtypes.canonicalize(dtype)
    if dtype == dtypes.bool_:
        raise DtypeError("iota: the dtype must be numeric, got bool")
    check_axis("iota", dimension, len(shape))
    return TensorType(shape, dtype)


def _iota(dtype, shape, dimension):
    ramp = np.arange(shape[dimension], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(ramp.reshape(expanded), shape)


iota_p = Primitive("iota", _iota_abstract, _iota)
