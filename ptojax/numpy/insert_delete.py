"""Adding and removing elements: ``insert``, ``delete``, ``append``, ``resize``,
``trim_zeros`` (JAX's semantics: a traced insertion index works; deleting by a traced index
array needs ``assume_unique_indices=True``; trim_zeros needs a concrete input)."""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ConcretizationError, DtypeError, ShapeError
from ptojax.eval.array import Array
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, convert
from ptojax.numpy import math as ew
from ptojax.numpy.creation import zeros
from ptojax.numpy.indexing import getitem
from ptojax.numpy.manipulation import concatenate, moveaxis, ravel, reshape, tile
from ptojax.numpy.searching import nonzero
from ptojax.numpy.sorting import argsort, sort
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def _along(axis, index):
    """An index selecting ``index`` along ``axis`` (every other axis whole)."""
    return (slice(None),) * axis + (index,)


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` (both flattened when ``axis`` is None)."""
    if axis is None:
        return concatenate([ravel(asarray(arr, op="append")),
                            ravel(asarray(values, op="append"))], 0)
    return concatenate([arr, values], axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` (an int, a slice, an index array or a boolean
    mask) along ``axis`` (the flattened array when None). A traced index array needs
    ``assume_unique_indices=True``."""
    a = asarray(arr, op="delete")
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis("delete", axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_)):
        i = normalize_axis("delete", obj, n, "index")
        return concatenate([getitem(a, _along(axis, slice(0, i))),
                            getitem(a, _along(axis, slice(i + 1, None)))], axis)
    if isinstance(obj, slice):
        obj, assume_unique_indices = np.arange(n)[obj], True
    obj_arr = asarray(obj, op="delete") if not isinstance(obj, np.ndarray) else obj
    if dtypes.is_integer(np.dtype(obj_arr.dtype)) and assume_unique_indices:
        return getitem(a, _along(axis, _kept_positions(asarray(obj_arr), n)))
    if type(obj_arr) is Tracer:
        raise ConcretizationError("delete: a traced index array must be unique; pass "
                                  "assume_unique_indices=True (or concrete indices)",
                                  user_frame())
    values = np.asarray(obj_arr)
    if values.dtype == np.bool_:
        if values.shape != (n,):
            raise ShapeError(f"delete: a boolean mask must have shape ({n},), got "
                             f"{values.shape}", user_frame())
        keep = ~values
    elif values.dtype.kind in "iu":
        keep = np.ones(n, bool)
        keep[values] = False
    else:
        raise DtypeError(f"delete: obj must be integers or booleans, got {values.dtype}",
                         user_frame())
    return getitem(a, _along(axis, np.nonzero(keep)[0]))


def _kept_positions(obj, n):
    """The positions that remain after deleting the distinct indices ``obj`` (traceable):
    the i-th survivor is i plus the number of deleted indices at or before it."""
    deleted = sort(ravel(ew.clip(ew.where(ew.less(obj, 0), ew.add(obj, n), obj), 0, n)))
    k = deleted.shape[0]
    deleted = ew.subtract(deleted, lax.iota(deleted.dtype, k))
    survivors = lax.iota(deleted.dtype, n - k)
    shift = lax.reduce_sum(lax.convert_element_type(ew.greater_equal(
        lax.expand_dims(survivors, (0,)), lax.expand_dims(deleted, (1,))), deleted.dtype), (0,))
    return ew.add(survivors, shift)


def insert(arr, obj, values, axis=None):
    """``values`` inserted before the entries ``obj`` (an int, a slice or an index array,
    traced or not) along ``axis`` (the flattened array when None)."""
    a = asarray(arr, op="insert")
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis("insert", axis, a.ndim)
    n = a.shape[axis]
    indices = asarray(np.arange(*obj.indices(n)), op="insert") if isinstance(obj, slice) \
        else asarray(obj, op="insert")
    if indices.ndim > 1:
        raise ShapeError(f"insert: obj must be an int, a slice or a 1-D array, got "
                         f"{indices.aval}", user_frame())
    if not dtypes.is_integer(indices.dtype):
        if indices.size == 0:
            indices = convert(indices, dtypes.int32)
        else:
            raise DtypeError(f"insert: indices must be integers, got {indices.aval}",
                             user_frame())
    values = convert(asarray(values, op="insert"), a.dtype)
    if values.ndim < a.ndim:
        values = reshape(values, (1,) * (a.ndim - values.ndim) + tuple(values.shape))
    if indices.size == 1:
        scalar = indices.ndim == 0
        indices = lax.reshape(indices, ())
        if scalar:
            values = moveaxis(values, 0, axis)
        indices = lax.broadcast_in_dim(indices, (values.shape[axis],), ())
    count = np.broadcast_shapes(tuple(indices.shape), (values.shape[axis],))[0]
    indices = ew.clip(ew.where(ew.less(indices, 0), ew.add(indices, n), indices), 0, n)
    # where the inserted values land: each index moves right by the values inserted before it
    order = argsort(indices)
    targets = indices.at[order].add(lax.iota(indices.dtype, count))
    keep = lax.broadcast_in_dim(np.bool_(True), (n + count,), ()).at[targets].set(False)
    (sources,) = nonzero(keep, size=n)
    shape = tuple(n + count if d == axis else s for d, s in enumerate(a.shape))
    out = lax.broadcast_in_dim(convert(0, a.dtype, bool(a.weak_type)), shape, ())  # a's type
    new_shape = tuple(count if d == axis else s for d, s in enumerate(a.shape))
    out = out.at[_along(axis, targets)].set(_broadcast_values(values, new_shape, axis))
    return out.at[_along(axis, sources)].set(a)


def _broadcast_values(values, shape, axis):
    """``values`` broadcast to ``shape`` (NumPy rules)."""
    from_shape = tuple(values.shape)
    if from_shape == shape:
        return values
    lead = len(shape) - len(from_shape)
    if lead < 0 or any(d not in (1, shape[lead + i]) for i, d in enumerate(from_shape)):
        raise ShapeError(f"insert: values of shape {from_shape} do not fit the inserted "
                         f"slices of shape {shape}", user_frame())
    return lax.broadcast_in_dim(values, shape, tuple(range(lead, len(shape))))


def resize(a, new_shape):
    """``a`` flattened, repeated or cut to fill ``new_shape`` (zeros if ``a`` is empty)."""
    a = asarray(a, op="resize")
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else \
        tuple(operator.index(d) for d in new_shape)
    if any(d < 0 for d in new_shape):
        raise ShapeError(f"resize: new_shape must be non-negative, got {new_shape}",
                         user_frame())
    flat, size = ravel(a), math.prod(new_shape)
    if flat.size == 0 or size == 0:
        return zeros(new_shape, a.dtype)
    flat = lax.slice_in_dim(tile(flat, -(-size // flat.size)), 0, size, 1, 0)
    return reshape(flat, new_shape)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading ("f") and/or trailing ("b") all-zero slices along
    ``axis`` (every axis when None), weak when ``filt`` is (a slice of it, as JAX's). The
    result's shape depends on the values, so ``filt`` must be concrete."""
    filt = asarray(filt, op="trim_zeros")
    if type(filt) is Tracer:
        raise ConcretizationError("trim_zeros: the result's shape depends on the values; "
                                  "call it on a concrete array (outside jit)", user_frame())
    values = np.asarray(filt)
    axes = set(range(values.ndim)) if axis is None else \
        {normalize_axis("trim_zeros", ax, values.ndim)
         for ax in ((axis,) if isinstance(axis, int) else axis)}
    front, back = "f" in trim.lower(), "b" in trim.lower()
    if not axes or not (front or back):
        return filt
    index = []
    for d in range(values.ndim):
        if d not in axes:
            index.append(slice(None))
            continue
        present = np.any(values != 0, axis=tuple(o for o in range(values.ndim) if o != d))
        if not present.any():
            index.append(slice(0, 0))
            continue
        start = int(present.argmax()) if front else None
        stop = values.shape[d] - int(present[::-1].argmax()) if back else None
        index.append(slice(start, stop))
    return Array(values[tuple(index)].copy(), filt.weak_type)   # a slice: weak stays weak


__all__ = ["append", "delete", "insert", "resize", "trim_zeros"]


_add_examples(globals(), """
append:
    >>> pnp.append(pnp.array([1, 2]), pnp.array([3, 4]))
    Array([1, 2, 3, 4], dtype=int32)
delete:
    >>> pnp.delete(pnp.array([1, 2, 3, 4]), 1)
    Array([1, 3, 4], dtype=int32)
insert:
    >>> pnp.insert(pnp.array([1, 2, 3]), 1, 9)
    Array([1, 9, 2, 3], dtype=int32)
resize:
    >>> pnp.resize(pnp.array([1, 2, 3]), (2, 2))
    Array([[1, 2],
           [3, 1]], dtype=int32)
trim_zeros:
    >>> pnp.trim_zeros(pnp.array([0, 1, 2, 0]))
    Array([1, 2], dtype=int32)
""")
