"""Batching as an IR → IR rewrite.

``vmap_ir(closed, in_dims, axis_size)`` returns an IR over batched inputs (input ``i`` carries
the batch at dimension ``in_dims[i]``, or is unbatched for None) plus the batch dimension of
each output. Each primitive's rule lives in ``batch_rules``:

    rule(args, dims, **params) -> (out, out_dim)     (lists for multi-result primitives)

``dims[i]`` is the batch dimension of ``args[i]`` or None. Equations whose inputs are all
unbatched are copied as they are, so unbatched sub-computations (weights) stay unbatched.
Rules move batch dimensions only when the primitive needs it: dot_general folds the batch into
its batch/free dimensions, reductions shift their axes, gather/scatter use batch dimensions.
"""
from __future__ import annotations

import threading

import numpy as np

from ptojax import dtypes, lax, source_info
from ptojax.errors import UnsupportedError
from ptojax.ir.core import ClosedIR, Literal, Var, consts_as_args
from ptojax.ops import elementwise as ew, indexing as ix, linalg, reductions as red
from ptojax.ops import random_bits, shape as sh, sorting
from ptojax.runtime.array import Array
from ptojax.trace import bind, trace_flat

batch_rules: dict = {}


class _AxisEnv(threading.local):
    def __init__(self):
        self.frames = []  # (axis_name, axis_size) of the vmaps being evaluated, innermost last


axis_env = _AxisEnv()


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
    axis_env.frames.append((axis_name, axis_size))
    try:
        for eqn in ir.eqns:
            vals, in_dims = [], []
            for a in eqn.inputs:
                v, d = env[a] if type(a) is Var else (a, None)
                vals.append(v)
                in_dims.append(d)
            source_info.set_current(eqn.source or previous)
            if all(d is None for d in in_dims):
                out = bind(eqn.prim, vals, eqn.params)
                outs = out if eqn.prim.multiple_results else [out]
                env.update((v, (o, None)) for v, o in zip(eqn.outputs, outs))
                continue
            rule = batch_rules.get(eqn.prim)
            if rule is None:
                raise UnsupportedError(f"vmap of `{eqn.prim.name}` is not supported",
                                       eqn.source)
            out, out_dim = rule(vals, in_dims, **eqn.params)
            if eqn.prim.multiple_results:
                env.update((v, (o, d)) for v, o, d in zip(eqn.outputs, out, out_dim))
            else:
                env[eqn.outputs[0]] = (out, out_dim)
    finally:
        axis_env.frames.pop()
        source_info.set_current(previous)
    results = [env[v] if type(v) is Var else (Array(v.value, v.type.weak_type), None)
               for v in ir.outvars]
    return [r[0] for r in results], [r[1] for r in results]


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
def current_axis_size() -> int:
    return axis_env.frames[-1][1]


def move_axis(x, src, dst):
    if src == dst:
        return x
    perm = [d for d in range(x.ndim) if d != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


def to_front(x, d):
    """``x`` with its batch dimension first (unbatched values are broadcast)."""
    if d is None:
        return lax.broadcast(x, (current_axis_size(),))
    return move_axis(x, d, 0)


def _elementwise_rule(prim):
    def rule(args, dims, **params):
        batched = [(a, d) for a, d in zip(args, dims) if d is not None]
        shape0, dim0 = batched[0][0].shape, batched[0][1]
        if all(a.shape == shape0 and d == dim0 for a, d in batched) and \
                all(a.ndim == 0 for a, d in zip(args, dims) if d is None):
            return prim.bind(*args, **params), dim0
        # general case: the batch goes first and every operand is full rank, except unbatched
        # scalars, which elementwise primitives broadcast themselves
        rank = max(a.ndim - (d is not None) for a, d in zip(args, dims))
        example = next(_example_shape(a, d) for a, d in zip(args, dims)
                       if len(_example_shape(a, d)) == rank)
        out_shape = (current_axis_size(), *example)
        fixed = []
        for a, d in zip(args, dims):
            if d is None:
                fixed.append(a if a.ndim == 0 else
                             lax.broadcast_in_dim(a, out_shape, tuple(range(1, rank + 1))))
            else:
                a = move_axis(a, d, 0)
                fixed.append(a if a.ndim == rank + 1 else
                             lax.broadcast_in_dim(a, out_shape, (0,)))
        return prim.bind(*fixed, **params), 0
    return rule


def _example_shape(a, d):
    return tuple(a.shape) if d is None else tuple(a.shape[:d] + a.shape[d + 1:])


for _p in ew.ELEMENTWISE.values():
    batch_rules[_p] = _elementwise_rule(_p)

_threefry2x32_elementwise = _elementwise_rule(random_bits.threefry2x32_p)


def _threefry2x32_rule(args, dims):
    outs, dim = _threefry2x32_elementwise(args, dims)
    return outs, [dim, dim]


batch_rules[random_bits.threefry2x32_p] = _threefry2x32_rule


# reductions ----------------------------------------------------------------------------------
def _shift_axes(axes, bd):
    """Axes of the per-example value, renumbered for a value with a batch at ``bd``."""
    return tuple(a + (a >= bd) for a in axes)


def _reduce_rule(prim):
    def rule(args, dims, axes):
        (x,), (bd,) = args, dims
        axes = _shift_axes(axes, bd)
        return prim.bind(x, axes=axes), bd - sum(a < bd for a in axes)
    return rule


for _p in (red.reduce_sum_p, red.reduce_prod_p, red.reduce_max_p, red.reduce_min_p,
           red.reduce_and_p, red.reduce_or_p):
    batch_rules[_p] = _reduce_rule(_p)


def _arg_rule(prim):
    def rule(args, dims, axis, index_dtype):
        (x,), (bd,) = args, dims
        axis = axis + (axis >= bd)
        return prim.bind(x, axis=axis, index_dtype=index_dtype), bd - (axis < bd)
    return rule


batch_rules[red.argmax_p] = _arg_rule(red.argmax_p)
batch_rules[red.argmin_p] = _arg_rule(red.argmin_p)


def _cumulative_rule(prim):
    def rule(args, dims, axis, reverse=False):
        (x,), (bd,) = args, dims
        return prim.bind(x, axis=axis + (axis >= bd), reverse=reverse), bd
    return rule


for _p in red.CUMULATIVE.values():
    batch_rules[_p] = _cumulative_rule(_p)


# shapes --------------------------------------------------------------------------------------
def _broadcast_in_dim_rule(args, dims, shape, broadcast_dimensions):
    (x,), (bd,) = args, dims
    x = move_axis(x, bd, 0)
    return lax.broadcast_in_dim(x, (x.shape[0], *shape),
                                (0, *(d + 1 for d in broadcast_dimensions))), 0


def _reshape_rule(args, dims, new_sizes):
    (x,), (bd,) = args, dims
    x = move_axis(x, bd, 0)
    return lax.reshape(x, (x.shape[0], *new_sizes)), 0


def _transpose_rule(args, dims, permutation):
    (x,), (bd,) = args, dims
    x = move_axis(x, bd, 0)
    return lax.transpose(x, (0, *(p + 1 for p in permutation))), 0


def _squeeze_rule(args, dims, dimensions):
    (x,), (bd,) = args, dims
    dimensions = _shift_axes(dimensions, bd)
    return lax.squeeze(x, dimensions), bd - sum(d < bd for d in dimensions)


def _expand_dims_rule(args, dims, dimensions):
    (x,), (bd,) = args, dims
    x = move_axis(x, bd, 0)
    return lax.expand_dims(x, tuple(d + 1 for d in dimensions)), 0


def _rev_rule(args, dims, dimensions):
    (x,), (bd,) = args, dims
    return lax.rev(x, _shift_axes(dimensions, bd)), bd


def _slice_rule(args, dims, start_indices, limit_indices, strides=None):
    (x,), (bd,) = args, dims
    starts, limits = list(start_indices), list(limit_indices)
    strides = list(strides or (1,) * len(starts))
    starts.insert(bd, 0)
    limits.insert(bd, x.shape[bd])
    strides.insert(bd, 1)
    return lax.slice(x, starts, limits, strides), bd


def _concatenate_rule(args, dims, dimension):
    args = [to_front(a, d) for a, d in zip(args, dims)]
    return lax.concatenate(args, dimension + 1), 0


def _pad_rule(args, dims, padding_config):
    (x, value), (bd, vd) = args, dims
    x = to_front(x, bd)
    config = ((0, 0, 0), *padding_config)
    if vd is None:
        return lax.pad(x, value, config), 0
    # a batched padding value: pad with zeros, then select the value where padding landed
    padded = lax.pad(x, Array(np.zeros((), x.dtype)), config)
    inside = lax.pad(lax.broadcast_in_dim(Array(np.array(True)), x.shape, ()),
                     Array(np.array(False)), config)
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
        s = lax.convert_element_type(s, dtypes.int32)
        s = lax.clamp(0, s, n - k)
        cols.append(lax.broadcast_in_dim(s, (size, 1), ()) if d is None else
                    lax.reshape(move_axis(s, d, 0), (size, 1)))
    return lax.concatenate(cols, 1)


def _window_indices(starts, sizes):
    """(B, *sizes, ndim) indices: every point of each batch element's window."""
    size, ndim = starts.shape
    grid_shape = (size, *sizes, ndim)
    base = lax.broadcast_in_dim(starts, grid_shape, (0, ndim + 1))
    parts = [lax.broadcasted_iota(dtypes.int32, (size, *sizes, 1), j + 1) for j in range(ndim)]
    offsets = lax.concatenate(parts, ndim + 1) if parts else base
    return lax.add(base, offsets)


def _dynamic_slice_rule(args, dims, slice_sizes):
    x, *starts = args
    xd, *sds = dims
    if all(d is None for d in sds):  # only the operand is batched: slice around the batch
        x = move_axis(x, xd, 0)
        zero = Array(np.zeros((), dtypes.int32))
        return ix.dynamic_slice_p.bind(x, zero, *starts,
                                       slice_sizes=(x.shape[0], *slice_sizes)), 0
    example = x.shape if xd is None else _example_shape(x, xd)
    idx = _window_indices(_starts_matrix(starts, sds, example, slice_sizes), slice_sizes)
    axes = tuple(range(len(example)))
    if xd is None:
        return lax.gather(x, idx, axes), 0
    return lax.gather(move_axis(x, xd, 0), idx, axes, nbatch=1), 0


def _dynamic_update_slice_rule(args, dims):
    x, upd, *starts = args
    xd, ud, *sds = dims
    if all(d is None for d in sds):
        x, upd = to_front(x, xd), to_front(upd, ud)
        zero = Array(np.zeros((), dtypes.int32))
        return ix.dynamic_update_slice_p.bind(x, upd, zero, *starts), 0
    x, upd = to_front(x, xd), to_front(upd, ud)
    example = tuple(x.shape[1:])
    sizes = tuple(upd.shape[1:])
    idx = _window_indices(_starts_matrix(starts, sds, example, sizes), sizes)
    return lax.scatter(x, idx, upd, tuple(range(len(example))), nbatch=1, mode="set"), 0


def _gather_rule(args, dims, axes, nbatch=0, mode="clip", fill_value=None):
    (x, idx), (xd, id_) = args, dims
    kw = dict(mode=mode, fill_value=fill_value)
    if xd is not None and id_ is not None:
        x, idx = move_axis(x, xd, 0), move_axis(idx, id_, 0)
        return lax.gather(x, idx, axes, nbatch + 1, **kw), 0
    if xd is not None:  # the batch becomes the first non-indexed operand dimension
        x = move_axis(x, xd, nbatch)
        axes = tuple(a + 1 for a in axes)
        n_i = idx.ndim - 1 - nbatch
        return lax.gather(x, idx, axes, nbatch, **kw), nbatch + n_i
    idx = move_axis(idx, id_, nbatch)  # the batch becomes the first index dimension
    return lax.gather(x, idx, axes, nbatch, **kw), nbatch


def _scatter_rule(args, dims, axes, nbatch=0, mode="add"):
    (x, idx, upd), (xd, id_, ud) = args, dims
    if id_ is not None:
        x, idx, upd = to_front(x, xd), move_axis(idx, id_, 0), to_front(upd, ud)
        return lax.scatter(x, idx, upd, axes, nbatch + 1, mode), 0
    # unbatched indices: the batch is a non-indexed dimension of operand and updates
    n_i = idx.ndim - 1 - nbatch
    x = move_axis(x, xd, nbatch) if xd is not None else _broadcast_at(x, nbatch)
    upd = move_axis(upd, ud, nbatch + n_i) if ud is not None else _broadcast_at(upd,
                                                                                nbatch + n_i)
    return lax.scatter(x, idx, upd, tuple(a + 1 for a in axes), nbatch, mode), nbatch


def _broadcast_at(x, dim):
    shape = list(x.shape)
    shape.insert(dim, current_axis_size())
    return lax.broadcast_in_dim(x, tuple(shape),
                                tuple(d for d in range(len(shape)) if d != dim))


batch_rules[ix.dynamic_slice_p] = _dynamic_slice_rule
batch_rules[ix.dynamic_update_slice_p] = _dynamic_update_slice_rule
batch_rules[ix.gather_p] = _gather_rule
batch_rules[ix.scatter_p] = _scatter_rule


# dot_general and sort ------------------------------------------------------------------------
def _dot_general_rule(args, dims, dimension_numbers, preferred_element_type=None):
    (lhs, rhs), (ld, rd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(group, d):
        return tuple(a + (a >= d) for a in group)

    if ld is not None and rd is not None:  # a new batch dimension, first in the output
        lhs, rhs = move_axis(lhs, ld, 0), move_axis(rhs, rd, 0)
        dn = ((shift(lc, 0), shift(rc, 0)), ((0, *shift(lb, 0)), (0, *shift(rb, 0))))
        return lax.dot_general(lhs, rhs, dn, preferred_element_type), 0
    if ld is not None:  # the batch is lhs's first free dimension
        lhs = move_axis(lhs, ld, 0)
        dn = ((shift(lc, 0), rc), (shift(lb, 0), rb))
        return lax.dot_general(lhs, rhs, dn, preferred_element_type), len(lb)
    rhs = move_axis(rhs, rd, 0)  # the batch is rhs's first free dimension
    dn = ((lc, shift(rc, 0)), (lb, shift(rb, 0)))
    n_lhs_free = lhs.ndim - len(lc) - len(lb)
    return lax.dot_general(lhs, rhs, dn, preferred_element_type), len(lb) + n_lhs_free


def _sort_rule(args, dims, dimension, num_keys=1):
    args = [to_front(a, d) for a, d in zip(args, dims)]
    outs = sorting.sort_p.bind(*args, dimension=dimension + 1, num_keys=num_keys)
    return outs, [0] * len(outs)


batch_rules[linalg.dot_general_p] = _dot_general_rule
batch_rules[sorting.sort_p] = _sort_rule


# calls ---------------------------------------------------------------------------------------
from ptojax.ops import calls  # noqa: E402


def _checkpoint_rule(args, dims, body, prevent_cse=True):
    batched, out_dims = vmap_ir(body, dims, current_axis_size(), axis_env.frames[-1][0])
    batched, consts = consts_as_args(batched)
    outs = calls.checkpoint_p.bind(*consts, *args, body=batched, prevent_cse=prevent_cse)
    return outs, out_dims


def _batched_body(body: ClosedIR, n_args: int) -> tuple:
    """``body`` batched at 0 in every input and output: (const-free ClosedIR, extra consts)."""
    size = current_axis_size()
    batched, out_dims = vmap_ir(body, [0] * n_args, size)

    def front(*args):
        from ptojax.runtime.interpreter import eval_ir
        outs = eval_ir(batched, args)
        return [to_front(o, d) for o, d in zip(outs, out_dims)]

    return consts_as_args(trace_flat(front, batched.in_types, "vmap"))


def _vmap_rule_fn(fn, batched_groups):
    """``fn(*groups)`` (each group a flat list) mapped over the groups listed in
    ``batched_groups`` (all their arrays batched at 0); other groups are passed as is."""
    from ptojax.transforms.vmap_api import vmap

    def batched(*groups):
        mapped = [g for i, g in enumerate(groups) if i in batched_groups]

        def per_example(*mapped_groups):
            it = iter(mapped_groups)
            return fn(*[list(next(it)) if i in batched_groups else g
                        for i, g in enumerate(groups)])
        return vmap(per_example)(*[tuple(g) for g in mapped])
    return batched


def _custom_jvp_rule(args, dims, body, jvp, num_consts):
    args = [to_front(a, d) for a, d in zip(args, dims)]
    body, extra = _batched_body(body, len(args))
    outs = calls.custom_jvp_call_p.bind(*extra, *args, body=body,
                                        jvp=_vmap_rule_fn(jvp, (1, 2)),
                                        num_consts=num_consts + len(extra))
    return outs, [0] * len(outs)


def _custom_vjp_rule(args, dims, body, fwd, bwd, num_consts, out_types):
    args = [to_front(a, d) for a, d in zip(args, dims)]
    body, extra = _batched_body(body, len(args))
    size = current_axis_size()
    outs = calls.custom_vjp_call_p.bind(
        *extra, *args, body=body, fwd=_vmap_rule_fn(fwd, (1,)), bwd=_vmap_rule_fn(bwd, (0, 1)),
        num_consts=num_consts + len(extra),
        out_types=tuple(batched_type(t, 0, size) for t in out_types))
    return outs, [0] * len(outs)


batch_rules[calls.checkpoint_p] = _checkpoint_rule
batch_rules[calls.custom_jvp_call_p] = _custom_jvp_rule
batch_rules[calls.custom_vjp_call_p] = _custom_vjp_rule
