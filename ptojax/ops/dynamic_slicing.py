"""``dynamic_slice`` and ``dynamic_update_slice``: a window at traced start indices, clamped
into bounds (as XLA), with every fact. Batched start indices turn them into a gather/scatter
of every window point."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.eval.leaves import check_arraylike
from ptojax.ir.types import TensorType
from ptojax.ops import sharding_rules as sr
from ptojax.ops.arithmetic import add, clamp
from ptojax.ops.broadcast import broadcast_in_dim, instantiate, to_front, zeros
from ptojax.ops.checks import require_same_dtype, user_axis
from ptojax.ops.convert import convert_element_type
from ptojax.ops.costs import no_flops
from ptojax.ops.elementwise import constant
from ptojax.ops.gather_scatter import gather, scatter
from ptojax.ops.logic import lt, select
from ptojax.ops.shape import expand_dims, move_axis, reshape, squeeze
from ptojax.ops.slicing import broadcasted_iota, concatenate
from ptojax.ops.tangents import Zero, is_undefined, is_zero, linear_in_first_jvp
from ptojax.eval import axis_env
from ptojax.trace import Primitive, Unsupported
from ptojax.ir.symbolic import as_dim
from ptojax.ops.dimension_size import dimension_size
from ptojax.public import add_examples as _add_examples

NOT_TILED = Unsupported("dynamic slices are data-dependent data movement; kept as tensor ops")


def _require_int_scalars(name, idx):
    for t in idx:
        if t.shape != () or not dtypes.is_integer(t.dtype):
            raise DtypeError(f"{name}: start indices must be integer scalars, got {t}")


def _clamped_starts(shape, sizes, starts):
    return [int(min(max(int(s), 0), n - k)) for n, k, s in zip(shape, sizes, starts)]


def _start_indices(indices, shape):
    """Start indices as integer scalars, negative ones counted from the end — the one place
    they are normalized (as JAX's lax.dynamic_slice) — then the primitive clamps the window
    into bounds. Narrow integers are widened to int32 first, so ``i + n`` cannot wrap."""
    return [_start_index(i, n) for i, n in zip(indices, shape)]


def _start_index(i, n):
    if isinstance(i, (int, np.integer)):
        i = min(max(int(i), -n), n)  # anything further out clamps alike
        return dimension_size(i + n if i < 0 else i, dtypes.int32)
    if isinstance(i, np.ndarray):   # a numpy input: its canonical dtype (int32 without x64)
        i = dtypes.canonical_value(i)
    if not dtypes.is_integer(i.dtype) or dtypes.is_unsigned(i.dtype):
        return i  # unsigned: nothing to count from the end; non-integers: the type check
    if i.dtype.itemsize < 4:
        i = convert_element_type(i, dtypes.int32)
    return select(lt(i, 0), add(i, n), i)


def _starts_matrix(starts, dims, shape, sizes):
    """Batched start indices as an int32 (B, ndim) array, clamped like dynamic_slice."""
    size = axis_env.batch_axis_size()
    cols = []
    for s, d, n, k in zip(starts, dims, shape, sizes):
        s = clamp(0, convert_element_type(s, dtypes.int32), n - k)
        cols.append(broadcast_in_dim(s, (size, 1), ()) if d is None else
                    reshape(move_axis(s, d, 0), (size, 1)))
    return concatenate(cols, 1)


def _window_indices(starts, sizes):
    """(B, *sizes, ndim) indices: every point of each batch element's window."""
    size, ndim = starts.shape
    grid_shape = (size, *sizes, ndim)
    base = broadcast_in_dim(starts, grid_shape, (0, ndim + 1))
    parts = [broadcasted_iota(dtypes.int32, (size, *sizes, 1), j + 1) for j in range(ndim)]
    return add(base, concatenate(parts, ndim + 1))


# dynamic_slice ---------------------------------------------------------------------------------
def _dynamic_slice_abstract(x, *starts, slice_sizes):
    _require_int_scalars("dynamic_slice", starts)
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise ShapeError(f"dynamic_slice: {x} needs {x.ndim} start indices and slice sizes, "
                         f"got {len(starts)} and {tuple(slice_sizes)}")
    for d, (n, s) in enumerate(zip(x.shape, slice_sizes)):
        if not 0 <= s <= n:
            raise ShapeError(f"dynamic_slice: slice size {s} does not fit dimension {d} "
                             f"of {x}")
    return TensorType(slice_sizes, x.dtype, x.weak_type)


def _dynamic_slice(x, *starts, slice_sizes):
    starts = _clamped_starts(x.shape, slice_sizes, starts)
    return x[tuple(slice(s, s + k) for s, k in zip(starts, slice_sizes))]


dynamic_slice_p = Primitive("dynamic_slice", _dynamic_slice_abstract, _dynamic_slice,
                            linear=True)


def dynamic_slice(x, start_indices, slice_sizes):
    check_arraylike("dynamic_slice", x)
    return dynamic_slice_p.bind(x, *_start_indices(start_indices, x.shape),
                                slice_sizes=tuple(map(as_dim, slice_sizes)))


def dynamic_slice_in_dim(x, start_index, slice_size, axis=0):
    check_arraylike("dynamic_slice_in_dim", x)
    axis = user_axis("dynamic_slice_in_dim", axis, x.ndim)
    starts = [0] * x.ndim
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = slice_size
    return dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(x, index, axis=0, keepdims=True):
    check_arraylike("dynamic_index_in_dim", x)
    out = dynamic_slice_in_dim(x, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _dynamic_slice_batch(args, dims, slice_sizes):
    x, *starts = args
    xd, *sds = dims
    if all(d is None for d in sds):  # only the operand is batched: slice around the batch
        zero = constant(0, starts[0].dtype if starts else dtypes.int32)
        starts.insert(xd, zero)
        sizes = list(slice_sizes)
        sizes.insert(xd, x.shape[xd])
        return dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(sizes)), xd
    example = x.shape if xd is None else x.shape[:xd] + x.shape[xd + 1:]
    idx = _window_indices(_starts_matrix(starts, sds, example, slice_sizes), slice_sizes)
    axes = tuple(range(len(example)))
    if xd is None:
        return gather(x, idx, axes), 0
    return gather(move_axis(x, xd, 0), idx, axes, nbatch=1), 0


def _dynamic_slice_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    dims = [f.new(n) if k == n else () for n, k in zip(sr.shape_of(eqn.inputs[0]),
                                                        eqn.params["slice_sizes"])]
    return f.rule([dims] + [()] * (len(eqn.inputs) - 1), [dims])


dynamic_slice_p.define(
    jvp=linear_in_first_jvp(dynamic_slice_p),
    transpose=lambda ct, x, *starts, slice_sizes: [
        dynamic_update_slice_p.bind(zeros(x.aval), ct, *starts)] + [None] * len(starts),
    batch=_dynamic_slice_batch,
    shard=sr.ShardRule(_dynamic_slice_factors, sr.out_shape_param("slice_sizes"),
                       linear="unary"),
    tile=NOT_TILED, cost=no_flops,
    reference=lambda jnp, lax: lambda x, *starts, slice_sizes: lax.dynamic_slice(
        x, starts, slice_sizes))


# dynamic_update_slice --------------------------------------------------------------------------
def _dynamic_update_slice_abstract(x, update, *starts):
    _require_int_scalars("dynamic_update_slice", starts)
    require_same_dtype("dynamic_update_slice", (x, update))
    if len(starts) != x.ndim or update.ndim != x.ndim or any(
            u > n for u, n in zip(update.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: update {update} with {len(starts)} start "
                         f"indices does not fit in {x}")
    # strong, as JAX's: its result is weak only when every operand is, and it makes the
    # start indices strong int32s
    return x.strip_weak()


def _dynamic_update_slice(x, update, *starts):
    return _dynamic_update_slice_in_place(np.array(x, copy=True), update, *starts)


def _dynamic_update_slice_in_place(x, update, *starts):
    starts = _clamped_starts(x.shape, update.shape, starts)
    x[tuple(slice(s, s + k) for s, k in zip(starts, update.shape))] = update
    return x


dynamic_update_slice_p = Primitive("dynamic_update_slice", _dynamic_update_slice_abstract,
                                   _dynamic_update_slice, linear=True, fresh_outputs=True,
                                   in_place=_dynamic_update_slice_in_place)


def dynamic_update_slice(x, update, start_indices):
    check_arraylike("dynamic_update_slice", x, update)
    return dynamic_update_slice_p.bind(x, update, *_start_indices(start_indices, x.shape))


def dynamic_update_slice_in_dim(x, update, start_index, axis=0):
    check_arraylike("dynamic_update_slice_in_dim", x, update)
    axis = user_axis("dynamic_update_slice_in_dim", axis, x.ndim)
    starts = [0] * x.ndim
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def _dynamic_update_slice_jvp(primals, tangents):
    (x, upd, *starts), (tx, tu, *_) = primals, tangents
    out = dynamic_update_slice_p.bind(x, upd, *starts)
    if is_zero(tx) and is_zero(tu):
        return out, Zero(out.aval)
    return out, dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *starts)


def _dynamic_update_slice_transpose(ct, x, update, *starts):
    ct_x = ct_u = None
    if is_undefined(x):
        ct_x = dynamic_update_slice_p.bind(ct, zeros(update.aval), *starts)
    if is_undefined(update):
        ct_u = dynamic_slice_p.bind(ct, *starts, slice_sizes=tuple(update.aval.shape))
    return [ct_x, ct_u] + [None] * len(starts)


def _dynamic_update_slice_batch(args, dims):
    """A batch-wide window, or a scatter of each example's window. Batched, the result takes
    the operand's weak type (as a scatter does), as JAX's (whose batching rule scatters)."""
    x, upd, *starts = args
    xd, ud, *sds = dims
    if all(d is None for d in sds):  # only the operand and/or update: a batch-wide window
        x, upd = to_front(x, xd), to_front(upd, ud)
        zero = constant(0, starts[0].dtype if starts else dtypes.int32)
        out = dynamic_update_slice_p.bind(x, upd, zero, *starts)
        return convert_element_type(out, out.dtype, weak_type=x.weak_type), 0
    x, upd = to_front(x, xd), to_front(upd, ud)
    example, sizes = tuple(x.shape[1:]), tuple(upd.shape[1:])
    idx = _window_indices(_starts_matrix(starts, sds, example, sizes), sizes)
    return scatter(x, idx, upd, tuple(range(len(example))), nbatch=1, mode="set"), 0


def _dynamic_update_slice_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    x, update = eqn.inputs[:2]
    dims = [f.new(n) if k == n else () for n, k in zip(sr.shape_of(x), sr.shape_of(update))]
    return f.rule([dims, dims] + [()] * (len(eqn.inputs) - 2), [dims])


dynamic_update_slice_p.define(
    jvp=_dynamic_update_slice_jvp, transpose=_dynamic_update_slice_transpose,
    batch=_dynamic_update_slice_batch, shard=sr.ShardRule(_dynamic_update_slice_factors),
    tile=NOT_TILED, cost=no_flops,
    reference=lambda jnp, lax: lambda x, update, *starts: lax.dynamic_update_slice(
        x, update, starts))


def dynamic_update_index_in_dim(operand, update, index, axis):
    """``operand`` with index ``index`` of ``axis`` replaced by ``update`` (which may lack
    that axis)."""
    check_arraylike("dynamic_update_index_in_dim", operand, update)
    axis = int(axis)
    if np.ndim(update) != np.ndim(operand):
        if np.ndim(update) + 1 != np.ndim(operand):
            raise ShapeError(f"dynamic_update_index_in_dim: update of rank {np.ndim(update)} "
                             f"for an operand of rank {np.ndim(operand)}")
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)

_add_examples(globals(), """
dynamic_update_index_in_dim:
    >>> pto.lax.dynamic_update_index_in_dim(pnp.zeros((2, 3)), pnp.ones(3), 1, 0)
    Array([[0., 0., 0.],
           [1., 1., 1.]], dtype=float32)
dynamic_index_in_dim: The slice at a traced ``index`` of ``operand`` along ``axis`` (clamped
    into range).
    >>> x = pnp.arange(6).reshape(2, 3)
    >>> pto.lax.dynamic_index_in_dim(x, pnp.array(2), axis=1, keepdims=False)
    Array([2, 5], dtype=int32)
dynamic_slice: The ``slice_sizes`` block of ``operand`` starting at traced ``start_indices``
    (clamped so the block fits).
    >>> pto.lax.dynamic_slice(pnp.arange(10), (pnp.array(8),), (3,))
    Array([7, 8, 9], dtype=int32)
dynamic_slice_in_dim: ``slice_size`` elements of ``operand`` along ``axis`` from a traced
    ``start_index`` (clamped).
    >>> pto.lax.dynamic_slice_in_dim(pnp.arange(6), pnp.array(1), 3)
    Array([1, 2, 3], dtype=int32)
dynamic_update_slice: ``operand`` with the block ``update`` written at traced ``start_indices``
    (clamped so it fits).
    >>> zeros = pnp.zeros(5, dtype=pnp.int32)
    >>> pto.lax.dynamic_update_slice(zeros, pnp.array([7, 8]), (pnp.array(1),))
    Array([0, 7, 8, 0, 0], dtype=int32)
dynamic_update_slice_in_dim: ``operand`` with ``update`` written along ``axis`` at a traced
    ``start_index``.
    >>> zeros = pnp.zeros(5, dtype=pnp.int32)
    >>> pto.lax.dynamic_update_slice_in_dim(zeros, pnp.array([7, 8]), 3, axis=0)
    Array([0, 0, 0, 7, 8], dtype=int32)
""")
