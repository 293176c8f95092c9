"""Batching as an IR → IR rewrite.

``vmap_ir(closed, in_dims, axis_size, axis_name)`` returns an IR over batched inputs (input
``i`` carries the batch at dimension ``in_dims[i]``, or is unbatched for None) plus the batch
dimension of each output. Each primitive's rule lives in ``batch_rules``:

    rule(args, dims, **params) -> (out, out_dim)     (lists for multi-result primitives)

``dims[i]`` is the batch dimension of ``args[i]`` or None. Equations whose inputs are all
unbatched are copied as they are, so unbatched sub-computations (weights) stay unbatched —
except collectives over the vmapped axis name (and calls whose bodies contain one), which the
rules of ``vmap_collectives.py`` turn into local reductions over the batch dimension. The call
primitives' rows are in ``vmap_calls.py``.

Rules move a batch dimension only when the primitive needs it somewhere else: dot_general
makes it a batch or free dimension, reductions and elementwise ops shift their axes around it,
gather/scatter pair it with the indices' batch, and a batched index becomes a gather.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from ptojax import dtypes, lax, source_info
from ptojax.errors import UnsupportedError
from ptojax.ir.core import ClosedIR, Var, as_ir, sub_irs
from ptojax.ops import elementwise as ew, indexing as ix, linalg, reductions as red
from ptojax.ops import random_bits, shape as sh, sorting
from ptojax.eval.array import Array
from ptojax.trace import bind, trace_flat

batch_rules: dict = {}


# the axis environment ------------------------------------------------------------------------
class _AxisEnv(threading.local):
    def __init__(self):
        self.frames = []  # (axis_name, axis_size) of the vmaps in progress, innermost last


axis_env = _AxisEnv()


@contextlib.contextmanager
def bound_axis(axis_name, axis_size: int):
    """Bind a vmap's axis (name may be None) while its function is traced or batched."""
    axis_env.frames.append((axis_name, axis_size))
    try:
        yield
    finally:
        axis_env.frames.pop()


def current_axis_size() -> int:
    return axis_env.frames[-1][1]


def current_axis_name():
    return axis_env.frames[-1][0]


# the batching interpreter --------------------------------------------------------------------
def batched_type(t, dim, size):
    if dim is None:
        return t
    shape = list(t.shape)
    shape.insert(dim, size)
    return t.update(shape=tuple(shape))


def batch_eval(closed: ClosedIR, args, dims, axis_size: int, axis_name=None):
    """Evaluate ``closed`` on batched ``args``: (outs, out_dims)."""
    ir = closed.ir
    env = {v: (c, None) for v, c in zip(ir.constvars, closed.consts)}
    env.update((v, (a, d)) for v, a, d in zip(ir.invars, args, dims))
    previous = source_info.set_current(None)
    try:
        with bound_axis(axis_name, axis_size):
            for eqn in ir.eqns:
                source_info.set_current(eqn.source or previous)
                _batch_eqn(eqn, env, axis_name)
    finally:
        source_info.set_current(previous)
    results = [env[v] if type(v) is Var else (Array(v.value, v.type.weak_type), None)
               for v in ir.outvars]
    return [r[0] for r in results], [r[1] for r in results]


def _batch_eqn(eqn, env, axis_name) -> None:
    vals, in_dims = [], []
    for a in eqn.inputs:
        v, d = env[a] if type(a) is Var else (Array(a.value, a.type.weak_type), None)
        vals.append(v)
        in_dims.append(d)
    if all(d is None for d in in_dims) and not uses_axis(eqn, axis_name):
        out = bind(eqn.prim, vals, eqn.params)
        outs = out if eqn.prim.multiple_results else [out]
        out_dims = [None] * len(outs)
    else:
        rule = batch_rules.get(eqn.prim)
        if rule is None:
            raise UnsupportedError(f"vmap of `{eqn.prim.name}` is not supported", eqn.source)
        out, out_dim = rule(vals, in_dims, **eqn.params)
        outs, out_dims = (out, out_dim) if eqn.prim.multiple_results else ([out], [out_dim])
    env.update((v, (o, d)) for v, o, d in zip(eqn.outputs, outs, out_dims))


def uses_axis(eqn, axis_name) -> bool:
    """Whether ``eqn`` is a collective over ``axis_name`` or calls a body that has one (so it
    must be batched even when none of its inputs is)."""
    if axis_name is None:
        return False
    if getattr(eqn.prim, "collective", False):
        return axis_name in eqn.params["axes"]
    if eqn.prim.name == "shard_map":  # binds its own axis names: ours is shadowed inside
        return False
    return any(uses_axis(e, axis_name) for sub in sub_irs(eqn.params) for e in as_ir(sub).eqns)


def vmap_ir(closed: ClosedIR, in_dims, axis_size: int, axis_name=None) -> tuple:
    """(batched ClosedIR, out_dims)."""
    types = [batched_type(t, d, axis_size) for t, d in zip(closed.in_types, in_dims)]
    out_dims = []

    def fn(*args):
        outs, dims = batch_eval(closed, args, in_dims, axis_size, axis_name)
        out_dims[:] = dims
        return outs

    return trace_flat(fn, types, "vmap"), out_dims


# helpers -------------------------------------------------------------------------------------
def move_axis(x, src, dst):
    if src == dst:
        return x
    perm = [d for d in range(x.ndim) if d != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


def broadcast_at(x, dim, size=None):
    """``x`` with a new dimension of the batch size (or ``size``) inserted at ``dim``."""
    shape = list(x.shape)
    shape.insert(dim, current_axis_size() if size is None else size)
    return lax.broadcast_in_dim(x, tuple(shape),
                                tuple(d for d in range(len(shape)) if d != dim))


def to_front(x, d):
    """``x`` with its batch dimension first (unbatched values are broadcast)."""
    return broadcast_at(x, 0) if d is None else move_axis(x, d, 0)


def canonical_axes(axes, ndim) -> tuple:
    """Axes of a primitive's params (which may count from the end) in ``0..ndim-1``."""
    return tuple(a % ndim if a < 0 else a for a in axes)


def shift_axes(axes, bd):
    """Axes of the per-example value, renumbered for a value with a batch at ``bd``."""
    return tuple(a + (a >= bd) for a in axes)


def example_ndim(x, d) -> int:
    return x.ndim - (d is not None)


def _scalar(value, dtype):
    return Array(np.asarray(value, dtype))


# elementwise ---------------------------------------------------------------------------------
def _elementwise_rule(prim):
    def rule(args, dims, **params):
        return prim.bind(*align_elementwise(args, dims), **params), _elementwise_dim(args, dims)
    return rule


def _elementwise_dim(args, dims):
    """The output batch dimension: that of the first full-rank batched operand."""
    rank = max(example_ndim(a, d) for a, d in zip(args, dims))
    return next((d for a, d in zip(args, dims) if d is not None and a.ndim == rank + 1), 0)


def align_elementwise(args, dims) -> list:
    """Operands of an elementwise primitive with the batch in one place: unbatched rank-0
    operands stay scalars (the primitive broadcasts them), the others get the full shape."""
    rank = max(example_ndim(a, d) for a, d in zip(args, dims))
    out_dim = _elementwise_dim(args, dims)
    example = next(tuple(a.shape[:d] + a.shape[d + 1:]) if d is not None else tuple(a.shape)
                   for a, d in zip(args, dims) if example_ndim(a, d) == rank)
    out_shape = (*example[:out_dim], current_axis_size(), *example[out_dim:])
    fixed = []
    for a, d in zip(args, dims):
        if d is None:
            fixed.append(a if a.ndim == 0 else lax.broadcast_in_dim(
                a, out_shape, tuple(k for k in range(rank + 1) if k != out_dim)))
        elif a.ndim == rank + 1:
            fixed.append(move_axis(a, d, out_dim))
        else:  # a batched per-example scalar
            fixed.append(lax.broadcast_in_dim(a, out_shape, (out_dim,)))
    return fixed


for _p in ew.ELEMENTWISE.values():
    batch_rules[_p] = _elementwise_rule(_p)


def _clamp_rule(args, dims):
    """Like an elementwise op, except that the operand (not a bound) sets the shape."""
    (lo, x, hi), (ld, xd, hd) = args, dims
    if xd is None:
        x, xd = broadcast_at(x, 0), 0
    return _elementwise_rule(ew.clamp_p)([lo, x, hi], [ld, xd, hd])


batch_rules[ew.clamp_p] = _clamp_rule


def _threefry2x32_rule(args, dims):
    outs = random_bits.threefry2x32_p.bind(*align_elementwise(args, dims))
    dim = _elementwise_dim(args, dims)
    return outs, [dim, dim]


batch_rules[random_bits.threefry2x32_p] = _threefry2x32_rule


# reductions ----------------------------------------------------------------------------------
def _reduce_rule(prim):
    def rule(args, dims, axes):
        (x,), (bd,) = args, dims
        axes = shift_axes(canonical_axes(axes, x.ndim - 1), bd)
        return prim.bind(x, axes=axes), bd - sum(a < bd for a in axes)
    return rule


for _p in (red.reduce_sum_p, red.reduce_prod_p, red.reduce_max_p, red.reduce_min_p,
           red.reduce_and_p, red.reduce_or_p):
    batch_rules[_p] = _reduce_rule(_p)


def _arg_rule(prim):
    def rule(args, dims, axis, index_dtype):
        (x,), (bd,) = args, dims
        (axis,) = shift_axes(canonical_axes((axis,), x.ndim - 1), bd)
        return prim.bind(x, axis=axis, index_dtype=index_dtype), bd - (axis < bd)
    return rule


batch_rules[red.argmax_p] = _arg_rule(red.argmax_p)
batch_rules[red.argmin_p] = _arg_rule(red.argmin_p)


def _cumulative_rule(prim):
    def rule(args, dims, axis, reverse=False):
        (x,), (bd,) = args, dims
        (axis,) = shift_axes(canonical_axes((axis,), x.ndim - 1), bd)
        return prim.bind(x, axis=axis, reverse=reverse), bd
    return rule


for _p in red.CUMULATIVE.values():
    batch_rules[_p] = _cumulative_rule(_p)


# shapes --------------------------------------------------------------------------------------
def _broadcast_in_dim_rule(args, dims, shape, broadcast_dimensions):
    """The batch goes into the output where it keeps ``broadcast_dimensions`` increasing."""
    (x,), (bd,) = args, dims
    bdims = tuple(broadcast_dimensions)
    out_dim = bdims[bd] if bd < len(bdims) else (bdims[-1] + 1 if bdims else 0)
    new_bdims = (*bdims[:bd], out_dim, *(d + 1 for d in bdims[bd:]))
    out_shape = (*shape[:out_dim], x.shape[bd], *shape[out_dim:])
    return sh.broadcast_in_dim_p.bind(x, shape=out_shape,
                                      broadcast_dimensions=new_bdims), out_dim


def _reshape_rule(args, dims, new_sizes):
    (x,), (bd,) = args, dims
    x = move_axis(x, bd, 0)
    return lax.reshape(x, (x.shape[0], *new_sizes)), 0


def _transpose_rule(args, dims, permutation):
    (x,), (bd,) = args, dims
    perm = list(shift_axes(permutation, bd))
    perm.insert(bd, bd)
    return lax.transpose(x, perm), bd


def _squeeze_rule(args, dims, dimensions):
    (x,), (bd,) = args, dims
    dimensions = shift_axes(canonical_axes(dimensions, x.ndim - 1), bd)
    return lax.squeeze(x, dimensions), bd - sum(d < bd for d in dimensions)


def _expand_dims_rule(args, dims, dimensions):
    (x,), (bd,) = args, dims
    x = move_axis(x, bd, 0)
    dimensions = canonical_axes(dimensions, x.ndim - 1 + len(dimensions))
    return lax.expand_dims(x, tuple(d + 1 for d in dimensions)), 0


def _rev_rule(args, dims, dimensions):
    (x,), (bd,) = args, dims
    return lax.rev(x, shift_axes(canonical_axes(dimensions, x.ndim - 1), bd)), bd


def _slice_rule(args, dims, start_indices, limit_indices, strides=None):
    (x,), (bd,) = args, dims
    starts, limits = list(start_indices), list(limit_indices)
    strides = list(strides or (1,) * len(starts))
    starts.insert(bd, 0)
    limits.insert(bd, x.shape[bd])
    strides.insert(bd, 1)
    return lax.slice(x, starts, limits, strides), bd


def _concatenate_rule(args, dims, dimension):
    (dimension,) = canonical_axes((dimension,), example_ndim(args[0], dims[0]))
    if len(set(dims)) == 1:  # every operand batched at one dimension: leave it there
        bd = dims[0]
        return lax.concatenate(args, dimension + (dimension >= bd)), bd
    args = [to_front(a, d) for a, d in zip(args, dims)]
    return lax.concatenate(args, dimension + 1), 0


def _pad_rule(args, dims, padding_config):
    (x, value), (bd, vd) = args, dims
    if vd is None:
        config = list(padding_config)
        config.insert(bd, (0, 0, 0))
        return lax.pad(x, value, config), bd
    # a batched padding value: pad with zeros, then select the value where padding landed
    x = to_front(x, bd)
    config = ((0, 0, 0), *padding_config)
    padded = lax.pad(x, _scalar(0, x.dtype), config)
    inside = lax.pad(lax.broadcast_in_dim(_scalar(True, dtypes.bool_), x.shape, ()),
                     _scalar(False, dtypes.bool_), config)
    fill = lax.broadcast_in_dim(move_axis(value, vd, 0), padded.shape, (0,))
    return lax.select(inside, padded, fill), 0


batch_rules[sh.broadcast_in_dim_p] = _broadcast_in_dim_rule
batch_rules[sh.reshape_p] = _reshape_rule
batch_rules[sh.transpose_p] = _transpose_rule
batch_rules[sh.squeeze_p] = _squeeze_rule
batch_rules[sh.expand_dims_p] = _expand_dims_rule
batch_rules[sh.rev_p] = _rev_rule
batch_rules[sh.slice_p] = _slice_rule
batch_rules[sh.concatenate_p] = _concatenate_rule
batch_rules[sh.pad_p] = _pad_rule


# indexing ------------------------------------------------------------------------------------
def _starts_matrix(starts, dims, shape, sizes):
    """Batched start indices as an int32 (B, ndim) array, clamped like dynamic_slice."""
    size = current_axis_size()
    cols = []
    for s, d, n, k in zip(starts, dims, shape, sizes):
        s = lax.clamp(0, lax.convert_element_type(s, dtypes.int32), n - k)
        cols.append(lax.broadcast_in_dim(s, (size, 1), ()) if d is None else
                    lax.reshape(move_axis(s, d, 0), (size, 1)))
    return lax.concatenate(cols, 1)


def _window_indices(starts, sizes):
    """(B, *sizes, ndim) indices: every point of each batch element's window."""
    size, ndim = starts.shape
    grid_shape = (size, *sizes, ndim)
    base = lax.broadcast_in_dim(starts, grid_shape, (0, ndim + 1))
    parts = [lax.broadcasted_iota(dtypes.int32, (size, *sizes, 1), j + 1) for j in range(ndim)]
    return lax.add(base, lax.concatenate(parts, ndim + 1))


def _dynamic_slice_rule(args, dims, slice_sizes):
    x, *starts = args
    xd, *sds = dims
    if all(d is None for d in sds):  # only the operand is batched: slice around the batch
        zero = _scalar(0, starts[0].dtype if starts else dtypes.int32)
        starts.insert(xd, zero)
        sizes = list(slice_sizes)
        sizes.insert(xd, x.shape[xd])
        return ix.dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(sizes)), xd
    example = x.shape if xd is None else x.shape[:xd] + x.shape[xd + 1:]
    idx = _window_indices(_starts_matrix(starts, sds, example, slice_sizes), slice_sizes)
    axes = tuple(range(len(example)))
    if xd is None:
        return lax.gather(x, idx, axes), 0
    return lax.gather(move_axis(x, xd, 0), idx, axes, nbatch=1), 0


def _dynamic_update_slice_rule(args, dims):
    x, upd, *starts = args
    xd, ud, *sds = dims
    if all(d is None for d in sds):  # only the operand and/or update: a batch-wide window
        x, upd = to_front(x, xd), to_front(upd, ud)
        zero = _scalar(0, starts[0].dtype if starts else dtypes.int32)
        return ix.dynamic_update_slice_p.bind(x, upd, zero, *starts), 0
    x, upd = to_front(x, xd), to_front(upd, ud)
    example, sizes = tuple(x.shape[1:]), tuple(upd.shape[1:])
    idx = _window_indices(_starts_matrix(starts, sds, example, sizes), sizes)
    return lax.scatter(x, idx, upd, tuple(range(len(example))), nbatch=1, mode="set"), 0


def _gather_rule(args, dims, axes, nbatch=0, mode="clip", fill_value=None):
    (x, idx), (xd, id_) = args, dims
    axes = canonical_axes(axes, example_ndim(x, xd) - nbatch)
    kw = dict(mode=mode, fill_value=fill_value)
    if xd is not None and id_ is not None:  # a new paired batch dimension
        x, idx = move_axis(x, xd, 0), move_axis(idx, id_, 0)
        return lax.gather(x, idx, axes, nbatch + 1, **kw), 0
    if xd is not None:  # the batch becomes the first non-indexed operand dimension
        x = move_axis(x, xd, nbatch)
        n_i = idx.ndim - 1 - nbatch
        return lax.gather(x, idx, tuple(a + 1 for a in axes), nbatch, **kw), nbatch + n_i
    idx = move_axis(idx, id_, nbatch)  # the batch becomes the first index dimension
    return lax.gather(x, idx, axes, nbatch, **kw), nbatch


def _scatter_rule(args, dims, axes, nbatch=0, mode="add"):
    (x, idx, upd), (xd, id_, ud) = args, dims
    axes = canonical_axes(axes, example_ndim(x, xd) - nbatch)
    if id_ is not None:  # a new paired batch dimension
        x, idx, upd = to_front(x, xd), move_axis(idx, id_, 0), to_front(upd, ud)
        return lax.scatter(x, idx, upd, axes, nbatch + 1, mode), 0
    # unbatched indices: the batch is a non-indexed dimension of operand and updates
    n_i = idx.ndim - 1 - nbatch
    x = move_axis(x, xd, nbatch) if xd is not None else broadcast_at(x, nbatch)
    upd = move_axis(upd, ud, nbatch + n_i) if ud is not None else broadcast_at(upd,
                                                                               nbatch + n_i)
    return lax.scatter(x, idx, upd, tuple(a + 1 for a in axes), nbatch, mode), nbatch


batch_rules[ix.dynamic_slice_p] = _dynamic_slice_rule
batch_rules[ix.dynamic_update_slice_p] = _dynamic_update_slice_rule
batch_rules[ix.gather_p] = _gather_rule
batch_rules[ix.scatter_p] = _scatter_rule


# dot_general and sort ------------------------------------------------------------------------
def _free_dims(ndim, *groups):
    used = {d for g in groups for d in g}
    return [d for d in range(ndim) if d not in used]


def _dot_general_rule(args, dims, dimension_numbers, preferred_element_type=None):
    """No transposes: the batch becomes a paired batch dimension (both operands batched) or
    stays a free dimension of the one batched operand."""
    (lhs, rhs), (ld, rd) = args, dims
    lnd, rnd = example_ndim(lhs, ld), example_ndim(rhs, rd)
    (lc, rc), (lb, rb) = [(canonical_axes(l, lnd), canonical_axes(r, rnd))
                          for l, r in dimension_numbers]
    if ld is not None and rd is not None:
        dn = ((shift_axes(lc, ld), shift_axes(rc, rd)),
              ((ld, *shift_axes(lb, ld)), (rd, *shift_axes(rb, rd))))
        if _is_outer_product(lhs, dn, preferred_element_type):
            return _outer_product(lhs, rhs, dn, preferred_element_type), 0
        out_dim = 0
    elif ld is not None:
        lc, lb = shift_axes(lc, ld), shift_axes(lb, ld)
        dn = ((lc, rc), (lb, rb))
        out_dim = len(lb) + _free_dims(lhs.ndim, lc, lb).index(ld)
    else:
        rc, rb = shift_axes(rc, rd), shift_axes(rb, rd)
        dn = ((lc, rc), (lb, rb))
        n_lhs_free = lhs.ndim - len(lc) - len(lb)
        out_dim = len(lb) + n_lhs_free + _free_dims(rhs.ndim, rc, rb).index(rd)
    out = linalg.dot_general_p.bind(lhs, rhs, dimension_numbers=dn,
                                    preferred_element_type=preferred_element_type)
    return out, out_dim


def _is_outer_product(lhs, dimension_numbers, preferred_element_type) -> bool:
    """A floating-point dot_general whose contraction has a single element."""
    (lc, _), _ = dimension_numbers
    dtype = preferred_element_type or lhs.dtype
    return dtypes.is_float(lhs.dtype) and dtypes.is_float(dtype) and \
        all(lhs.shape[d] == 1 for d in lc)


def _outer_product(lhs, rhs, dimension_numbers, preferred_element_type):
    """A batched outer product (per-example weight gradients are these) as a product of the
    operands broadcast to the output: XLA's dot strength reduction. numpy runs it several
    times faster than a batched matmul with one-element contractions, and it tiles as an
    elementwise op."""
    (lc, rc), (lb, rb) = dimension_numbers
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    lhs = lax.reshape(lax.transpose(lhs, (*lb, *lf, *lc)), [lhs.shape[d] for d in (*lb, *lf)])
    rhs = lax.reshape(lax.transpose(rhs, (*rb, *rf, *rc)), [rhs.shape[d] for d in (*rb, *rf)])
    nb, nl = len(lb), len(lf)
    shape = (*lhs.shape, *rhs.shape[nb:])
    lhs = lax.broadcast_in_dim(lhs, shape, tuple(range(nb + nl)))
    rhs = lax.broadcast_in_dim(rhs, shape, (*range(nb), *range(nb + nl, len(shape))))
    dtype = preferred_element_type or lhs.dtype
    return lax.mul(lax.convert_element_type(lhs, dtype), lax.convert_element_type(rhs, dtype))


def _sort_rule(args, dims, dimension, num_keys=1):
    (dimension,) = canonical_axes((dimension,), example_ndim(args[0], dims[0]))
    if len(set(dims)) == 1:  # every operand batched at one dimension: leave it there
        bd = dims[0]
        outs = sorting.sort_p.bind(*args, dimension=dimension + (dimension >= bd),
                                   num_keys=num_keys)
        return outs, [bd] * len(outs)
    args = [to_front(a, d) for a, d in zip(args, dims)]
    outs = sorting.sort_p.bind(*args, dimension=dimension + 1, num_keys=num_keys)
    return outs, [0] * len(outs)


batch_rules[linalg.dot_general_p] = _dot_general_rule
batch_rules[sorting.sort_p] = _sort_rule


# the rows of the call primitives (checkpoint, custom_jvp, custom_vjp) and of the collectives
# (psum ... axis_index) live in their own modules
from ptojax.batching import calls as vmap_calls
from ptojax.batching import collectives as vmap_collectives  # noqa: E402,F401
