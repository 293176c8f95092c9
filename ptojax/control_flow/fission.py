"""Loop fission for ``scan``: the part of a body that does not depend on the carry is done for
all iterations at once, outside the loop.

An equation of the body whose inputs are consts, x slices, literals or results of such
equations does not depend on the carry. Those that read an x slice are computed before the
loop on the stacked xs (that part of the body vmapped over the scan axis) and the values the
loop still reads enter it as extra xs; those that read consts only (loop invariant) are
computed once and enter as extra consts. The loop keeps the carry-dependent rest.

One matmul over all T iterations runs several times faster than T small ones, and in reverse
mode the transpose of a hoisted matmul is again one matmul outside the loop: a weight
gradient becomes one contraction over time instead of T rank-B updates carried around the
backward loop. The scan's partial-eval rule applies this to the loops it emits, when the
hoisted per-iteration work includes a matmul (elementwise work alone gains little and would
cost a stacked copy of its results).
"""
from __future__ import annotations

from ptojax.ir.core import IR, ClosedIR, Var
from ptojax.ops.linalg import dot_general_p
from ptojax.eval.interpreter import eval_ir
from ptojax.trace import trace_flat
from ptojax.optimize import dce, has_effect
from ptojax.batching.vmap import vmap_ir
from ptojax.ops.shape import move_axis
from ptojax.control_flow.common import groups, inline, new_eqn


def hoist_carry_free(eqn) -> list:
    """``eqn`` (a scan) as equations computing its carry-free work before the loop, then the
    loop without it; ``[eqn]`` when there is no carry-free matmul to hoist."""
    p = eqn.params
    body, nc, nk = p["body"].ir, p["num_consts"], p["num_carry"]
    consts, _, xs = groups(body.invars, nc, nk)
    hoisted, per_iteration = _carry_free_eqns(body, consts, xs)
    if not any(e.prim is dot_general_p and e.outputs[0] in per_iteration for e in hoisted):
        return [eqn]
    kept = [e for e in body.eqns if e not in set(hoisted)]
    frontier = _read_by_loop(hoisted, kept, body.outvars)
    invariant = [v for v in frontier if v not in per_iteration]
    stacked = [v for v in frontier if v in per_iteration]
    op_consts, op_init, op_xs = groups(eqn.inputs, nc, nk)
    pre = _before_loop(IR((), [*consts, *xs], hoisted, [*invariant, *stacked]), nc,
                       [a.type for a in (*op_consts, *op_xs)], p["length"])
    if pre.consts:  # constants a batching rule made: keep the loop as it is
        return [eqn]
    pre_eqns, pre_outs = inline(pre.ir, [*op_consts, *op_xs])
    n_inv = len(invariant)
    loop_body = ClosedIR(IR((), [*consts, *invariant, *body.invars[nc:nc + nk], *xs,
                                 *stacked], kept, body.outvars))
    loop = new_eqn(eqn.prim, [*op_consts, *pre_outs[:n_inv], *op_init, *op_xs,
                              *pre_outs[n_inv:]],
                   p.replace(body=loop_body, num_consts=nc + n_inv), eqn.source,
                   list(eqn.outputs))
    return [*pre_eqns, loop]


def _carry_free_eqns(body: IR, consts, xs) -> tuple:
    """(equations not depending on the carry, the variables among their results that vary
    per iteration). Equations with effects stay in the loop, in their order."""
    free, per_iteration = set(consts) | set(xs), set(xs)
    hoisted = []
    for e in body.eqns:
        reads = [a for a in e.inputs if type(a) is Var]
        if all(a in free for a in reads) and not has_effect(e):
            hoisted.append(e)
            free.update(e.outputs)
            if any(a in per_iteration for a in reads):
                per_iteration.update(e.outputs)
    return hoisted, per_iteration


def _read_by_loop(hoisted, kept, outvars) -> list:
    """Results of hoisted equations that the remaining loop reads, in order."""
    produced = {v for e in hoisted for v in e.outputs}
    reads = [a for e in kept for a in e.inputs] + list(outvars)
    return list(dict.fromkeys(a for a in reads if type(a) is Var and a in produced))


def _before_loop(ir: IR, n_consts, operand_types, length) -> ClosedIR:
    """``ir`` (consts and x slices -> hoisted values) on the whole stacked xs: the invariant
    values once, the per-iteration ones stacked along axis 0."""
    n_xs = len(ir.invars) - n_consts
    batched, out_dims = vmap_ir(ClosedIR(dce(ir)), [None] * n_consts + [0] * n_xs, length)

    def fn(*operands):
        outs = eval_ir(batched, list(operands))
        return [o if d is None else move_axis(o, d, 0) for o, d in zip(outs, out_dims)]

    return trace_flat(fn, operand_types, "scan")
