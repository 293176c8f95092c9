"""Special per-device forms of the shard rule table (``shard.py``).

Each function is ``local(ctx, eqn, operands, targets) -> [Local]``; ``ctx`` is the partition
engine's ``ShardContext`` (``plan`` reshards the operands as the factors say,
``emit_planned`` emits the plain local equation).

- iota split along its dimension: the local ramp plus this device's offset.
- gather with a split indexed axis (vocab-parallel embedding): each device shifts the indices
  into its block, looks them up, zeroes the rows it does not own; the result is a partial sum.
- scatter with a split indexed axis: indices shifted, the updates other devices own fall out of
  bounds and are dropped; updates split along their index dims give a partial sum.
- rev of a split dimension: local rev, then ``ppermute`` reverses the order of the blocks.
- concatenate of slices that rotate a split dimension (``pnp.roll``): two ``ppermute``s of
  the blocks' edges instead of gathering the whole dimension.
- checkpoint: its body partitioned as a sub-program (still a checkpoint per device);
  custom_jvp_call / custom_vjp_call: the body is inlined (per device, differentiation goes
  through the body's own rules).
"""
from __future__ import annotations

from ptojax import lax
from ptojax.ir.core import Literal, Var, consts_as_args
from ptojax.ops import indexing as ix, shape as sh
from ptojax.autodiff import calls
from ptojax.shard.collectives import ppermute_p
from ptojax.shard.rules import shard_rules
from ptojax.shard.propagate import project
from ptojax.shard.reshard import Local, device_index


def _offset(ctx, axes, block: int, dtype):
    """This device's first index along a dimension split over ``axes`` in blocks of
    ``block``."""
    return lax.convert_element_type(lax.mul(device_index(axes), block), dtype)


# iota ------------------------------------------------------------------------------------------
def _iota_local(ctx, eqn, operands, targets):
    plan = ctx.plan(eqn, operands, targets)
    (out,) = ctx.emit_planned(eqn, plan)
    d = eqn.params["dimension"]
    axes = out.dims[d]
    if not axes:
        return [out]
    block = out.value.shape[d]
    value = lax.add(out.value, _offset(ctx, axes, block, out.value.dtype))
    return [Local(value, out.dims)]


# gather / scatter ------------------------------------------------------------------------------
def _split_indexed_axes(eqn, plan, kind):
    """(j, axis, mesh axes) for each indexed operand axis whose factor of ``kind`` is split."""
    nbatch = eqn.params["nbatch"]
    fdims = plan.rule.operands[0]
    out = []
    for j, axis in enumerate(eqn.params["axes"]):
        fd = fdims[nbatch + axis]
        if fd and plan.rule.kinds[fd[0]] == kind and plan.axes[fd[0]]:
            out.append((j, axis, plan.axes[fd[0]]))
    return out


def _index_columns(indices):
    k = indices.shape[-1]
    return [lax.slice_in_dim(indices, j, j + 1, axis=indices.ndim - 1) for j in range(k)]


def _gather_local(ctx, eqn, operands, targets):
    plan = ctx.plan(eqn, operands, targets)
    split = _split_indexed_axes(eqn, plan, "gather")
    if not split:
        return ctx.emit_planned(eqn, plan)
    operand, indices = plan.operands
    p = eqn.params
    o_shape = eqn.inputs[0].type.shape[p["nbatch"]:]
    cols = _index_columns(indices.value)
    if p["mode"] == "clip":  # clip to the global bounds before looking in the blocks
        cols = [lax.clamp(0, c, o_shape[a] - 1) for c, a in zip(cols, p["axes"])]
    outside = _outside(cols, [o_shape[a] for a in p["axes"]]) if p["mode"] == "fill" else None
    owned = None
    for j, axis, axes in split:
        block = o_shape[axis] // ctx.mesh.axis_size(axes)
        cols[j] = lax.sub(cols[j], _offset(ctx, axes, block, cols[j].dtype))
        mine = lax.bitwise_and(lax.ge(cols[j], 0), lax.lt(cols[j], block))
        owned = mine if owned is None else lax.bitwise_and(owned, mine)
    local = ix.gather_p.bind(operand.value, lax.concatenate(cols, indices.value.ndim - 1),
                             **p.as_dict())
    split_axes = tuple(a for a in ctx.mesh.axis_names
                       if any(a in axes for _, _, axes in split))
    value = lax.select(_rows(owned, local), local, 0)
    if outside is not None:  # one member supplies the fill value, the others add zeros
        first = lax.eq(device_index(split_axes), 0)
        fill = lax.bitwise_and(outside, lax.broadcast_in_dim(first, outside.shape, ()))
        value = lax.select(_rows(fill, local), local, value)
    partial = tuple(a for a in ctx.mesh.axis_names if a in split_axes or a in operand.partial)
    return [Local(value, project(plan.rule.results[0], plan.axes), partial)]


def _outside(cols, sizes):
    """Where an index falls outside the global operand (a bool column per lookup)."""
    out = None
    for c, n in zip(cols, sizes):
        bad = lax.bitwise_or(lax.lt(c, 0), lax.ge(c, n))
        out = bad if out is None else lax.bitwise_or(out, bad)
    return out


def _rows(mask, value):
    """A per-lookup bool column (indices' shape, last dim 1) broadcast over the result."""
    lead = mask.ndim - 1
    return lax.broadcast_in_dim(lax.squeeze(mask, (lead,)), value.shape, tuple(range(lead)))


def _is_zeros(ctx, atom) -> bool:
    if type(atom) is Literal:
        return atom.value == 0
    producer = ctx.producers.get(atom)
    return (producer is not None and producer.prim is sh.broadcast_in_dim_p
            and type(producer.inputs[0]) is Literal and producer.inputs[0].value == 0)


def _scatter_local(ctx, eqn, operands, targets):
    plan = ctx.plan(eqn, operands, targets)
    split = _split_indexed_axes(eqn, plan, "scatter")
    summed = sorted({a for f, kind in enumerate(plan.rule.kinds) if kind == "sum"
                     for a in plan.axes[f]}, key=ctx.mesh.axis_names.index)
    if not split and not summed:
        return ctx.emit_planned(eqn, plan)
    operand, indices, updates = plan.operands
    value = operand.value
    if summed and not _is_zeros(ctx, eqn.inputs[0]):  # only one member keeps the operand
        first = lax.eq(device_index(tuple(summed)), 0)
        value = lax.select(lax.broadcast_in_dim(first, value.shape, ()), value, 0)
    idx = indices.value
    if split:
        nbatch = eqn.params["nbatch"]
        o_shape = eqn.inputs[0].type.shape[nbatch:]
        cols = _index_columns(idx)
        for j, axis, axes in split:
            block = o_shape[axis] // ctx.mesh.axis_size(axes)
            cols[j] = lax.sub(cols[j], _offset(ctx, axes, block, cols[j].dtype))
        idx = lax.concatenate(cols, idx.ndim - 1)
    out = ix.scatter_p.bind(value, idx, updates.value, **eqn.params.as_dict())
    return [Local(out, project(plan.rule.results[0], plan.axes), tuple(summed))]


# rev and rotations: ppermute ------------------------------------------------------------------
def _reverse_blocks(ctx, value, axes):
    n = ctx.mesh.axis_size(axes)
    return ppermute_p.bind(value, axes=axes, perm=tuple((i, n - 1 - i) for i in range(n)))


def _rev_local(ctx, eqn, operands, targets):
    plan = ctx.plan(eqn, operands, targets)
    (out,) = ctx.emit_planned(eqn, plan)
    value = out.value
    for d in eqn.params["dimensions"]:
        if out.dims[d]:
            value = _reverse_blocks(ctx, value, out.dims[d])
    return [Local(value, out.dims, out.partial)]


def _rotation(ctx, eqn):
    """(source Var, shift) if ``eqn`` concatenates slices of one value that rotate it along
    the concatenated dimension (``out[i] = x[(i + shift) % n]``), else None."""
    d = eqn.params["dimension"]
    pieces = []
    for a in eqn.inputs:
        producer = ctx.producers.get(a) if type(a) is Var else None
        if producer is None or producer.prim is not sh.slice_p:
            return None
        p = producer.params
        x = producer.inputs[0]
        full = all((lo, hi) == (0, n) for k, (lo, hi, n) in enumerate(
            zip(p["start_indices"], p["limit_indices"], x.type.shape)) if k != d)
        if not full or (p["strides"] and any(s != 1 for s in p["strides"])):
            return None
        pieces.append((x, p["start_indices"][d], p["limit_indices"][d]))
    sources = {x for x, _, _ in pieces}
    if len(sources) != 1:
        return None
    (x,) = sources
    n = x.type.shape[d]
    start = position = pieces[0][1]
    covered = 0
    for _, lo, hi in pieces:
        if lo != position % n or hi <= lo:
            return None
        covered += hi - lo
        position = hi
    return (x, start) if covered == n and start else None


def _rotate_blocks(ctx, x: Local, d: int, shift: int):
    """``out[i] = x[(i + shift) % n]`` along dimension ``d``, split over ``x.dims[d]``."""
    axes = x.dims[d]
    n = ctx.mesh.axis_size(axes)
    block = x.value.shape[d]
    q, r = divmod(shift, block)

    def moved(value, hops):
        hops %= n
        if not hops:
            return value
        perm = tuple((i, (i - hops) % n) for i in range(n))
        return ppermute_p.bind(value, axes=axes, perm=perm)

    head = moved(lax.slice_in_dim(x.value, r, block, axis=d), q)
    if r == 0:
        return head
    tail = moved(lax.slice_in_dim(x.value, 0, r, axis=d), q + 1)
    return lax.concatenate([head, tail], d)


def _concatenate_local(ctx, eqn, operands, targets):
    d = eqn.params["dimension"]
    rotation = _rotation(ctx, eqn)
    if rotation is not None and targets[0][d]:
        x, shift = rotation
        source = ctx.env[x]
        if not source.partial and source.dims[d] == targets[0][d]:
            return [Local(_rotate_blocks(ctx, source, d, shift), source.dims)]
    return ctx.generic(eqn, operands, targets)


# sub-IRs ---------------------------------------------------------------------------------------
def _whole_partials(ctx, operands):
    return [ctx.reshard(x, x.dims) if x.partial else x for x in operands]


def _checkpoint_local(ctx, eqn, operands, targets):
    operands = _whole_partials(ctx, operands)
    body, out_dims = ctx.partition_body(eqn.params["body"], operands)
    body, consts = consts_as_args(body)
    outs = calls.checkpoint_p.bind(*consts, *[x.value for x in operands],
                                   **eqn.params.replace(body=body).as_dict())
    return [Local(o, d) for o, d in zip(outs, out_dims)]


def _inline_local(ctx, eqn, operands, targets):
    return ctx.inline(eqn.params["body"], operands)


def _register():
    from ptojax.shard.rules import ShardRule
    for prim, fn in ((sh.iota_p, _iota_local), (ix.gather_p, _gather_local),
                     (ix.scatter_p, _scatter_local), (sh.rev_p, _rev_local),
                     (sh.concatenate_p, _concatenate_local)):
        shard_rules[prim] = shard_rules[prim]._replace(local=fn)
    shard_rules[calls.checkpoint_p] = ShardRule(None, local=_checkpoint_local)
    for prim in (calls.custom_jvp_call_p, calls.custom_vjp_call_p):
        shard_rules[prim] = ShardRule(None, local=_inline_local)


_register()
