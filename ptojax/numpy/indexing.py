"""NumPy indexing: ``x[idx]`` and ``x.at[idx].set/add/multiply/divide/min/max/apply/get``.

Basic indices (ints, slices, None, Ellipsis) become slice/rev/squeeze/dynamic_slice. Integer
arrays (and concrete boolean masks) become one ``gather`` — or ``scatter`` for ``.at`` — over
the indexed dimensions; a partial slice among them turns into an iota index of its own, so
every form of index shares one plan and NumPy's placement of the advanced dimensions is one
final transpose. Out-of-bounds indices — static ints, traced ints and index arrays alike — are
clamped on reads and dropped on writes (as JAX); only an axis of size 0 cannot be indexed.
Negative indices count from the end; each index is normalized exactly once: by
``_normalize_index`` before a gather/scatter, or by ``lax.dynamic_slice`` itself.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import DtypeError, IndexingError, NonConcreteBooleanIndexError, located
from ptojax.ir.symbolic import DimExpr, slice_indices
from ptojax.ops.dimension_size import dimension_size
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import (array_from, asarray, broadcast_shapes, broadcast_to_shape,
                                   convert, result_type)
from ptojax.numpy.creation import ones_like, zeros
from ptojax.numpy.math import negative, power, remainder, true_divide
from ptojax.eval.array import Array
from ptojax.ops.gather_scatter import gather as point_gather, scatter as point_scatter
from ptojax.source_info import user_frame
from ptojax.trace import Tracer, is_concrete
from ptojax.public import add_examples as _add_examples

_ARRAYS = (Array, Tracer, np.ndarray)


def _is_static_int(i) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_int_scalar(i) -> bool:
    """A static int or a traced 0-d integer (concrete 0-d arrays are made static first)."""
    return _is_static_int(i) or (type(i) is Tracer and i.ndim == 0 and
                                 dtypes.is_integer(i.dtype))


def _is_array_index(i) -> bool:
    return isinstance(i, _ARRAYS) and not _is_int_scalar(i)


def _entry(i, op):
    """One index entry validated: None, Ellipsis, a slice, a static int, a bool, or an integer
    or boolean array (concrete 0-d integer arrays become static ints)."""
    if isinstance(i, slice):
        return _slice_entry(i, op)
    if i is None or i is Ellipsis or _is_static_int(i):
        return i
    if isinstance(i, (bool, np.bool_)):
        return bool(i)
    if isinstance(i, (list, tuple)):   # a list within a tuple index is an index array
        i = array_from(i, op=op)
    if isinstance(i, _ARRAYS):
        dt = np.dtype(i.dtype)
        if dt != dtypes.bool_ and not dtypes.is_integer(dt):
            raise DtypeError(f"{op}: index arrays must be integer or boolean, got dtype "
                             f"{dt}; convert with .astype(pnp.int32)", user_frame())
        if i.ndim == 0 and type(i) is not Tracer:
            value = np.asarray(i)[()]
            return bool(value) if dt == dtypes.bool_ else int(value)
        return i
    raise DtypeError(f"{op}: an index must be an int, a slice, None, Ellipsis or an integer/"
                     f"boolean array, got {type(i).__name__} {i!r:.40}", user_frame())


def _slice_entry(i: slice, op) -> slice:
    """A slice whose start/stop/step are ints or None (as Python's; a traced bound raises a
    IndexingError, as JAX's IndexError) and whose step is not zero."""
    for bound in (i.start, i.stop, i.step):
        if bound is not None and not hasattr(bound, "__index__"):
            raise DtypeError(f"{op}: slice bounds must be integers or None, got "
                             f"{type(bound).__name__} {bound!r:.30} in {i}", user_frame())
        if type(bound) is Tracer and not is_concrete(bound):   # an IndexError, as JAX
            raise IndexingError(f"{op}: slice bounds must be static (Python ints), got a "
                                f"traced value in {i}; to index at a traced position use "
                                f"lax.dynamic_slice or lax.dynamic_update_slice", user_frame())
    if i.step is not None and operator.index(i.step) == 0:
        raise located(ValueError(f"{op}: slice step cannot be zero ({i})"), user_frame())
    return i


def _consumed(i) -> int:
    """How many dimensions of the indexed array an entry uses up."""
    if i is None or i is Ellipsis or isinstance(i, bool):
        return 0
    if isinstance(i, _ARRAYS) and np.dtype(i.dtype) == dtypes.bool_:
        return i.ndim
    return 1


def _expand(x, idx, op):
    """Normalize ``idx`` to one entry per dimension of ``x``: masks become integer arrays and
    None/bool scalars become new size-1 (or, for False, empty) axes of ``x``. Returns
    ``(x, entries, new_axes)``."""
    if isinstance(idx, list):   # as JAX (NumPy's old meaning of a list index is ambiguous)
        raise DtypeError(f"{op}: a list as an index is not allowed (as in JAX); use "
                         f"x[pnp.array(seq)] for an index array or x[tuple(seq)] for one "
                         f"index per dimension", user_frame())
    entries = [_entry(i, op) for i in (idx if isinstance(idx, tuple) else (idx,))]
    if sum(i is Ellipsis for i in entries) > 1:
        raise IndexingError(f"{op}: an index can only have a single ellipsis ('...')",
                            user_frame())
    used = sum(_consumed(i) for i in entries)
    if used > x.ndim:
        raise IndexingError(f"{op}: too many indices for {x.aval}: {used} dimensions indexed "
                            f"but the array has {x.ndim}", user_frame())
    fill = [slice(None)] * (x.ndim - used)
    ellipsis = [k for k, i in enumerate(entries) if i is Ellipsis]
    if ellipsis:
        entries[ellipsis[0]:ellipsis[0] + 1] = fill
    else:
        entries += fill
    out, new_axes, empty_axes, d, ints_on_empty_axes = [], [], [], 0, []
    for i in entries:
        if i is None or isinstance(i, bool):
            (new_axes if i is not False else empty_axes).append(len(out))
            out.append(slice(None) if i is not False else slice(0, 0))
            continue
        if isinstance(i, _ARRAYS) and np.dtype(i.dtype) == dtypes.bool_:
            out.extend(_mask_to_indices(i, x.shape[d:d + i.ndim], op))
        else:
            if _is_int_scalar(i) and x.shape[d] == 0:
                ints_on_empty_axes.append((i, d))
            out.append(i)
        d += _consumed(i)
    if ints_on_empty_axes and not any(_is_array_index(i) for i in out):
        i, d = ints_on_empty_axes[0]  # (with index arrays, the ints join their gather)
        raise IndexingError(f"{op}: index {i} is out of bounds for axis {d} with size 0",
                            user_frame())
    added = tuple(sorted(new_axes + empty_axes))
    if added:
        x = lax.expand_dims(x, added)
    return x, out, added


def _mask_to_indices(mask, shape, op):
    if type(mask) is Tracer and not is_concrete(mask):  # concrete under eager transforms
        raise NonConcreteBooleanIndexError(
            f"{op}: a traced boolean mask selects a data-dependent number of elements; use "
            f"pnp.where(mask, x, fill) to keep the shape static", user_frame())
    mask = np.asarray(mask)
    if mask.shape != tuple(shape):
        raise IndexingError(f"{op}: a boolean mask of shape {mask.shape} does not match the "
                            f"indexed dimensions of shape {tuple(shape)}", user_frame())
    return list(np.nonzero(mask))


def getitem(x, idx):
    x = asarray(x, op="x[idx]")
    x, entries, _ = _expand(x, idx, "x[idx]")
    if any(_is_array_index(i) for i in entries):
        return _gather(x, _plan(x, entries), "promise_in_bounds")
    return _basic(x, entries)


def _gather(x, plan, mode, fill_value=None):
    """``x`` read at ``plan``'s indices, in NumPy's layout. JAX's default for ``x[idx]`` is
    "promise_in_bounds": out-of-bounds reads clamp, and their cotangents are dropped."""
    out = point_gather(x, plan.indices, plan.axes, mode=mode, fill_value=fill_value)
    return lax.transpose(out, plan.to_numpy)


def _basic(x, entries):
    starts, limits, strides, flips, squeeze, dynamic = [], [], [], [], [], []
    for d, (n, i) in enumerate(zip(x.shape, entries)):
        if isinstance(i, slice):
            start, stop, step, count = slice_indices(i, n)
            if step < 0:
                flips.append(d)
                start, step = n - 1 - start, -step
            starts.append(start)
            limits.append(start + count if step == 1 else
                          start + (count - 1) * step + 1 if count else start)
            strides.append(step)
            continue
        if _is_static_int(i):  # out of bounds clamps, as JAX
            start = min(max(_count_from_end(i, n), 0), n - 1)
            starts.append(start)
            limits.append(start + 1)
        else:  # a traced 0-d integer
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
        for d, i in dynamic:  # dynamic_slice normalizes and clamps it
            begin[d] = i
            sizes[d] = 1
        x = lax.dynamic_slice(x, begin, sizes)
    return lax.squeeze(x, squeeze)


def _count_from_end(i, n) -> int:
    i = operator.index(i)
    return i + n if i < 0 else i


def _normalize_index(i, n):
    """Integer index values with negative ones counted from the end (``i + n``), for a
    gather/scatter (which do not normalize)."""
    if type(n) is DimExpr:   # a symbolic size: counted from the end by the program
        i = Array(np.asarray(i)) if _is_static_int(i) or isinstance(i, np.ndarray) else i
        if i.dtype.itemsize < 4 and not dtypes.is_unsigned(i.dtype):
            i = lax.convert_element_type(i, dtypes.int32)
        return i if dtypes.is_unsigned(i.dtype) else \
            lax.select(lax.lt(i, 0), lax.add(i, dimension_size(n, i.dtype)), i)
    if _is_static_int(i):
        i = max(min(operator.index(i), n), -n - 1)  # still out of bounds if it was: int32
        return Array(np.asarray(_count_from_end(i, n), np.int32))
    if isinstance(i, np.ndarray):
        i = Array(i)
    if dtypes.is_unsigned(i.dtype):
        return lax.convert_element_type(i, dtypes.int32) if i.dtype.itemsize < 4 else i
    if i.dtype.itemsize < 4:
        i = lax.convert_element_type(i, dtypes.int32)
    if type(i) is Array:
        v = i._value
        return Array(np.where(v < 0, v + n, v).astype(i.dtype))
    return lax.select(lax.lt(i, 0), lax.add(i, n), i)


def _index_dtype(values):
    wide = any(v.dtype.itemsize == 8 or v.dtype == dtypes.uint32 for v in values)
    return dtypes.int64 if wide else dtypes.int32


class _Plan(NamedTuple):
    axes: tuple          # the dimensions of x that are indexed
    indices: object      # int array G + (len(axes),)
    to_numpy: tuple      # permutation of the gather result into NumPy's layout
    gather_shape: tuple  # G + rest


def _plan(x, entries, clip=False):
    """The gather/scatter plan of an index, or None when every dimension is taken whole.
    With ``clip`` the index values are clamped into bounds."""
    shape = x.shape
    # integers join the advanced group: with no index arrays the group has no dimensions,
    # so where it lands does not matter
    advanced = [d for d, i in enumerate(entries) if _is_array_index(i) or _is_int_scalar(i)]
    partial = [d for d, i in enumerate(entries) if isinstance(i, slice)
               and i.indices(shape[d]) != (0, shape[d], 1)]
    if not advanced and not partial:
        return None
    rest = [d for d, i in enumerate(entries) if isinstance(i, slice) and d not in partial]
    adv_values = [_normalize_index(entries[d], shape[d]) for d in advanced]
    bshape = broadcast_shapes("x[idx]", *[tuple(v.shape) for v in adv_values]) \
        if adv_values else ()
    index_dtype = _index_dtype(adv_values)
    nb, ns = len(bshape), len(partial)
    gshape = bshape + tuple(len(range(*entries[d].indices(shape[d]))) for d in partial)
    components = {}
    for d, v in zip(advanced, adv_values):
        v = convert(v, index_dtype)
        if clip:
            v = lax.clamp(convert(0, index_dtype), v, convert(shape[d] - 1, index_dtype))
        v = broadcast_to_shape(v, bshape, "x[idx]")
        components[d] = lax.broadcast_in_dim(v, gshape, tuple(range(nb)))
    for k, d in enumerate(partial):
        ramp = Array(np.arange(*entries[d].indices(shape[d]), dtype=index_dtype))
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
        else:
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
    """``x.at[idx]``: functional updates returning a new array. Out-of-bounds indices are
    dropped (``mode=None``/"drop"/"fill") or clamped into bounds (``mode="clip"``); repeated
    indices all apply (``add`` sums them; ``set`` keeps one). ``indices_are_sorted`` and
    ``unique_indices`` are JAX's performance hints, accepted and unused."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        """``x[idx]``; ``mode="fill"`` gives ``fill_value`` (default NaN / min int) for
        out-of-bounds indices instead of clamping them."""
        _check_mode("x.at[idx].get", mode)
        x, entries, _ = _expand(asarray(self.array, op="x.at[idx].get"), self.index,
                                "x.at[idx].get")
        plan = _plan(x, entries) if mode in ("fill", "drop", "clip") else None
        if plan is None:
            return getitem(self.array, self.index)
        return _gather(x, plan, "clip" if mode == "clip" else "fill", fill_value)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.array, self.index, values, "set", mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.array, self.index, values, "add", mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.array, self.index, values, "mul", mode)

    mul = multiply

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.array, self.index, values, "min", mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.array, self.index, values, "max", mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return _update(self.array, self.index, negative(values), "add", mode)

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] /= values``: x divided by the product of the values at each index."""
        divisor = _update(ones_like(self.array), self.index, values, "mul", mode)
        return true_divide(self.array, divisor)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[idx] **= values``: x to the product of the values at each index (as JAX)."""
        exponent = _update(ones_like(self.array), self.index, values, "mul", mode)
        return power(self.array, exponent)

    def apply(self, fn, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``fn`` applied to the indexed elements (each element once)."""
        values = fn(self.get(mode=mode))
        return _update(self.array, self.index, values, "set", mode)


_AT_MODES = (None, "clip", "fill", "drop", "promise_in_bounds")


def _check_mode(op, mode):
    if mode not in _AT_MODES:
        raise IndexingError(f"{op}: mode must be one of 'clip', 'fill', 'drop' or "
                            f"'promise_in_bounds', got {mode!r}", user_frame())


_COMBINE = {"set": lambda x, v: v, "add": lax.add, "mul": lax.mul, "min": lax.min,
            "max": lax.max}


def _update(x, idx, values, kind, mode=None):
    op = f"x.at[idx].{kind}"
    _check_mode(op, mode)
    x = asarray(x, op=op)
    original_shape = tuple(x.shape)
    x, entries, new_axes = _expand(x, idx, op)
    if type(values) in (int, float, bool):
        result_type(x, values, op=op)  # a Python int must fit int32 (int64 next to 64 bits)
    if isinstance(values, (list, tuple)):   # the values may be a list, as JAX's
        values = array_from(values, op=op)
    values = convert(values, x.dtype)
    plan = _plan(x, entries, clip=mode == "clip")
    if plan is None:  # every dimension taken whole: an elementwise update
        out = _COMBINE[kind](x, broadcast_to_shape(values, x.shape, op))
    else:
        # the shape x[idx] has in NumPy's layout, which ``values`` broadcasts to
        numpy_shape = tuple(plan.gather_shape[p] for p in plan.to_numpy)
        values = broadcast_to_shape(values, numpy_shape, op)
        updates = lax.transpose(values, tuple(np.argsort(plan.to_numpy)))
        out = point_scatter(x, plan.indices, updates, plan.axes, mode=kind)
    if new_axes:
        out = lax.reshape(out, original_shape)
    return out


# take / take_along_axis ----------------------------------------------------------------------
_TAKE_MODES = {None: "fill", "fill": "fill", "clip": "clip",
               "promise_in_bounds": "promise_in_bounds", "wrap": "promise_in_bounds"}


def _index_operand(op, indices):
    indices = asarray(indices, op=op)
    if not dtypes.is_integer(indices.dtype):
        raise DtypeError(f"{op}: indices must be integers, got {indices.aval}; convert with "
                         f".astype(pnp.int32)", user_frame())
    return indices


def _take_mode(op, mode):
    if mode not in _TAKE_MODES:
        raise IndexingError(f"{op}: mode must be one of 'fill', 'clip', 'wrap' or "
                            f"'promise_in_bounds', got {mode!r}", user_frame())
    return _TAKE_MODES[mode]


def _wrapped(indices, n, mode):
    """Indices for ``mode``: taken modulo n (wrap), clamped as they are (clip), else with
    negative ones counted from the end."""
    if mode == "wrap":
        return remainder(indices, max(n, 1))
    if mode == "clip":
        return indices
    return _normalize_index(indices, n)


def take(a, indices, axis=None, mode=None, fill_value=None):
    """As JAX: out-of-bounds indices give ``fill_value`` (mode None/"fill"; negative ones
    count from the end first), are clamped as they are ("clip") or wrap ("wrap")."""
    a, indices = asarray(a, op="take"), _index_operand("take", indices)
    gather_mode = _take_mode("take", mode)
    if axis is None:
        a, axis = lax.reshape(a, (a.size,)), 0
    axis = normalize_axis("take", axis, a.ndim)
    if a.shape[axis] == 0 and indices.size:
        raise IndexingError(f"take: cannot take {indices.aval} from axis {axis} of size 0 in "
                            f"{a.aval}", user_frame())
    idx = _wrapped(indices, a.shape[axis], mode)
    out = point_gather(a, lax.expand_dims(idx, (idx.ndim,)), (axis,), mode=gather_mode,
                     fill_value=fill_value)
    # gather puts the index dims first; move them to ``axis``
    nidx = idx.ndim
    perm = list(range(nidx, nidx + axis)) + list(range(nidx)) + \
        list(range(nidx + axis, out.ndim))
    return lax.transpose(out, perm)


def take_along_axis(arr, indices, axis, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """As JAX: negative indices count from the end (unless ``wrap_negative_indices`` is False,
    or, by default, in mode "promise_in_bounds"); out-of-bounds ones give ``fill_value``
    (mode None/"fill") or are clamped ("clip")."""
    arr = asarray(arr, op="take_along_axis")
    indices = _index_operand("take_along_axis", indices)
    gather_mode = _take_mode("take_along_axis", mode)
    if axis is None:
        arr, axis = lax.reshape(arr, (arr.size,)), 0
    axis = normalize_axis("take_along_axis", axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise IndexingError(f"take_along_axis: indices {indices.aval} must have the rank of "
                            f"{arr.aval}", user_frame())
    shape = [indices.shape[d] if d == axis else broadcast_shapes(
        "take_along_axis", (arr.shape[d],), (indices.shape[d],))[0] for d in range(arr.ndim)]
    arr_shape = list(shape)
    arr_shape[axis] = arr.shape[axis]
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    if arr.shape[axis] == 0:
        return zeros(shape, arr.dtype)
    arr = broadcast_to_shape(arr, arr_shape, "take_along_axis")
    if mode == "wrap":
        indices = _wrapped(indices, arr.shape[axis], mode)
    elif wrap_negative_indices:
        indices = _normalize_index(indices, arr.shape[axis])
    indices = broadcast_to_shape(indices, shape, "take_along_axis")
    # batch over every other dimension: move ``axis`` last, gather with nbatch = ndim - 1
    perm = [d for d in range(arr.ndim) if d != axis] + [axis]
    a_t = lax.transpose(arr, perm)
    i_t = lax.transpose(indices, perm)
    out = point_gather(a_t, lax.expand_dims(i_t, (i_t.ndim,)), (0,), nbatch=arr.ndim - 1,
                     mode=gather_mode, fill_value=fill_value)
    return lax.transpose(out, tuple(np.argsort(perm)))


_add_examples(globals(), """
take:
    >>> pnp.take(pnp.array([10, 20, 30]), pnp.array([2, 0]))
    Array([30, 10], dtype=int32)
take_along_axis:
    >>> pnp.take_along_axis(pnp.array([[3, 1], [0, 2]]), pnp.array([[1], [0]]), axis=1)
    Array([[1],
           [0]], dtype=int32)
""")
