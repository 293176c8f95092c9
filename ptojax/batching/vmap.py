"""Batching as an IR → IR rewrite.

``vmap_ir(closed, in_dims, axis_size, axis_name)`` returns an IR over batched inputs (input
``i`` carries the batch at dimension ``in_dims[i]``, or is unbatched for None) plus the batch
dimension of each output. Each primitive's rule is its ``batch`` fact, defined beside it:

    rule(args, dims, **params) -> (out, out_dim)     (lists for multi-result primitives)

``dims[i]`` is the batch dimension of ``args[i]`` or None. Equations whose inputs are all
unbatched are copied as they are, so unbatched sub-computations (weights) stay unbatched —
except collectives over the vmapped axis name (and calls whose bodies contain one), which
their rules (``shard/collectives.py``) turn into local reductions over the batch dimension.

Rules move a batch dimension only when the primitive needs it somewhere else: dot_general
makes it a batch or free dimension, reductions and elementwise ops shift their axes around it,
gather/scatter pair it with the indices' batch, and a batched index becomes a gather.
"""
from __future__ import annotations

from ptojax import source_info
from ptojax.eval import axis_env
from ptojax.eval.array import Array
from ptojax.ir.core import ClosedIR, Var, as_ir, sub_irs
from ptojax.trace import bind, trace_flat


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
    with source_info.replaying() as at, axis_env.bound_batch_axis(axis_name, axis_size):
        for eqn in ir.eqns:
            at(eqn.source)
            _batch_eqn(eqn, env, axis_name)
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
        rule = eqn.prim.rule("batch", "vmap", eqn.source)
        out, out_dim = rule(vals, in_dims, **eqn.params)
        outs, out_dims = (out, out_dim) if eqn.prim.multiple_results else ([out], [out_dim])
    env.update((v, (o, d)) for v, o, d in zip(eqn.outputs, outs, out_dims))


def uses_axis(eqn, axis_name) -> bool:
    """Whether ``eqn`` is a collective over ``axis_name`` or calls a body that has one (so it
    must be batched even when none of its inputs is)."""
    if axis_name is None:
        return False
    if eqn.prim.collective:
        return axis_name in eqn.params["axes"]
    if eqn.prim.binds_axes:  # ours is shadowed inside
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
