"""The transforms applied to one sub-IR (a branch or a loop body), with what control flow
needs beyond the IR → IR transforms: outputs *forced* into one form — given a tangent, made
unknown, batched — because a loop carry must have the same form on both sides of the body
and all branches of a cond must agree; and DCE that reports which inputs stay used.

Every function takes and returns const-free sub-IRs; values a rewritten sub-IR captures
(rare: constants some rules create) are returned to be passed as extra leading operands.
"""
from __future__ import annotations

from ptojax.ir.core import IR, ClosedIR, Var, consts_as_args
from ptojax.eval.interpreter import eval_ir
from ptojax.trace import trace_flat
from ptojax.ops.broadcast import instantiate
from ptojax.ops.tangents import Zero, differentiable, is_zero, tangent_aval
from ptojax.autodiff.jvp import jvp_eval
from ptojax.optimize import dce
from ptojax.autodiff.partial_eval import partial_eval
from ptojax.autodiff.transpose import backward_pass
from ptojax.batching.vmap import vmap_ir
from ptojax.eval import axis_env
from ptojax.ops.broadcast import broadcast_at, to_front
from ptojax.ops.shape import move_axis
from ptojax.control_flow.common import select_by, used_inputs


def jvp_sub_ir(closed: ClosedIR, nonzeros, instantiate_outs) -> tuple:
    """JVP of ``closed``: (sub-IR of ``(primals..., tangents of the nonzero inputs...) ->
    (outs..., tangents of the nonzero outputs...)``, its captured values, out_nonzeros).
    A differentiable output marked in ``instantiate_outs`` always gets a tangent."""
    in_types = closed.in_types
    n = len(in_types)
    tangent_types = [tangent_aval(t) for t, nz in zip(in_types, nonzeros) if nz]
    out_nonzeros = []

    def fn(*args):
        rest = iter(args[n:])
        tangents = [next(rest) if nz else Zero(t) for t, nz in zip(in_types, nonzeros)]
        outs, touts = jvp_eval(closed, list(args[:n]), tangents)
        types = closed.out_types
        out_nonzeros[:] = [not is_zero(t) or (inst and differentiable(ty))
                           for t, inst, ty in zip(touts, instantiate_outs, types)]
        return [*outs, *[instantiate(t, tangent_aval(ty))
                         for t, nz, ty in zip(touts, out_nonzeros, types) if nz]]

    traced = trace_flat(fn, [*in_types, *tangent_types], "jvp")
    body, consts = consts_as_args(traced)
    return body, consts, out_nonzeros


def partial_eval_sub_ir(closed: ClosedIR, unknowns, instantiate_outs) -> tuple:
    """``partial_eval`` of ``closed`` where the outputs marked in ``instantiate_outs`` are
    unknown even if computable from known inputs (their known value becomes a residual the
    linear side returns). Returns (known ClosedIR, linear IR, number of residuals,
    out_unknown) as ``partial_eval`` does."""
    known, linear, n_res, out_unknown = partial_eval(closed, unknowns)
    forced = [inst and not u for inst, u in zip(instantiate_outs, out_unknown)]
    if not any(forced):
        return known, linear, n_res, out_unknown
    kir = known.ir
    n_known = len(kir.outvars) - n_res
    known_positions = [i for i, u in enumerate(out_unknown) if not u]
    kept, moved = [], {}
    for pos, v in zip(known_positions, kir.outvars[:n_known]):
        if forced[pos]:
            moved[pos] = v
        else:
            kept.append(v)
    moved_res = list(dict.fromkeys(v for v in moved.values() if type(v) is Var))
    moved_in = {v: Var(v.type) for v in moved_res}
    known_ir = IR((), kir.invars, kir.eqns, [*kept, *kir.outvars[n_known:], *moved_res])
    linear_outs, it = [], iter(linear.outvars)
    for pos, u in enumerate(out_unknown):
        if u:
            linear_outs.append(next(it))
        elif forced[pos]:
            linear_outs.append(moved_in.get(moved[pos], moved[pos]))
    linear_ir = IR((), [*linear.invars[:n_res], *moved_in.values(), *linear.invars[n_res:]],
                   linear.eqns, linear_outs)
    out_unknown = [u or f for u, f in zip(out_unknown, forced)]
    return ClosedIR(known_ir), linear_ir, n_res + len(moved_res), out_unknown


def batch_sub_ir(closed: ClosedIR, in_dims, force_outs) -> tuple:
    """``closed`` batched over the current vmap axis with inputs batched at ``in_dims``: (the
    batched sub-IR, its captured values, out_batched). Every batched output has its batch
    at 0; an output marked in ``force_outs`` is batched even if it does not vary."""
    batched, out_dims = vmap_ir(closed, in_dims, axis_env.batch_axis_size(), axis_env.batch_axis_name())
    out_batched = [d is not None or bool(f) for d, f in zip(out_dims, force_outs)]

    def fn(*args):
        outs = eval_ir(batched, list(args))
        return [to_front(o, d) if b else o for o, d, b in zip(outs, out_dims, out_batched)]

    body, consts = consts_as_args(trace_flat(fn, batched.in_types, "vmap"))
    return body, consts, out_batched


def batch_at_front(x, dim, batched: bool):
    """A loop carry's initial value with its batch at 0 (broadcast if it must be batched)."""
    if dim is None:
        return broadcast_at(x, 0) if batched else x
    return move_axis(x, dim, 0)


def transpose_sub_ir(closed: ClosedIR, linear_mask, ct_present) -> tuple:
    """The transpose of ``closed`` (linear in the inputs marked in ``linear_mask``): (sub-IR
    of ``(other inputs..., cotangents of the outputs marked in ct_present...) -> cotangents
    of the linear inputs``, every one materialized; its captured values)."""
    ir = closed.ir
    args_types = [v.type for v, m in zip(ir.invars, linear_mask) if not m]
    ct_types = [v.type.strip_weak() for v, p in zip(ir.outvars, ct_present) if p]

    def fn(*vals):
        args, cts = iter(vals[:len(args_types)]), iter(vals[len(args_types):])
        full = [None if m else next(args) for m in linear_mask]
        out_cts = [next(cts) if p else Zero(v.type.strip_weak())
                   for v, p in zip(ir.outvars, ct_present)]
        in_cts = backward_pass(ir, (), full, linear_mask, out_cts)
        return [instantiate(c, v.type.strip_weak())
                for c, v, m in zip(in_cts, ir.invars, linear_mask) if m]

    return consts_as_args(trace_flat(fn, [*args_types, *ct_types], "transpose"))


def dce_sub_ir(closed: ClosedIR, used_outputs) -> tuple:
    """(``closed`` keeping only the used outputs, DCE'd; which of its inputs are still
    read)."""
    ir = closed.ir
    pruned = dce(IR((), ir.invars, ir.eqns, select_by(ir.outvars, used_outputs)))
    return ClosedIR(pruned), used_inputs(pruned)
