"""Forward-mode autodiff as an IR → IR rewrite.

``jvp_ir(closed, nonzeros)`` returns an IR computing ``(primal outs..., tangent outs...)`` from
``(primals..., nonzero tangents...)``. Tangents are symbolic ``Zero``s until something real
flows in, so unused paths cost nothing. Each primitive's rule is its ``jvp`` fact, defined
beside it:

    rule(primals, tangents, **params) -> (primal_out, tangent_out)

Rules bind ordinary primitives. Nonlinear factors are computed from primals only and the
tangent enters through linear primitives (mul by a primal-derived value, add, dot_general,
...), which is what lets ``partial_eval`` split the result into a forward IR and a linear IR
that ``transpose`` turns into the backward pass.
"""
from __future__ import annotations

from ptojax import dtypes, source_info
from ptojax.ir.core import ClosedIR, Literal, Var
from ptojax.ops.broadcast import fit_shape
from ptojax.ops.tangents import Zero, as_value, is_zero, tangent_aval
from ptojax.trace import bind, eager_sources, trace_flat


# ---------------------------------------------------------------------------------------------
def jvp_eval(closed: ClosedIR, primals, tangents):
    """Evaluate ``closed`` on primals and tangents (values or ``Zero``): (outs, tangent outs)."""
    ir = closed.ir
    primal_env, tangent_env = {}, {}
    for v, c in zip(ir.constvars, closed.consts):
        primal_env[v] = c
    primal_env.update(zip(ir.invars, primals))
    tangent_env.update(zip(ir.invars, tangents))

    def tangent_of(a):
        if type(a) is Literal:
            return Zero(a.type)
        t = tangent_env.get(a)
        return Zero(a.type) if t is None else t

    with source_info.replaying() as at:
        for eqn in ir.eqns:
            ins = [primal_env[a] if type(a) is Var else a for a in eqn.inputs]
            tans = [tangent_of(a) for a in eqn.inputs]
            at(eqn.source)
            if all(type(t) is Zero for t in tans):
                outs = bind(eqn.prim, ins, eqn.params)
                outs = outs if eqn.prim.multiple_results else [outs]
                primal_env.update(zip(eqn.outputs, outs))
                continue
            rule = eqn.prim.rule("jvp", "differentiation", eqn.source)
            out, tout = rule([as_value(a) for a in ins], tans, **eqn.params)
            if eqn.prim.multiple_results:
                primal_env.update(zip(eqn.outputs, out))
                tangent_env.update((v, _checked(t, v)) for v, t in zip(eqn.outputs, tout))
            else:
                primal_env[eqn.outputs[0]] = out
                tangent_env[eqn.outputs[0]] = _checked(tout, eqn.outputs[0])
    outs = [primal_env[v] if type(v) is Var else v for v in ir.outvars]
    touts = [tangent_of(v) for v in ir.outvars]
    return outs, touts


def _checked(t, var):
    """Zero tangents for integer and bool outputs; rank-0 tangents broadcast to the output's
    shape."""
    if type(t) is Zero or not dtypes.is_inexact(var.type.dtype):
        return Zero(var.type)
    return fit_shape(t, var.type.shape)


def jvp_ir(closed: ClosedIR, nonzeros, primals=None) -> tuple:
    """IR of ``(primals, tangents for the True entries of nonzeros) -> (outs, tangent outs)``.

    Returns (ClosedIR, out_nonzeros): tangent outputs that are symbolically zero are left out
    of the IR and marked False. Given the ``primals``' values, the rewrite is traced eagerly
    (``trace.trace_flat``), so user rules it runs (custom_jvp rules kept as Python functions)
    may use primal values; tangents stay abstract."""
    in_types = closed.in_types
    tangent_types = [tangent_aval(t) for t, nz in zip(in_types, nonzeros) if nz]
    out_nonzeros = []

    def fn(*args):
        primals, rest = args[:len(in_types)], list(args[len(in_types):])
        tangents = [rest.pop(0) if nz else Zero(t) for t, nz in zip(in_types, nonzeros)]
        outs, touts = jvp_eval(closed, primals, tangents)
        out_nonzeros[:] = [not is_zero(t) for t in touts]
        return [*outs, *[t for t in touts if not is_zero(t)]]

    eager = () if primals is None else eager_sources(primals, len(tangent_types))
    jvp_closed = trace_flat(fn, [*in_types, *tangent_types], "jvp", *eager)
    return jvp_closed, out_nonzeros
