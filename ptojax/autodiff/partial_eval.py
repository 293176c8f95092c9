"""Split a JVP IR into its known (primal) part and its linear (tangent) part.

Given an IR over ``(primals..., tangents...)``, every equation that depends on a tangent input
is *unknown*; the rest is *known*. The known IR computes the primal outputs plus the
*residuals* — known values the unknown equations read. The linear IR computes the tangent
outputs from ``(residuals..., tangents...)``. This is a dependency analysis over the IR, so
forward values the backward pass does not read are never saved.

Equations whose primitive has a ``partial_eval`` fact decide their split themselves (a
checkpointed region saves only its inputs and recomputes its intermediates in the linear part;
loops split their bodies).
"""
from __future__ import annotations

from ptojax.ir.core import IR, ClosedIR, Var
from ptojax.optimize import dce


def partial_eval(closed: ClosedIR, unknown_inputs) -> tuple:
    """(known ClosedIR, linear IR, number of residuals, out_unknown) for ``closed``.

    known:  constvars + known invars -> known outvars + residuals
    linear: residuals + unknown invars -> unknown outvars
    """
    ir = dce(closed.ir)  # dead tangent equations must not keep residuals alive
    unknown = {v for v, u in zip(ir.invars, unknown_inputs) if u}
    known_eqns, unknown_eqns = [], []
    for eqn in ir.eqns:
        flags = [type(a) is Var and a in unknown for a in eqn.inputs]
        if not any(flags):
            known_eqns.append(eqn)
            continue
        rule = eqn.prim.fact("partial_eval")
        if rule is None:
            unknown_eqns.append(eqn)
            unknown.update(eqn.outputs)
            continue
        k, u, outs_unknown = rule(eqn, flags)
        known_eqns += k
        unknown_eqns += u
        unknown.update(outs_unknown)
    out_unknown = [type(v) is Var and v in unknown for v in ir.outvars]
    # residuals: known vars read by the unknown side (incl. unknown-side outputs that are known)
    residuals, seen = [], set()

    def need(v):
        if type(v) is Var and v not in unknown and v not in seen:
            seen.add(v)
            residuals.append(v)

    for eqn in unknown_eqns:
        for a in eqn.inputs:
            need(a)
    known_outs = [v for v, u in zip(ir.outvars, out_unknown) if not u]
    unknown_outs = [v for v, u in zip(ir.outvars, out_unknown) if u]
    known_ir = dce(IR(ir.constvars, [v for v, u in zip(ir.invars, unknown_inputs) if not u],
                      known_eqns, [*known_outs, *residuals]))
    unknown_invars = [v for v, u in zip(ir.invars, unknown_inputs) if u]
    linear_ir = dce(IR((), [*residuals, *unknown_invars], unknown_eqns, unknown_outs))
    return ClosedIR(known_ir, closed.consts), linear_ir, len(residuals), out_unknown
