"""NumPy indexing: ``x[idx]`` and ``x.at[idx].set/add/mul/min/max/get``; take, take_along_axis.

Basic indices (ints, slices, None, Ellipsis) become slice/rev/squeeze/dynamic_slice. Integer
arrays (and concrete boolean masks) become one ``gather`` — or ``scatter`` for ``.at`` — over
the indexed dimensions; a partial slice among them turns into an iota index of its own, so
every form of index shares one plan and NumPy's placement of the advanced dimensions is one
final transpose. Out-of-bounds indices are clamped on reads and dropped on writes (as JAX).
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ConcretizationError, ShapeError
from ptojax.numpy._promote import asarray, broadcast_shapes, broadcast_to_shape, convert
from ptojax.runtime.array import Array
from ptojax.source_info import user_frame
from ptojax.trace import Tracer


def _is_int_scalar(i) -> bool:
    if isinstance(i, (bool, np.bool_)):
        return False
    if isinstance(i, (int, np.integer)):
        return True
    return isinstance(i, (Array, Tracer, np.ndarray)) and i.ndim == 0 and \
        dtypes.is_integer(np.dtype(i.dtype))


def _is_array_index(i) -> bool:
    return isinstance(i, (Array, Tracer, np.ndarray, list)) and not _is_int_scalar(i)


def _expand(x, idx):
    """Normalize ``idx`` to one entry per dimension of ``x`` (with None turned into new size-1
    axes of ``x``). Returns (x, entries, new_axes)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    idx = [np.asarray(i) if isinstance(i, list) else i for i in idx]
    # boolean masks expand into integer arrays (they must be concrete: the shape depends on
    # their values)
    expanded = []
    for i in idx:
        if isinstance(i, (Array, Tracer, np.ndarray, bool, np.bool_)) and \
                np.dtype(getattr(i, "dtype", np.bool_)) == np.bool_:
            if isinstance(i, Tracer):
                raise ConcretizationError(
                    "boolean mask indexing with a traced mask has a data-dependent shape; "
                    "use pnp.where(mask, x, fill) instead", user_frame(4))
            mask = np.asarray(i)
            if mask.ndim == 0:
                if not mask:
                    raise ShapeError("indexing with a scalar False selects nothing; this "
                                     "form is not supported", user_frame(4))
                expanded.append(None)
                continue
            expanded.extend(np.nonzero(mask))
        else:
            expanded.append(i)
    n_ellipsis = sum(i is Ellipsis for i in expanded)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(i is not None and i is not Ellipsis for i in expanded)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for an array of rank {x.ndim}: {consumed} given")
    if n_ellipsis:
        k = expanded.index(Ellipsis)
        expanded[k:k + 1] = [slice(None)] * (x.ndim - consumed)
    else:
        expanded += [slice(None)] * (x.ndim - consumed)
    new_axes = tuple(k for k, i in enumerate(expanded) if i is None)
    if new_axes:
        x = lax.expand_dims(x, new_axes)
        expanded = [slice(None) if i is None else i for i in expanded]
    return x, expanded, new_axes


def getitem(x, idx):
    x = asarray(x)
    x, entries, _ = _expand(x, idx)
    if any(_is_array_index(i) for i in entries):
        plan = _plan(x, entries)
        out = lax.gather(x, plan.indices, plan.axes)
        return lax.transpose(out, plan.to_numpy)
    return _basic(x, entries)


def _basic(x, entries):
    starts, limits, strides, flips, squeeze = [], [], [], [], []
    dynamic = []
    for d, (n, i) in enumerate(zip(x.shape, entries)):
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            count = len(range(start, stop, step))
            if step < 0:
                flips.append(d)
                start, step = n - 1 - start, -step
            starts.append(start)
            limits.append(start + (count - 1) * step + 1 if count else start)
            strides.append(step)
        elif isinstance(i, (int, np.integer)):
            k = operator.index(i)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
            starts.append(k % n)
            limits.append(k % n + 1)
            strides.append(1)
            squeeze.append(d)
        else:  # a traced or concrete 0-d integer array
            dynamic.append((d, i))
            starts.append(0)
            limits.append(n)
            strides.append(1)
            squeeze.append(d)
    if flips:
        x = lax.rev(x, flips)
    x = lax.slice(x, starts, limits, strides)
    if dynamic:
        begin = [lax.convert_element_type(0, dtypes.int32)] * x.ndim
        sizes = list(x.shape)
        for d, i in dynamic:
            begin[d] = _normalize_index(i, x.shape[d])
            sizes[d] = 1
        x = lax.dynamic_slice(x, begin, sizes)
    return lax.squeeze(x, squeeze)


def _normalize_index(i, n):
    i = asarray(i)
    if not dtypes.is_integer(i.dtype):
        raise IndexError(f"indices must be integers, got {i.aval}")
    if dtypes.is_unsigned(i.dtype):
        return lax.convert_element_type(i, dtypes.int32) if i.dtype.itemsize < 4 else i
    if i.dtype.itemsize < 4:
        i = lax.convert_element_type(i, dtypes.int32)
    if type(i) is Array:
        v = np.where(i._value < 0, i._value + n, i._value)
        return Array(v.astype(i.dtype))
    return lax.select(lax.lt(i, 0), lax.add(i, n), i)


class _Plan(NamedTuple):
    axes: tuple          # the dimensions of x that are indexed
    indices: object      # int array G + (len(axes),)
    to_numpy: tuple      # permutation of the gather result into NumPy's layout
    gather_shape: tuple  # G + rest


def _plan(x, entries) -> _Plan:
    shape = x.shape
    # integers join the advanced group: with no index arrays the group has no dimensions,
    # so where it lands does not matter
    advanced = [d for d, i in enumerate(entries) if _is_array_index(i) or _is_int_scalar(i)]
    partial = [d for d, i in enumerate(entries) if isinstance(i, slice)
               and i.indices(shape[d]) != (0, shape[d], 1)]
    rest = [d for d, i in enumerate(entries) if isinstance(i, slice) and d not in partial]
    adv_values = [_normalize_index(entries[d], shape[d]) for d in advanced]
    bshape = broadcast_shapes("indexing", *[tuple(v.shape) for v in adv_values]) \
        if adv_values else ()
    nb, ns = len(bshape), len(partial)
    gshape = bshape + tuple(len(range(*entries[d].indices(shape[d]))) for d in partial)
    components = {}
    for d, v in zip(advanced, adv_values):
        v = broadcast_to_shape(convert(v, dtypes.int32), bshape)
        components[d] = lax.broadcast_in_dim(v, gshape, tuple(range(nb)))
    for k, d in enumerate(partial):
        start, stop, step = entries[d].indices(shape[d])
        ramp = Array(np.arange(start, stop, step, dtype=np.int32))
        components[d] = lax.broadcast_in_dim(ramp, gshape, (nb + k,))
    axes = tuple(sorted(components))
    parts = [lax.expand_dims(components[d], (len(gshape),)) for d in axes]
    indices = lax.concatenate(parts, len(gshape)) if len(parts) > 1 else parts[0]
    # NumPy layout: walk the entries; the advanced group lands at its first position when its
    # members are adjacent, else in front.
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1)) if advanced else True
    order = [] if adjacent else list(range(nb))
    for d in range(len(entries)):
        if d in advanced:
            if adjacent and d == advanced[0]:
                order += list(range(nb))
        elif d in partial:
            order.append(nb + partial.index(d))
        elif d in rest:
            order.append(nb + ns + rest.index(d))
    gather_shape = gshape + tuple(shape[d] for d in rest)
    return _Plan(axes, indices, tuple(order), gather_shape)


# .at[...] ------------------------------------------------------------------------------------
class _IndexUpdateHelper:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """``x.at[idx]``: functional updates returning a new array."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def get(self, mode=None, fill_value=None):
        if mode == "fill":
            x, entries, _ = _expand(asarray(self.array), self.index)
            plan = _plan(x, entries)
            out = lax.gather(x, plan.indices, plan.axes, mode="fill", fill_value=fill_value)
            return lax.transpose(out, plan.to_numpy)
        return getitem(self.array, self.index)

    def set(self, values):
        return _update(self.array, self.index, values, "set")

    def add(self, values):
        return _update(self.array, self.index, values, "add")

    def multiply(self, values):
        return _update(self.array, self.index, values, "mul")

    mul = multiply

    def min(self, values):
        return _update(self.array, self.index, values, "min")

    def max(self, values):
        return _update(self.array, self.index, values, "max")

    def subtract(self, values):
        from ptojax.numpy.math import negative
        return _update(self.array, self.index, negative(values), "add")

    def divide(self, values):
        from ptojax.numpy.math import reciprocal
        return _update(self.array, self.index, reciprocal(values), "mul")


def _update(x, idx, values, mode):
    x = asarray(x)
    original_shape = tuple(x.shape)
    x, entries, new_axes = _expand(x, idx)
    plan = _plan(x, entries)
    # the shape x[idx] has in NumPy's layout, which ``values`` broadcasts to
    numpy_shape = tuple(plan.gather_shape[p] for p in plan.to_numpy)
    values = broadcast_to_shape(convert(values, x.dtype), numpy_shape)
    inverse = tuple(np.argsort(plan.to_numpy))
    updates = lax.transpose(values, inverse)
    out = lax.scatter(x, plan.indices, updates, plan.axes, mode=mode)
    if new_axes:
        out = lax.reshape(out, original_shape)
    return out


# take / take_along_axis ----------------------------------------------------------------------
def take(a, indices, axis=None, mode=None, fill_value=None):
    a = asarray(a)
    if axis is None:
        a, axis = lax.reshape(a, (a.size,)), 0
    axis = axis % a.ndim
    idx = _normalize_index(asarray(indices), a.shape[axis])
    out = lax.gather(a, lax.expand_dims(idx, (idx.ndim,)), (axis,),
                     mode="clip" if mode == "clip" else "fill", fill_value=fill_value)
    # gather puts the index dims first; move them to ``axis``
    nidx = idx.ndim
    perm = list(range(nidx, nidx + axis)) + list(range(nidx)) + \
        list(range(nidx + axis, out.ndim))
    return lax.transpose(out, perm)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        arr, axis = lax.reshape(arr, (arr.size,)), 0
    axis = axis % arr.ndim
    if indices.ndim != arr.ndim:
        raise ShapeError(f"take_along_axis: indices {indices.aval} must have the rank of "
                         f"{arr.aval}", user_frame(3))
    shape = [broadcast_shapes("take_along_axis", (arr.shape[d],), (indices.shape[d],))[0]
             for d in range(arr.ndim)]
    shape[axis] = indices.shape[axis]
    arr_shape = list(shape)
    arr_shape[axis] = arr.shape[axis]
    arr = broadcast_to_shape(arr, arr_shape)
    indices = broadcast_to_shape(_normalize_index(indices, arr.shape[axis]), shape)
    # batch over every other dimension: move ``axis`` last, gather with nbatch = ndim - 1
    perm = [d for d in range(arr.ndim) if d != axis] + [axis]
    a_t = lax.transpose(arr, perm)
    i_t = lax.transpose(indices, perm)
    out = lax.gather(a_t, lax.expand_dims(i_t, (i_t.ndim,)), (0,), nbatch=arr.ndim - 1,
                     mode="clip" if mode == "clip" else "fill", fill_value=fill_value)
    return lax.transpose(out, tuple(np.argsort(perm)))
