"""Calls of user-derivative functions inlined before a program runs on the host.

Under ``jit``, once differentiation and batching are done, a ``custom_jvp_call``,
``custom_vjp_call``, ``custom_vmap_call`` or ``linear_call`` equation (``nn.softplus``, ``logaddexp``, ``logsumexp``, ...) only evaluates
its body: its
rules have been used or will not be. Left as a call it is a fusion boundary — the body stays
tensor-level, evaluated by the IR interpreter one equation at a time on every call — so the
host backend splices the body's equations into the program instead, where they tile and fuse
with their neighbours as any other equation (JAX inlines them when lowering too). A
``checkpoint`` keeps its call unless ``prevent_cse`` is off: its body is the backward pass's
recomputation, which must not be merged with the forward pass's copy.

Each splice gets fresh variables (a body shared by two calls is inlined twice), and a call
output that the body returns without computing it (an input, a literal, or one value returned
twice) becomes a ``copy``, so every equation output stays a fresh buffer.
"""
from __future__ import annotations

from ptojax.autodiff.calls import checkpoint_p, custom_jvp_call_p, custom_vjp_call_p
from ptojax.autodiff.custom_vmap import custom_vmap_call_p
from ptojax.autodiff.linear_call import linear_call_p
from ptojax.ir.core import IR, ClosedIR, Eqn, Var
from ptojax.ops.convert import copy_p

_ALWAYS_INLINED = (custom_jvp_call_p, custom_vjp_call_p, custom_vmap_call_p, linear_call_p)


def inlined(eqn) -> bool:
    """Whether the host backend splices ``eqn``'s body into its program."""
    if eqn.prim in _ALWAYS_INLINED:
        return True
    return eqn.prim is checkpoint_p and not eqn.params.get("prevent_cse", True)


def inline_calls(closed: ClosedIR) -> ClosedIR:
    """``closed`` with every ``inlined`` call replaced by its body's equations (recursively);
    ``closed`` itself when there is none."""
    if not any(inlined(e) for e in closed.ir.eqns):
        return closed
    ir = closed.ir
    return ClosedIR(IR(ir.constvars, ir.invars, _spliced(ir.eqns), ir.outvars), closed.consts)


def _spliced(eqns) -> list:
    out = []
    for eqn in eqns:
        if inlined(eqn):
            out.extend(_spliced(_body_eqns(eqn)))
        else:
            out.append(eqn)
    return out


def _body_eqns(eqn) -> list:
    """The equations of ``eqn``'s body over ``eqn``'s inputs and outputs, with fresh
    variables in between."""
    body = eqn.params["body"]
    assert not body.consts, "call bodies are const-free (autodiff/calls.py)"
    sub = body.ir
    rename = dict(zip(sub.invars, eqn.inputs))
    produced = {v for e in sub.eqns for v in e.outputs}
    copies = []
    for result, target in zip(sub.outvars, eqn.outputs):
        if type(result) is Var and result in produced and result not in rename:
            rename[result] = target
        else:
            copies.append((result, target))
    eqns = []
    for e in sub.eqns:
        outputs = [rename.setdefault(v, Var(v.type)) for v in e.outputs]
        eqns.append(Eqn(e.prim, [_renamed(a, rename) for a in e.inputs], outputs, e.params,
                        e.source))
    eqns += [Eqn(copy_p, [_renamed(result, rename)], [target], {}, eqn.source)
             for result, target in copies]
    return eqns


def _renamed(atom, rename):
    return rename.get(atom, atom) if type(atom) is Var else atom
