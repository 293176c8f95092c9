"""``gather`` and ``scatter``: point indexing with optional paired batch dimensions, with every
fact.

    operand : B + O                (B = the first ``nbatch`` dims)
    indices : B + I + (len(axes),) (integer; indices[..., j] indexes O's axis ``axes[j]``)
    result  : B + I + (O without ``axes``)

``result[b, i, rest] = operand[b, O-index with axes[j] = indices[b, i, j], rest]``. A gather
index out of bounds is clamped (mode "clip") or yields ``fill_value`` (mode "fill"); mode
"promise_in_bounds" (JAX's default for ``x[idx]``) clamps too, but its transpose drops the
cotangents of out-of-bounds reads, as XLA's scatter does (JAX's gradients). Scatter
drops out-of-bounds updates, as XLA does. Negative indices are out of bounds here:
``ptojax.numpy`` normalizes them first. Scatter modes: add, set, mul, min, max.

This covers numpy advanced indexing, take/take_along_axis, embedding lookups and — with
``nbatch`` — vmap of all of them. Scatter-set with duplicate targets sends the cotangent to
the update that won (the last); scatter-mul is exact with duplicates and zeros; scatter-max/min
share the tangent among ties. Under ``pto.shard`` a gather from a table split along an indexed
axis looks up locally and sums (vocab-parallel embedding); a scatter into it shifts the indices.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.eval.array import Array
from ptojax.ir.core import Literal
from ptojax.ir.types import TensorType
from ptojax.ir.symbolic import is_symbolic
from ptojax.ops.dimension_size import dimension_size
from ptojax.ops import sharding_rules as sr
from ptojax.ops.arithmetic import add_tangents, clamp, div, mul, ones_like, sub
from ptojax.ops.broadcast import (broadcast_at, broadcast_in_dim, broadcast_in_dim_p,
                                  instantiate, to_front, zeros, zeros_like)
from ptojax.ops.checks import check_axes, fmt_types, require_same_dtype
from ptojax.ops.convert import convert_element_type
from ptojax.ops.costs import no_flops
from ptojax.ops.logic import bitwise_and, bitwise_or, eq, ge, lt, select
from ptojax.ops.shape import canonical_axes, example_ndim, move_axis, reshape, squeeze
from ptojax.ops.slicing import concatenate, iota, slice_in_dim
from ptojax.ops.tangents import Zero, is_undefined, is_zero
from ptojax.trace import Primitive, Unsupported

DATA_DEPENDENT = Unsupported("gathers and scatters are data-dependent; kept as tensor ops")
NO_JAX_FORM = Unsupported("ptojax's point-indexing form has no single JAX counterpart; "
                          "checked through its numpy impl")
SCATTER_MODES = ("add", "set", "mul", "min", "max")
GATHER_MODES = ("clip", "fill", "promise_in_bounds")


def _gather_shape(name, operand, indices, axes, nbatch):
    if not dtypes.is_integer(indices.dtype):
        raise DtypeError(f"{name}: indices must be integers, got {indices}")
    if indices.ndim < nbatch + 1 or indices.shape[-1] != len(axes):
        raise ShapeError(f"{name}: indices {indices} must end in a dimension of size "
                         f"{len(axes)} (one entry per indexed axis {tuple(axes)})")
    if operand.shape[:nbatch] != indices.shape[:nbatch]:
        raise ShapeError(f"{name}: the {nbatch} batch dimensions of {operand} and {indices} "
                         f"differ")
    o_shape = operand.shape[nbatch:]
    axes = check_axes(name, axes, len(o_shape))
    rest = tuple(d for i, d in enumerate(o_shape) if i not in axes)
    return indices.shape[:-1] + rest


def _index_tuple(shape, indices, axes, nbatch):
    """Operand transposed to B + axes + rest, and the advanced index selecting B + I."""
    o_ndim = len(shape) - nbatch
    rest = [nbatch + d for d in range(o_ndim) if d not in axes]
    perm = list(range(nbatch)) + [nbatch + a for a in axes] + rest
    lead = indices.shape[:-1]
    index = []
    for b in range(nbatch):
        ramp_shape = [1] * len(lead)
        ramp_shape[b] = shape[b]
        index.append(np.arange(shape[b]).reshape(ramp_shape))
    index += [indices[..., j] for j in range(len(axes))]
    return perm, tuple(index)


def _in_bounds(shape, indices, axes, nbatch):
    o_shape = shape[nbatch:]
    ok = np.ones(indices.shape[:-1], dtype=bool)
    for j, a in enumerate(axes):
        ok &= (indices[..., j] >= 0) & (indices[..., j] < o_shape[a])
    return ok


# gather ----------------------------------------------------------------------------------------
def _gather_abstract(operand, indices, axes, nbatch=0, mode="clip", fill_value=None):
    if mode not in GATHER_MODES:
        raise ValueError(f"gather: mode must be one of {GATHER_MODES}, got {mode!r}")
    shape = _gather_shape("gather", operand, indices, axes, nbatch)
    empty = [a for a in axes if operand.shape[nbatch + a] == 0]
    if empty and np.prod(shape, dtype=np.int64) > 0:  # nothing to read a value from
        raise ShapeError(f"gather: {indices} index axis {empty[0]} of {operand}, which has "
                         f"size 0")
    return TensorType(shape, operand.dtype, operand.weak_type)


def _gather(operand, indices, axes, nbatch=0, mode="clip", fill_value=None):
    o_shape = operand.shape[nbatch:]
    if any(o_shape[a] == 0 for a in axes):  # an empty result (the abstract eval checked)
        return np.zeros(_gather_shape("gather", operand, indices, axes, nbatch),
                        operand.dtype)
    clipped = np.stack([np.clip(indices[..., j], 0, max(o_shape[a] - 1, 0))
                        for j, a in enumerate(axes)], axis=-1) if axes else indices
    perm, index = _index_tuple(operand.shape, clipped, axes, nbatch)
    out = np.transpose(operand, perm)[index]
    if mode == "fill":
        ok = _in_bounds(operand.shape, indices, axes, nbatch)
        if not ok.all():
            fill = default_fill(operand.dtype) if fill_value is None else fill_value
            out = np.where(ok.reshape(ok.shape + (1,) * (out.ndim - ok.ndim)), out,
                           np.asarray(fill, operand.dtype))
    return out


def default_fill(dtype):
    """JAX's fill for out-of-bounds reads: NaN, the lowest signed or highest unsigned
    integer, True."""
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtype == dtypes.bool_:
        return True
    return np.iinfo(dtype).max if dtypes.is_unsigned(dtype) else np.iinfo(dtype).min


gather_p = Primitive("gather", _gather_abstract, _gather, linear=True)


def gather(operand, indices, axes, nbatch=0, mode="clip", fill_value=None):
    return gather_p.bind(operand, indices, axes=tuple(axes), nbatch=int(nbatch), mode=mode,
                         fill_value=fill_value)


def _gather_jvp(primals, tangents, axes, nbatch=0, mode="clip", fill_value=None):
    """Gather the tangent at the same positions; out-of-bounds reads in mode "fill" have a
    zero tangent whatever the primal's fill value."""
    (x, idx), (t, _) = primals, tangents
    params = dict(axes=axes, nbatch=nbatch, mode=mode)
    out = gather_p.bind(x, idx, fill_value=fill_value, **params)
    if is_zero(t):
        return out, Zero(out.aval)
    return out, gather_p.bind(t, idx, fill_value=0 if mode == "fill" else None, **params)


def _gather_transpose(ct, x, indices, axes, nbatch=0, mode="clip", fill_value=None):
    if mode == "clip":  # the read positions were clamped: send the cotangent there
        o_shape = x.aval.shape[nbatch:]
        if any(is_symbolic(o_shape[a]) for a in axes):   # sizes known when it runs
            bounds = concatenate([reshape(dimension_size(o_shape[a] - 1, indices.dtype), (1,))
                                  for a in axes], 0)
        else:
            bounds = Array(np.asarray([o_shape[a] - 1 for a in axes], indices.dtype))
        hi = broadcast_in_dim(bounds, indices.shape, (indices.ndim - 1,))
        indices = clamp(0, indices, hi)
    out = scatter_p.bind(zeros(x.aval), indices, ct, axes=axes, nbatch=nbatch, mode="add")
    return [out, None]


def _gather_batch(args, dims, axes, nbatch=0, mode="clip", fill_value=None):
    (x, idx), (xd, id_) = args, dims
    axes = canonical_axes(axes, example_ndim(x, xd) - nbatch)
    kw = dict(mode=mode, fill_value=fill_value)
    if xd is not None and id_ is not None:  # a new paired batch dimension
        x, idx = move_axis(x, xd, 0), move_axis(idx, id_, 0)
        return gather(x, idx, axes, nbatch + 1, **kw), 0
    if xd is not None:  # the batch becomes the first non-indexed operand dimension
        x = move_axis(x, xd, nbatch)
        n_i = idx.ndim - 1 - nbatch
        return gather(x, idx, tuple(a + 1 for a in axes), nbatch, **kw), nbatch + n_i
    idx = move_axis(idx, id_, nbatch)  # the batch becomes the first index dimension
    return gather(x, idx, axes, nbatch, **kw), nbatch


def _gather_like_dims(eqn, f: sr.Factors, indexed_kind: str):
    """Shared dims of gather and scatter: (operand dims, indices dims, updates/result dims)."""
    p = eqn.params
    operand, indices = sr.shape_of(eqn.inputs[0]), sr.shape_of(eqn.inputs[1])
    nbatch, axes = p["nbatch"], p["axes"]
    batch = [f.new(n) for n in operand[:nbatch]]
    o_dims = [f.new(n, indexed_kind) if indexed_kind and i in axes else
              () if i in axes else f.new(n) for i, n in enumerate(operand[nbatch:])]
    i_dims = [f.new(n) for n in indices[nbatch:-1]]
    rest = [x for i, x in enumerate(o_dims) if i not in axes]
    return batch + o_dims, batch + i_dims + [()], batch + i_dims + rest, i_dims


def _gather_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    splittable = eqn.inputs[0].type.dtype != dtypes.bool_
    operand, indices, result, _ = _gather_like_dims(eqn, f, "gather" if splittable else "")
    return f.rule([operand, indices], [result])


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
    return [slice_in_dim(indices, j, j + 1, axis=indices.ndim - 1) for j in range(k)]


def _device_offset(ctx, axes, block, dtype):
    """This device's first index along a dimension split over ``axes`` in blocks of
    ``block``."""
    return convert_element_type(mul(ctx.device_index(axes), block), dtype)


def _outside(cols, sizes):
    """Where an index falls outside the global operand (a bool column per lookup)."""
    out = None
    for c, n in zip(cols, sizes):
        bad = bitwise_or(lt(c, 0), ge(c, n))
        out = bad if out is None else bitwise_or(out, bad)
    return out


def _rows(mask, value):
    """A per-lookup bool column (indices' shape, last dim 1) broadcast over the result."""
    lead = mask.ndim - 1
    return broadcast_in_dim(squeeze(mask, (lead,)), value.shape, tuple(range(lead)))


def _gather_local(ctx, eqn, operands, targets):
    """A table split along an indexed axis: each device shifts the indices into its block,
    looks them up, zeroes the rows it does not own; the result is a partial sum."""
    plan = ctx.plan(eqn, operands, targets)
    split = _split_indexed_axes(eqn, plan, "gather")
    if not split:
        return ctx.emit_planned(eqn, plan)
    operand, indices = plan.operands
    p = eqn.params
    o_shape = eqn.inputs[0].type.shape[p["nbatch"]:]
    cols = _index_columns(indices.value)
    if p["mode"] != "fill":  # clip to the global bounds before looking in the blocks
        cols = [clamp(0, c, o_shape[a] - 1) for c, a in zip(cols, p["axes"])]
    outside = _outside(cols, [o_shape[a] for a in p["axes"]]) if p["mode"] == "fill" else None
    owned = None
    for j, axis, axes in split:
        block = o_shape[axis] // ctx.mesh.axis_size(axes)
        cols[j] = sub(cols[j], _device_offset(ctx, axes, block, cols[j].dtype))
        mine = bitwise_and(ge(cols[j], 0), lt(cols[j], block))
        owned = mine if owned is None else bitwise_and(owned, mine)
    local = gather_p.bind(operand.value, concatenate(cols, indices.value.ndim - 1),
                          **p.as_dict())
    split_axes = tuple(a for a in ctx.mesh.axis_names
                       if any(a in axes for _, _, axes in split))
    value = select(_rows(owned, local), local, 0)
    if outside is not None:  # one member supplies the fill value, the others add zeros
        first = eq(ctx.device_index(split_axes), 0)
        fill = bitwise_and(outside, broadcast_in_dim(first, outside.shape, ()))
        value = select(_rows(fill, local), local, value)
    partial = tuple(a for a in ctx.mesh.axis_names if a in split_axes or a in operand.partial)
    return [sr.Local(value, sr.project(plan.rule.results[0], plan.axes), partial)]


gather_p.define(
    jvp=_gather_jvp, transpose=_gather_transpose, batch=_gather_batch,
    shard=sr.ShardRule(_gather_factors, linear="unary", local=_gather_local),
    tile=DATA_DEPENDENT, cost=no_flops, reference=NO_JAX_FORM)


# scatter ---------------------------------------------------------------------------------------
def _scatter_abstract(operand, indices, updates, axes, nbatch=0, mode="add"):
    if mode not in SCATTER_MODES:
        raise ValueError(f"scatter: mode must be one of {SCATTER_MODES}, got {mode!r}")
    require_same_dtype("scatter", (operand, updates))
    expected = _gather_shape("scatter", operand, indices, axes, nbatch)
    if updates.shape != expected:
        raise ShapeError(f"scatter: updates must have shape {expected} for operand and "
                         f"indices ({fmt_types((operand, indices, updates))})")
    return operand


_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter(operand, indices, updates, axes, nbatch=0, mode="add"):
    out = np.array(operand, copy=True)
    perm, index = _index_tuple(operand.shape, indices, axes, nbatch)
    ok = _in_bounds(operand.shape, indices, axes, nbatch)
    lead = indices.shape[:-1]
    full = [np.broadcast_to(ix, lead)[ok] for ix in index]
    upd = updates[ok]
    view = np.transpose(out, perm)
    if mode == "set":
        view[tuple(full)] = upd
    else:
        _UFUNC[mode].at(view, tuple(full), upd)
    return out


scatter_p = Primitive("scatter", _scatter_abstract, _scatter, linear=True)


def scatter(operand, indices, updates, axes, nbatch=0, mode="add"):
    return scatter_p.bind(operand, indices, updates, axes=tuple(axes), nbatch=int(nbatch),
                          mode=mode)


def _gather_params(params):
    return dict(axes=params["axes"], nbatch=params["nbatch"], mode="clip", fill_value=None)


def _scatter_jvp(primals, tangents, axes, nbatch=0, mode="add"):
    (x, idx, upd), (tx, _, tu) = primals, tangents
    params = dict(axes=axes, nbatch=nbatch)
    out = scatter_p.bind(x, idx, upd, mode=mode, **params)
    if is_zero(tx) and is_zero(tu):
        return out, Zero(out.aval)
    if mode == "add":
        return out, scatter_p.bind(instantiate(tx), idx, instantiate(tu), mode="add",
                                   **params)
    if mode == "set":
        return out, _scatter_set_tangent(x, idx, upd, tx, tu, params)
    if mode == "mul":
        return out, _scatter_mul_tangent(x, idx, upd, tx, tu, params)
    return out, _scatter_extremum_tangent(x, idx, upd, out, tx, tu, params)


def _scatter_set_tangent(x, idx, upd, tx, tu, params):
    """Where several updates write one element the last wins (as the primal); the others
    get a zero tangent, so the transpose sends them no cotangent."""
    tu = instantiate(tu)
    ids = reshape(iota(dtypes.int32, upd.size), upd.shape)
    written = scatter_p.bind(broadcast_in_dim(np.int32(-1), x.shape, ()), idx, ids,
                             mode="set", **params)
    won = eq(gather_p.bind(written, idx, **_gather_params(params)), ids)
    return scatter_p.bind(instantiate(tx), idx, select(won, tu, zeros_like(tu)),
                          mode="set", **params)


def _scatter_mul_tangent(x, idx, upd, tx, tu, params):
    """out = x * prod(updates at each target); exact where updates are zero."""
    tout = Zero(x.aval)
    if not is_zero(tx):
        tout = scatter_p.bind(tx, idx, upd, mode="mul", **params)
    if not is_zero(tu):
        gather_kw = _gather_params(params)
        is_z = eq(upd, 0)
        zero_upd = zeros_like(upd)
        nonzero_upd = select(is_z, ones_like(upd), upd)
        prod_nz = scatter_p.bind(ones_like(x), idx, nonzero_upd, mode="mul", **params)
        zeros_at = scatter_p.bind(zeros_like(x), idx, convert_element_type(is_z, x.dtype),
                                  mode="add", **params)
        p_nz = gather_p.bind(prod_nz, idx, **gather_kw)
        z_at = gather_p.bind(zeros_at, idx, **gather_kw)
        others = select(is_z, select(eq(z_at, 1), p_nz, zero_upd),
                        select(eq(z_at, 0), div(p_nz, nonzero_upd), zero_upd))
        factor = mul(others, gather_p.bind(x, idx, **gather_kw))
        tout = add_tangents(tout, scatter_p.bind(zeros_like(x), idx, mul(tu, factor),
                                                 mode="add", **params))
    return tout


def _scatter_extremum_tangent(x, idx, upd, out, tx, tu, params):
    """Tangent of the winning value; ties share it equally (as reduce_max and JAX)."""
    from_x = convert_element_type(eq(x, out), x.dtype)
    won = convert_element_type(eq(gather_p.bind(out, idx, **_gather_params(params)), upd),
                               x.dtype)
    count = scatter_p.bind(from_x, idx, won, mode="add", **params)
    total = mul(instantiate(tx), from_x)
    total = scatter_p.bind(total, idx, mul(instantiate(tu), won), mode="add", **params)
    return div(total, count)


def _scatter_transpose(ct, x, indices, updates, axes, nbatch=0, mode="add"):
    """add/set are linear in (operand, updates); mul is linear in the operand alone (the JVP
    only emits it that way)."""
    params = dict(axes=axes, nbatch=nbatch)
    if mode not in ("add", "set", "mul") or (mode == "mul" and is_undefined(updates)):
        raise UnsupportedError(f"transpose of scatter with mode {mode!r} in its updates: "
                               f"not linear")
    ct_x = ct_u = None
    if is_undefined(x):
        if mode == "add":
            ct_x = ct
        elif mode == "set":
            ct_x = scatter_p.bind(ct, indices, zeros(updates.aval), mode="set", **params)
        else:
            ct_x = scatter_p.bind(ct, indices, updates, mode="mul", **params)
    if is_undefined(updates):
        ct_u = gather_p.bind(ct, indices, mode="fill", fill_value=0, **params)
    return [ct_x, None, ct_u]


def _scatter_batch(args, dims, axes, nbatch=0, mode="add"):
    (x, idx, upd), (xd, id_, ud) = args, dims
    axes = canonical_axes(axes, example_ndim(x, xd) - nbatch)
    if id_ is not None:  # a new paired batch dimension
        x, idx, upd = to_front(x, xd), move_axis(idx, id_, 0), to_front(upd, ud)
        return scatter(x, idx, upd, axes, nbatch + 1, mode), 0
    # unbatched indices: the batch is a non-indexed dimension of operand and updates
    n_i = idx.ndim - 1 - nbatch
    x = move_axis(x, xd, nbatch) if xd is not None else broadcast_at(x, nbatch)
    upd = move_axis(upd, ud, nbatch + n_i) if ud is not None else broadcast_at(upd,
                                                                               nbatch + n_i)
    return scatter(x, idx, upd, tuple(a + 1 for a in axes), nbatch, mode), nbatch


def _scatter_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    operand, indices, updates, i_dims = _gather_like_dims(eqn, f, "scatter")
    if eqn.params["mode"] == "add":
        for x in i_dims:  # updates split along their index dims add up: a partial sum
            if x:
                f.kinds[x[0]] = "sum"
    else:
        updates = [() if x in i_dims else x for x in updates]
        indices = [() if x in i_dims else x for x in indices]
    return f.rule([operand, indices, updates], [operand])


def _is_zeros(ctx, atom) -> bool:
    if type(atom) is Literal:
        return atom.value == 0
    producer = ctx.producers.get(atom)
    return (producer is not None and producer.prim is broadcast_in_dim_p
            and type(producer.inputs[0]) is Literal and producer.inputs[0].value == 0)


def _scatter_local(ctx, eqn, operands, targets):
    """A table split along an indexed axis: indices shifted, the updates other devices own
    fall out of bounds and are dropped; updates split along their index dims give a partial
    sum."""
    plan = ctx.plan(eqn, operands, targets)
    split = _split_indexed_axes(eqn, plan, "scatter")
    summed = sorted({a for f, kind in enumerate(plan.rule.kinds) if kind == "sum"
                     for a in plan.axes[f]}, key=ctx.mesh.axis_names.index)
    if not split and not summed:
        return ctx.emit_planned(eqn, plan)
    operand, indices, updates = plan.operands
    value = operand.value
    if summed and not _is_zeros(ctx, eqn.inputs[0]):  # only one member keeps the operand
        first = eq(ctx.device_index(tuple(summed)), 0)
        value = select(broadcast_in_dim(first, value.shape, ()), value, 0)
    idx = indices.value
    if split:
        o_shape = eqn.inputs[0].type.shape[eqn.params["nbatch"]:]
        cols = _index_columns(idx)
        for j, axis, axes in split:
            block = o_shape[axis] // ctx.mesh.axis_size(axes)
            cols[j] = sub(cols[j], _device_offset(ctx, axes, block, cols[j].dtype))
        idx = concatenate(cols, idx.ndim - 1)
    out = scatter_p.bind(value, idx, updates.value, **eqn.params.as_dict())
    return [sr.Local(out, sr.project(plan.rule.results[0], plan.axes), tuple(summed))]


scatter_p.define(
    jvp=_scatter_jvp, transpose=_scatter_transpose, batch=_scatter_batch,
    shard=sr.ShardRule(_scatter_factors, local=_scatter_local),
    tile=DATA_DEPENDENT, cost=lambda eqn: eqn.inputs[2].type.size, reference=NO_JAX_FORM)
