"""Loop-invariant code motion in a kernel body: the equations of a ``pto.kernel.fori`` body
that depend on no loop index and no carry run once, before the loop, and enter it as loop
invariants (loops nested in loops hand theirs on outwards as far as they stay invariant).

Loops written by hand rarely compute such values on purpose, but loops built by others do:
a causal mask's column-minus-row grid (``iota``, ``broadcast``, ``sub``) in every masked step,
and the loops ``kernel/loop_autodiff.py`` generates (a reverse loop running the primal body
and its transpose, a recompute loop inside it), which repeat whatever of the primal body did
not depend on the step.

What moves: vector and scalar work (elementwise math, broadcasts, reductions, iotas,
reshapes). What stays: loads and stores (a window of a GM array is read where the body reads
it), matmuls (the cube's place in the step is part of the kernel's pipelining), and nested
loops.
"""
from __future__ import annotations

from ptojax.ir.core import IR, ClosedIR, Var
from ptojax.kernel.primitives import kernel_fori_p, kernel_load_p, kernel_store_p, loop_body
from ptojax.ops.linalg import dot_general_p

STAYS = (kernel_load_p, kernel_store_p, kernel_fori_p, dot_general_p)


def hoist_invariants(ir: IR) -> IR:
    """``ir`` with the invariant work of its loops (at any depth) moved out of them."""
    eqns = []
    for e in ir.eqns:
        if e.prim is kernel_fori_p:
            eqns.extend(_hoisted(e))
        else:
            eqns.append(e)
    return IR(ir.constvars, ir.invars, eqns, ir.outvars)


def _hoisted(loop) -> list:
    """The equations moved out of ``loop``'s body (renamed into the enclosing scope), then
    the loop, which takes their results as further invariants."""
    body = hoist_invariants(loop_body(loop.params))
    n = loop.params["num_carry"]
    varying = {*body.invars[:1 + n], *body.constvars}
    moved, kept = [], []
    for e in body.eqns:
        if e.prim in STAYS or e.prim.multiple_results or \
                any(type(a) is Var and a in varying for a in e.inputs):
            varying.update(e.outputs)
            kept.append(e)
        else:
            moved.append(e)
    if not moved:
        return [_with_body(loop, body, loop.inputs)]
    outer = dict(zip(body.invars[1 + n:], loop.inputs[2 + n:]))   # body invariant -> operand
    before = []
    for e in moved:
        outs = [Var(o.type) for o in e.outputs]
        before.append(e.replace(inputs=[outer.get(a, a) if type(a) is Var else a
                                        for a in e.inputs], outputs=outs))
        outer.update(zip(e.outputs, outs))
    used = {a for e in kept for a in e.inputs if type(a) is Var} | \
        {v for v in body.outvars if type(v) is Var}
    new = [o for e in moved for o in e.outputs if o in used]
    inner = IR(body.constvars, (*body.invars, *new), kept, body.outvars)
    return [*before, _with_body(loop, inner, (*loop.inputs, *(outer[o] for o in new)))]


def _with_body(loop, body: IR, inputs):
    old = loop.params["body"]
    new = ClosedIR(body, old.consts) if isinstance(old, ClosedIR) else body
    return loop.replace(inputs=list(inputs), params=loop.params.replace(body=new))
