"""Dropping write-only arrays from a derivative block program.

The JVP of a block program evaluates the primal stores into stand-ins for the primal
outputs (``kernel/autodiff.py``: zeros arrays, since a derivative kernel has no primal
outputs). Straight-line, those stores are dead code. A loop carries the output refs (a
``pto.kernel.fori`` body may store into them), so a primal store after a loop with run-time
bounds (a query block's output, stored after its key loop) stores into the loop's result
and feeds the next loop's carry: plain dead-code elimination keeps the chain, and the
stand-in would become a tile carried through every loop. An array that is only stored
into and passed through loops -- never loaded, never an output of the program -- is
write-only: its stores, its loop carries and invariants, and the zeros it starts from are
removed here.
"""
from __future__ import annotations

from ptojax.ir.core import IR, ClosedIR, Var
from ptojax.ir.types import TensorType
from ptojax.kernel.primitives import kernel_fori_p, kernel_store_p, loop_body
from ptojax.ops.broadcast import broadcast_in_dim_p

_CANDIDATES = (kernel_store_p, kernel_fori_p, broadcast_in_dim_p)


def drop_write_only(closed: ClosedIR) -> ClosedIR:
    """``closed`` without its write-only arrays (the program's outputs stay)."""
    ir = closed.ir
    dead = _dead_vars(ir, set(), set())
    if not dead:
        return closed
    return ClosedIR(_rewrite(ir, dead), closed.consts)


def _uses(ir) -> dict:
    uses = {}
    for e in ir.eqns:
        for pos, a in enumerate(e.inputs):
            if type(a) is Var:
                uses.setdefault(a, []).append((e, pos))
    return uses


def _dead_vars(ir: IR, dead_invars: set, dead_outs: set) -> set:
    """The greatest set of write-only arrays of ``ir``, given that ``dead_invars`` may be
    write-only and the outputs at positions ``dead_outs`` do not escape."""
    cand = set(dead_invars)
    for e in ir.eqns:
        if e.prim in _CANDIDATES:
            cand.update(o for o in e.outputs if isinstance(o.type, TensorType))
    escaping = {o for i, o in enumerate(ir.outvars) if type(o) is Var and i not in dead_outs}
    uses = _uses(ir)
    changed = True
    while changed:
        changed = False
        for v in list(cand):
            if v in escaping or not all(_dead_use(e, pos, cand) for e, pos in
                                        uses.get(v, ())):
                cand.discard(v)
                changed = True
    return cand


def _dead_use(e, pos, cand) -> bool:
    if e.prim is kernel_store_p:
        return pos == 0 and e.outputs[0] in cand
    if e.prim is kernel_fori_p and pos >= 2:
        n = e.params["num_carry"]
        j = pos - 2
        if j < n and e.outputs[j] not in cand:
            return False
        dead = _dead_operands(e, cand)
        if j not in dead:
            return False
        body = loop_body(e.params)
        inner = _dead_vars(body, {body.invars[1 + d] for d in dead},
                           {d for d in dead if d < n})
        return body.invars[1 + j] in inner and (j >= n or body.outvars[j] in inner or
                                               body.outvars[j] is body.invars[1 + j])
    return False


def _dead_operands(e, cand) -> set:
    """Positions (after the bounds) of a loop's operands that may be write-only."""
    n = e.params["num_carry"]
    return {j for j, a in enumerate(e.inputs[2:]) if type(a) is Var and a in cand and
            (j >= n or e.outputs[j] in cand)}


def _rewrite(ir: IR, dead: set) -> IR:
    eqns = []
    for e in ir.eqns:
        if e.outputs and all(o in dead for o in e.outputs):
            continue                       # a store into, or the zeros of, a dead array
        if e.prim is kernel_fori_p:
            e = _rewrite_loop(e, dead)
        eqns.append(e)
    return IR(ir.constvars, [v for v in ir.invars], eqns, ir.outvars)


def _rewrite_loop(e, dead):
    """The loop without its write-only carries and invariants."""
    n = e.params["num_carry"]
    drop = _dead_operands(e, dead)
    if not drop:
        return e
    original = e.params["body"]
    body = loop_body(e.params)
    inner = _dead_vars(body, {body.invars[1 + d] for d in drop}, {d for d in drop if d < n})
    new_body = _rewrite(body, inner)
    keep = [j for j in range(len(e.inputs) - 2) if j not in drop]
    new_body = IR(new_body.constvars, [body.invars[0], *(body.invars[1 + j] for j in keep)],
                  new_body.eqns, [new_body.outvars[j] for j in keep if j < n])
    if isinstance(original, ClosedIR):
        new_body = ClosedIR(new_body, original.consts)
    return e.replace(inputs=[*e.inputs[:2], *(e.inputs[2 + j] for j in keep)],
                     outputs=[e.outputs[j] for j in keep if j < n],
                     params=e.params.replace(body=new_body,
                                             num_carry=sum(1 for j in keep if j < n)))
