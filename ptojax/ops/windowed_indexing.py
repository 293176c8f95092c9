"""``lax.gather`` and ``lax.scatter*`` with JAX's (XLA's) dimension numbers and modes, written
with the point-indexing primitives of ``gather_scatter.py``.

XLA's gather reads, for every start index, a *window* of ``slice_sizes`` at that start; its
scatter writes windows of updates. Here every operand dimension a window does not cover whole
is indexed point by point: its index is the (clamped) start plus an iota over the window, so
the primitives see one point per output (or update) element, and dimensions taken whole stay
whole. Autodiff, vmap and sharding then come from the point primitives' facts.

Modes (``GatherScatterMode``): CLIP clamps starts so the whole window is inside the operand;
FILL_OR_DROP (the default) fills a gathered window, or drops a scattered one, when any part of
it is outside; PROMISE_IN_BOUNDS gathers as CLIP and scatters as FILL_OR_DROP (what XLA does).
"""
from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from ptojax import dtypes
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.arithmetic import add, clamp, neg, rem
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.convert import convert_element_type
from ptojax.ops.gather_scatter import default_fill, gather as point_gather, scatter
from ptojax.ops.logic import bitwise_and, ge, le, select
from ptojax.ops.shape import expand_dims, reshape, transpose
from ptojax.ops.slicing import broadcasted_iota, concatenate, slice_in_dim
from ptojax.source_info import user_frame
from ptojax.ir.symbolic import as_dim
from ptojax.public import add_examples as _add_examples


class GatherDimensionNumbers(NamedTuple):
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """What ``gather`` and the scatters do with out-of-bounds indices: ``CLIP`` them into
    range, ``FILL_OR_DROP`` (gathers fill, scatters drop the update), or ``PROMISE_IN_BOUNDS``
    (the caller guarantees they are in bounds); the ``.at[]`` methods take the names as
    ``mode``.

    Example:
        >>> pnp.array([1, 2, 3]).at[5].get(mode="fill", fill_value=-1)
        Array(-1, dtype=int32)
        >>> pto.lax.GatherScatterMode.CLIP
        <GatherScatterMode.CLIP: 1>
    """
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(mode) -> "GatherScatterMode":
        if isinstance(mode, GatherScatterMode):
            return mode
        names = {"clip": GatherScatterMode.CLIP, None: GatherScatterMode.FILL_OR_DROP,
                 "fill": GatherScatterMode.FILL_OR_DROP, "drop": GatherScatterMode.FILL_OR_DROP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
                 "one_hot": GatherScatterMode.ONE_HOT}
        if mode not in names:
            raise ValueError(f'Unknown gather mode "{mode}"')
        return names[mode]


def _mode(mode, what):
    mode = GatherScatterMode.from_any(mode)
    if mode is GatherScatterMode.ONE_HOT:
        raise UnsupportedError(f"{what}: mode ONE_HOT is not supported; use CLIP or "
                               f"FILL_OR_DROP", user_frame())
    return mode


class _Windows(NamedTuple):
    """How the windows of one gather/scatter map onto point indices."""
    starts: dict        # operand dim -> entry of the index vector giving its start
    batching: dict      # operand dim -> position (in the point array) of its paired batch dim
    window_pos: dict    # operand dim -> position (in the point array) of its window
    sizes: tuple        # window size per operand dimension
    whole: tuple        # operand dims taken whole (left to the primitive), in operand order
    whole_pos: tuple    # their positions in the output (gather) or updates (scatter)
    point_shape: tuple  # shape of the point index array (without the index vector)
    batch_pos: tuple    # positions (in the point array) of the index array's batch dims


def _plan(what, shape, index_shape, window_dims, dropped, start_map, operand_batching,
          index_batching, sizes, out_rank):
    """``window_dims``: the positions, in the output (or updates), of the windows of the
    operand dims neither ``dropped`` (collapsed/inserted) nor batching, in operand order."""
    windowed = [d for d in range(len(shape)) if d not in dropped and d not in operand_batching]
    if len(windowed) != len(window_dims) or list(window_dims) != sorted(window_dims):
        raise ShapeError(f"{what}: the window dimensions {tuple(window_dims)} must be sorted "
                         f"and one per operand dimension that is neither collapsed nor "
                         f"batching ({len(windowed)})", user_frame())
    if len(start_map) != index_shape[-1]:
        raise ShapeError(f"{what}: the index vectors have {index_shape[-1]} entries but "
                         f"{len(start_map)} operand dimensions are mapped", user_frame())
    for d, n in enumerate(shape):
        if not 0 <= sizes[d] <= n:
            raise ShapeError(f"{what}: a window of size {sizes[d]} along dimension {d} does "
                             f"not fit the operand's size {n}", user_frame())
    starts = {d: k for k, d in enumerate(start_map)}
    out_window = dict(zip(windowed, window_dims))
    whole = tuple(d for d in windowed if sizes[d] == shape[d] and d not in starts)
    whole_pos = tuple(out_window[d] for d in whole)
    kept = [p for p in range(out_rank) if p not in whole_pos]
    where = {p: i for i, p in enumerate(kept)}
    batch_out = [p for p in range(out_rank) if p not in window_dims]
    by_window = {p: d for d, p in out_window.items()}
    point_shape = tuple(sizes[by_window[p]] if p in by_window else
                        index_shape[batch_out.index(p)] for p in kept)
    batching = {d: where[batch_out[index_batching[j]]] for j, d in enumerate(operand_batching)}
    window_pos = {d: where[p] for d, p in out_window.items() if d not in whole}
    return _Windows(starts, batching, window_pos, tuple(sizes), whole, whole_pos, point_shape,
                    tuple(where[p] for p in batch_out))


def _index_dtype(indices):
    return dtypes.int64 if indices.dtype.itemsize == 8 else dtypes.int32


def _starts(indices, plan, shape, clip):
    """The start of each mapped operand dimension (shaped like the index batch), clamped so
    its window fits with ``clip``, and whether every window fits (None if nothing is
    mapped)."""
    dtype = _index_dtype(indices)
    cols, fits = {}, None
    for d, k in plan.starts.items():
        col = convert_element_type(reshape(slice_in_dim(indices, k, k + 1, 1, indices.ndim - 1),
                                           indices.shape[:-1]), dtype)
        lo, hi = (convert_element_type(v, dtype) for v in (0, shape[d] - plan.sizes[d]))
        ok = bitwise_and(ge(col, lo), le(col, hi))
        fits = ok if fits is None else bitwise_and(fits, ok)
        cols[d] = clamp(lo, col, hi) if clip else col
    return cols, fits


def _points(indices, plan, cols):
    """(index array ``point_shape + (len(axes),)``, axes): start + window offset for every
    operand dim not taken whole."""
    dtype = _index_dtype(indices)
    axes = tuple(d for d in range(len(plan.sizes)) if d not in plan.whole)
    columns = []
    for d in axes:
        column = broadcast_in_dim(convert_element_type(0, dtype), plan.point_shape, ())
        if d in cols:
            column = broadcast_in_dim(cols[d], plan.point_shape, plan.batch_pos)
        elif d in plan.batching:
            column = broadcasted_iota(dtype, plan.point_shape, plan.batching[d])
        if d in plan.window_pos:
            column = add(column, broadcasted_iota(dtype, plan.point_shape, plan.window_pos[d]))
        columns.append(reshape(column, (*plan.point_shape, 1)))
    if not columns:
        return broadcast_in_dim(convert_element_type(0, dtype), (*plan.point_shape, 0), ()), axes
    return concatenate(columns, len(plan.point_shape)), axes


def _whole_last(plan, rank):
    """The permutation of ``rank`` output positions that puts the whole dims last."""
    return tuple(p for p in range(rank) if p not in plan.whole_pos) + plan.whole_pos


# gather ----------------------------------------------------------------------------------------
def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather, as JAX's ``lax.gather`` (``unique_indices`` and ``indices_are_sorted``
    are hints, accepted and unused)."""
    check_arraylike("gather", operand, start_indices)
    dn = GatherDimensionNumbers(*(tuple(v) for v in dimension_numbers))
    mode = _mode(mode, "gather")
    shape, sizes = tuple(operand.shape), tuple(map(as_dim, slice_sizes))
    if len(sizes) != len(shape):
        raise ShapeError(f"gather: slice_sizes {sizes} needs one entry per dimension of the "
                         f"operand of shape {shape}", user_frame())
    if any(sizes[d] != 1 for d in (*dn.collapsed_slice_dims, *dn.operand_batching_dims)):
        raise ShapeError(f"gather: collapsed and batching dimensions need slice size 1, got "
                         f"slice_sizes {sizes}", user_frame())
    out_rank = start_indices.ndim - 1 + len(dn.offset_dims)
    plan = _plan("gather", shape, tuple(start_indices.shape), dn.offset_dims,
                 dn.collapsed_slice_dims, dn.start_index_map, dn.operand_batching_dims,
                 dn.start_indices_batching_dims, sizes, out_rank)
    fill = mode is GatherScatterMode.FILL_OR_DROP
    cols, fits = _starts(start_indices, plan, shape, clip=not fill)
    points, axes = _points(start_indices, plan, cols)
    out = point_gather(operand, points, axes)
    if plan.whole:   # the whole dims come last: move them to their output positions
        out = transpose(out, tuple(int(i) for i in np.argsort(_whole_last(plan, out_rank))))
    if fill and fits is not None:
        value = default_fill(operand.dtype) if fill_value is None else fill_value
        batch = tuple(p for p in range(out_rank) if p not in dn.offset_dims)
        out = select(broadcast_in_dim(fits, out.shape, batch), out,
                     convert_element_type(value, operand.dtype))
    return out


# scatter ---------------------------------------------------------------------------------------
def _scatter(name, point_mode, operand, scatter_indices, updates, dimension_numbers, mode):
    dn = ScatterDimensionNumbers(*(tuple(v) for v in dimension_numbers))
    mode = _mode(mode, name)
    shape = tuple(operand.shape)
    windowed = [d for d in range(len(shape)) if d not in dn.inserted_window_dims and
                d not in dn.operand_batching_dims]
    if len(windowed) != len(dn.update_window_dims):
        raise ShapeError(f"{name}: update_window_dims {dn.update_window_dims} needs one entry "
                         f"per operand dimension neither inserted nor batching "
                         f"({len(windowed)})", user_frame())
    sizes = [1] * len(shape)
    for d, p in zip(windowed, dn.update_window_dims):
        sizes[d] = updates.shape[p]
    plan = _plan(name, shape, tuple(scatter_indices.shape), dn.update_window_dims,
                 dn.inserted_window_dims, dn.scatter_dims_to_operand_dims,
                 dn.operand_batching_dims, dn.scatter_indices_batching_dims, sizes,
                 updates.ndim)
    clip = mode is GatherScatterMode.CLIP
    cols, fits = _starts(scatter_indices, plan, shape, clip)
    if not clip and fits is not None:   # a window not wholly inside is dropped: point past
        cols = {d: select(fits, c, convert_element_type(shape[d], c.dtype))
                for d, c in cols.items()}
    points, axes = _points(scatter_indices, plan, cols)
    if plan.whole:
        updates = transpose(updates, _whole_last(plan, updates.ndim))
    return scatter(operand, points, updates, axes, mode=point_mode)


def _scatter_function(name, point_mode, negate=False):
    def fn(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        check_arraylike(name, operand, scatter_indices, updates)
        return _scatter(name, point_mode, operand, scatter_indices,
                        neg(updates) if negate else updates, dimension_numbers, mode)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"XLA's scatter with the {point_mode} combiner, as JAX's ``lax.{name}``."
    return fn


scatter_set = _scatter_function("scatter", "set")
scatter_add = _scatter_function("scatter_add", "add")
scatter_sub = _scatter_function("scatter_sub", "add", negate=True)
scatter_mul = _scatter_function("scatter_mul", "mul")
scatter_min = _scatter_function("scatter_min", "min")
scatter_max = _scatter_function("scatter_max", "max")


def index_take(src, idxs, axes):
    """``src`` at the points whose coordinates along ``axes`` are ``idxs`` (one index array
    per axis; negative and out-of-range indices wrap), the other dimensions whole."""
    axes = tuple(int(a) for a in axes)
    indices = concatenate([expand_dims(i, (1,)) for i in idxs], 1)
    sizes = broadcast_in_dim(np.array([src.shape[a] for a in axes], indices.dtype),
                             tuple(indices.shape), (1,))
    indices = rem(add(rem(indices, sizes), sizes), sizes)   # a floored modulo, as JAX's %
    slice_sizes = list(src.shape)
    for a in axes:
        slice_sizes[a] = 1
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, src.ndim - len(axes) + 1)),
                                   collapsed_slice_dims=axes, start_index_map=axes)
    return gather(src, indices, dnums, tuple(slice_sizes))

_add_examples(globals(), """
index_take:
    >>> pto.lax.index_take(pnp.arange(12).reshape(3, 4), (pnp.array([0, -1]), pnp.array([1, 5])), (0, 1))
    Array([1, 9], dtype=int32)
gather:
    >>> dnums = pto.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
    ...                                        start_index_map=(0,))
    >>> pto.lax.gather(pnp.array([10, 20, 30]), pnp.array([[2], [0]]), dnums, (1,))
    Array([30, 10], dtype=int32)
scatter_add:
    >>> dnums = pto.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                         scatter_dims_to_operand_dims=(0,))
    >>> indices = pnp.array([[0], [2], [0]])
    >>> pto.lax.scatter_add(pnp.zeros(3), indices, pnp.array([1.0, 2.0, 3.0]), dnums)
    Array([4., 0., 2.], dtype=float32)
""")


_add_examples(globals(), """
GatherDimensionNumbers:
    >>> dnums = pto.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
    ...                                        start_index_map=(0,))
    >>> dnums.collapsed_slice_dims
    (0,)
ScatterDimensionNumbers:
    >>> dnums = pto.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                         scatter_dims_to_operand_dims=(0,))
    >>> indices = pnp.array([[0], [2], [0]])
    >>> dnums.inserted_window_dims
    (0,)
scatter_set:
    >>> dnums = pto.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                         scatter_dims_to_operand_dims=(0,))
    >>> indices = pnp.array([[0], [2], [0]])
    >>> pto.lax.scatter(pnp.zeros(3), indices, pnp.array([1.0, 2.0, 3.0]), dnums)[1:]
    Array([0., 2.], dtype=float32)
scatter_max:
    >>> dnums = pto.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                         scatter_dims_to_operand_dims=(0,))
    >>> indices = pnp.array([[0], [2], [0]])
    >>> pto.lax.scatter_max(pnp.zeros(3), indices, pnp.array([1.0, 2.0, 3.0]), dnums)
    Array([3., 0., 2.], dtype=float32)
scatter_min:
    >>> dnums = pto.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                         scatter_dims_to_operand_dims=(0,))
    >>> indices = pnp.array([[0], [2], [0]])
    >>> pto.lax.scatter_min(pnp.zeros(3), indices, pnp.array([-1.0, 2.0, -3.0]), dnums)
    Array([-3.,  0.,  0.], dtype=float32)
scatter_mul:
    >>> dnums = pto.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                         scatter_dims_to_operand_dims=(0,))
    >>> indices = pnp.array([[0], [2], [0]])
    >>> pto.lax.scatter_mul(pnp.ones(3), indices, pnp.array([2.0, 5.0, 3.0]), dnums)
    Array([6., 1., 5.], dtype=float32)
scatter_sub:
    >>> dnums = pto.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                         scatter_dims_to_operand_dims=(0,))
    >>> indices = pnp.array([[0], [2], [0]])
    >>> pto.lax.scatter_sub(pnp.zeros(3), indices, pnp.array([1.0, 2.0, 3.0]), dnums)
    Array([-4.,  0., -2.], dtype=float32)
""")
