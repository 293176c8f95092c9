"""Transposition of linear IR: the backward pass of reverse-mode autodiff, as IR → IR.

``transpose_ir(linear, linear_mask)`` takes an IR that is linear in the inputs marked True and
returns an IR from ``(the other inputs..., output cotangents...)`` to the cotangents of the
linear inputs. Equations that do not depend on a linear input (recomputation inside a
checkpointed region) are evaluated forward first; the linear ones are then walked in reverse,
each through its primitive's ``transpose`` fact:

    rule(cts_out, *inputs, **params) -> cotangent per input (None for non-linear inputs)

where a linear input arrives as ``UndefinedPrimal(aval)``. Cotangents are symbolic ``Zero``s
until something real flows back.
"""
from __future__ import annotations

from ptojax import source_info
from ptojax.ir.core import IR, Var
from ptojax.ops.arithmetic import add_tangents
from ptojax.ops.tangents import UndefinedPrimal, Zero, as_value, is_zero
from ptojax.trace import bind, eager_sources, trace_flat


def backward_pass(ir: IR, consts, args, linear_mask, cts_out):
    """Cotangents of the linear inputs of ``ir`` given the other inputs and ``cts_out``."""
    linear = {v for v, m in zip(ir.invars, linear_mask) if m}
    env = dict(zip(ir.constvars, consts))
    env.update((v, a) for v, a, m in zip(ir.invars, args, linear_mask) if not m)
    with source_info.replaying() as at:
        linear_eqns = forward_pass(ir.eqns, env, linear, at)
        cts = {}
        for v, ct in zip(ir.outvars, cts_out):
            if type(v) is Var and v in linear and not is_zero(ct):
                cts[v] = add_tangents(cts.get(v, Zero(v.type)), ct)
        for eqn in reversed(linear_eqns):
            at(eqn.source)
            transpose_eqn(eqn, env, linear, cts)
    return [cts.get(v, Zero(v.type)) if m else None for v, m in zip(ir.invars, linear_mask)]


def forward_pass(eqns, env, linear, at) -> list:
    """Evaluate (into ``env``) the equations that do not depend on a ``linear`` value; return
    the others, adding their outputs to ``linear``."""
    linear_eqns = []
    for eqn in eqns:
        if any(type(a) is Var and a in linear for a in eqn.inputs):
            linear.update(eqn.outputs)
            linear_eqns.append(eqn)
            continue
        at(eqn.source)
        outs = bind(eqn.prim, [env[a] if type(a) is Var else a for a in eqn.inputs],
                    eqn.params)
        env.update(zip(eqn.outputs, outs if eqn.prim.multiple_results else [outs]))
    return linear_eqns


def transpose_eqn(eqn, env, linear, cts) -> None:
    """Move the cotangents of ``eqn``'s outputs (popped from ``cts``) to its linear inputs,
    through its primitive's ``transpose`` fact."""
    outs_ct = [cts.pop(v, Zero(v.type)) for v in eqn.outputs]
    if all(is_zero(c) for c in outs_ct):
        return
    rule = eqn.prim.rule("transpose", "reverse-mode differentiation", eqn.source)
    invals = [UndefinedPrimal(a.type) if type(a) is Var and a in linear
              else (env[a] if type(a) is Var else as_value(a)) for a in eqn.inputs]
    in_cts = rule(outs_ct if eqn.prim.multiple_results else outs_ct[0], *invals, **eqn.params)
    for a, ct in zip(eqn.inputs, in_cts):
        if type(a) is Var and a in linear and ct is not None and not is_zero(ct):
            cts[a] = add_tangents(cts.get(a, Zero(a.type)), ct)


def transpose_ir(linear: IR, linear_mask, consts=(), args=None) -> tuple:
    """IR of ``(non-linear inputs..., output cotangents...) -> linear-input cotangents``.

    Returns (ClosedIR, ct_nonzeros): cotangents that are symbolically zero are omitted. Given
    the non-linear inputs' values (``args``), the rewrite is traced eagerly
    (``trace.trace_flat``), so user rules it runs (custom_vjp bwd kept as a Python function)
    may use them; cotangents stay abstract."""
    args_types = [v.type for v, m in zip(linear.invars, linear_mask) if not m]
    ct_types = [v.type.strip_weak() for v in linear.outvars]
    nonzeros = []

    def fn(*vals):
        args, cts = vals[:len(args_types)], vals[len(args_types):]
        full_args, it = [], iter(args)
        for m in linear_mask:
            full_args.append(None if m else next(it))
        out = backward_pass(linear, consts, full_args, linear_mask, cts)
        out = [c for c, m in zip(out, linear_mask) if m]
        nonzeros[:] = [not is_zero(c) for c in out]
        return [c for c in out if not is_zero(c)]

    eager = () if args is None else eager_sources(args, len(ct_types))
    return trace_flat(fn, [*args_types, *ct_types], "transpose", *eager), nonzeros
