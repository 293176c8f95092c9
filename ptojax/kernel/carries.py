"""Where a ``pto.kernel.fori`` loop's tile carries live, read off the loop body's IR:

    L0C         a carry that starts at zero and only accumulates one matmul a step
                (``acc + K.dot(a, b)``): TMATMUL_ACC into the carried accumulator
    workspace   a carry the vector unit computes and only matmuls read, each read before
                the step computes its new value: stored to its v2c workspace where it is
                computed, loaded by the cube in the next step -- when every value stored
                there is loaded once by the cube (``handed_on``)
    c2v         a carry whose new value is a matmul result and that only the vector unit
                reads: stored by the cube where it is computed into one of two copies of
                its c2v workspace, loaded by the vector unit at its first use in the next
                step (``c2v_carries``), so the cube runs a step ahead
    UB          the rest (``kernel/lower.py``)
"""
from __future__ import annotations

from ptojax.ir.core import IR, Literal, Var
from ptojax.kernel.primitives import kernel_fori_p, kernel_load_p, loop_body
from ptojax.ops import arithmetic as ar
from ptojax.ops.linalg import dot_general_p


def accumulated_carries(body: IR, n, carries) -> dict:
    """{carry index: (dot output var, add eqn, index of the dot among the add's operands)} for
    carries that start at zero and only accumulate one matmul per step (``acc + K.dot``)."""
    uses: dict = {}
    for e in body.eqns:
        for a in e.inputs:
            if type(a) is Var:
                uses.setdefault(a, []).append(e)
    dots = {e.outputs[0] for e in body.eqns if e.prim is dot_general_p}
    out = {}
    for i, (v, o, c) in enumerate(zip(body.invars[1:1 + n], body.outvars, carries)):
        zero = c.kind == "bcast" and c.layout == "scalar" and type(c.src.atom) is Literal \
            and float(c.src.atom.value) == 0.0 and len(c.shape) == 2
        add = next((e for e in body.eqns if o in e.outputs), None)
        if not zero or add is None or add.prim is not ar.add_p or len(uses.get(v, ())) != 1:
            continue
        if uses[v][0] is not add:
            continue
        d = add.inputs[1] if add.inputs[0] is v else add.inputs[0]
        if d in dots and len(uses.get(d, ())) == 1 and d.type.dtype == v.type.dtype:
            out[i] = (d, add, add.inputs.index(d))
    return out


def workspace_carries(body: IR, n, carries) -> set:
    """Indices of 2-d tile carries that only matmuls read, each read before the body computes
    its new value (so storing the new value at once cannot overwrite the old one too early)."""
    defined = {o: i for i, e in enumerate(body.eqns) for o in e.outputs}
    out = set()
    for i, (v, o) in enumerate(zip(body.invars[1:1 + n], body.outvars)):
        if len(v.type.shape) != 2 or type(o) is not Var or \
                carries is not None and carries[i].kind in ("gm", "acc", "scalar"):
            continue
        uses = [k for k, e in enumerate(body.eqns) if v in e.inputs]
        if not uses or any(body.eqns[k].prim is not dot_general_p for k in uses):
            continue
        if o is v or (o in defined and max(uses) < defined[o] and
                      body.eqns[defined[o]].prim not in (kernel_fori_p, kernel_load_p)):
            out.add(i)
    return out


def read_by_matmuls_only(var, uses) -> bool:
    """Whether ``var`` is read, and only by matmuls or by a later loop that carries it in its
    workspace too (``uses``: var -> the equations using it), so every value stored in a
    workspace carry is loaded once by the cube."""
    if not uses.get(var):
        return False
    for e in uses[var]:
        if e.prim is dot_general_p:
            continue
        if e.prim is not kernel_fori_p:
            return False
        body, n = loop_body(e.params), e.params["num_carry"]
        positions = [t - 2 for t, a in enumerate(e.inputs) if a is var]
        if any(t < 0 or t >= n for t in positions) or \
                not set(positions) <= workspace_carries(body, n, None):
            return False
        if not all(handed_on(body, t, e.outputs[t], uses) for t in positions):
            return False
    return True


def handed_on(body, i, result, uses) -> bool:
    """Whether a workspace carry's stores are each loaded once by the cube: a loop passing
    the carry through (reading it every step, waiting for it once) leaves its result unread;
    a loop computing new values hands its last one on to matmuls after it."""
    if body.outvars[i] is body.invars[1 + i]:
        return not uses.get(result)
    return read_by_matmuls_only(result, uses)


def c2v_carries(body: IR, n) -> set:
    """Indices of 2-d tile carries whose new value is a matmul result of the step (or the
    carry itself, passed through) and whose old value only vector operations read (no
    matmul, no inner loop)."""
    dots = {e.outputs[0] for e in body.eqns if e.prim is dot_general_p}
    out = set()
    for i, (v, o) in enumerate(zip(body.invars[1:1 + n], body.outvars)):
        if len(v.type.shape) != 2 or (o not in dots or o.type != v.type) and o is not v:
            continue
        if any(v in e.inputs and e.prim in (dot_general_p, kernel_fori_p) for e in body.eqns):
            continue
        out.add(i)
    return out
