"""Automatic differentiation of ``pto.kernel`` calls, with the kernel's own blocking.

Forward mode: the tangent of a ``kernel_call`` is a ``kernel_linear_call`` whose body is the
JVP of the block program with the primal stores dropped — it recomputes what it needs of
the primal (``kernel_load`` of a tangent ref loads the tangent's window, ``kernel_store``
stores the tangent window). The program grid, windows and regions are the primal's.

Reverse mode: the transpose of a ``kernel_linear_call`` is a ``kernel_call`` over the same
grid. Its body first recomputes the primal values of the block (the non-linear equations),
then walks the linear equations backwards through their primitives' ``transpose`` facts,
except for the refs: the cotangent of a ``kernel_store``d window is a ``kernel_load`` of the
output cotangent, and the cotangent of a ``kernel_load``ed window is added into the input's
cotangent with an atomic ``kernel_store(add=True)`` — programs that read overlapping windows
(all query blocks read the same keys) accumulate into the same elements. The derivative
kernels unroll ``pto.kernel.fori`` loops with static bounds; a loop with run-time bounds needs
``pto.custom_vjp`` with a backward kernel.
"""
from __future__ import annotations

import numpy as np

from ptojax import source_info
from ptojax.autodiff.jvp import jvp_eval
from ptojax.autodiff.transpose import forward_pass, transpose_eqn
from ptojax.ir.core import Literal, Var
from ptojax.kernel.call import kernel_call_p, kernel_linear_call_p
from ptojax.kernel.loop_autodiff import transpose_fori
from ptojax.kernel.overwrites import check_no_overwrites
from ptojax.kernel.primitives import kernel_fori_p, kernel_load_p, kernel_store_p, loop_body
from ptojax.kernel.spec import Region
from ptojax.kernel.write_only import drop_write_only
from ptojax.ops.arithmetic import add_tangents
from ptojax.ops.broadcast import zeros
from ptojax.ops.tangents import Zero, is_zero
from ptojax.optimize import optimize
from ptojax.trace import bind, trace_flat


MAX_UNROLLED_STEPS = 64       # loop steps a derivative kernel may unroll


def unrolled(body, name):
    """``body`` with its ``pto.kernel.fori`` loops unrolled (their bounds must be static): the
    derivative kernels are straight-line code over the same blocks."""
    if not any(e.prim is kernel_fori_p for e in body.ir.eqns):
        return body
    return optimize(trace_flat(lambda *args: _run_unrolled(body.ir, body.consts, args, name),
                               body.in_types, "kernel_unrolled"))


def _run_unrolled(ir, consts, args, name):
    env = dict(zip(ir.constvars, consts))
    env.update(zip(ir.invars, args))

    def val(a):
        return env[a] if type(a) is Var else a

    for eqn in ir.eqns:
        ins = [val(a) for a in eqn.inputs]
        if eqn.prim is kernel_fori_p:
            lo, hi = eqn.inputs[:2]
            if type(lo) is not Literal or type(hi) is not Literal or \
                    int(hi.value) - int(lo.value) > MAX_UNROLLED_STEPS:
                outs = bind(eqn.prim, ins, eqn.params)     # kernel/loop_autodiff.py
                env.update(zip(eqn.outputs, outs))
                continue
            n = eqn.params["num_carry"]
            outs, rest = ins[2:2 + n], ins[2 + n:]
            for i in range(int(lo.value), int(hi.value)):
                outs = _run_unrolled(loop_body(eqn.params), (), [np.int32(i), *outs, *rest],
                                     name)
        else:
            outs = bind(eqn.prim, ins, eqn.params)
            outs = outs if eqn.prim.multiple_results else [outs]
        env.update(zip(eqn.outputs, outs))
    return [val(v) for v in ir.outvars]


def _pick(seq, mask):
    return [x for x, m in zip(seq, mask) if m]


# --- forward mode ---------------------------------------------------------------------------------
def tangent_body(body, k, n_in, nonzero):
    """``(*pids, *ins, *nonzero tangents, *tangent out refs) -> tangent outs`` of a block
    program ``(*pids, *ins, *out refs) -> outs``."""
    types = body.in_types
    pid_t, in_t, out_t = types[:k], types[k:k + n_in], types[k + n_in:]
    tin_t = _pick(in_t, nonzero)

    def fn(*args):
        pids, ins = args[:k], args[k:k + n_in]
        tins, touts = iter(args[k + n_in:k + n_in + len(tin_t)]), args[k + n_in + len(tin_t):]
        outs = [zeros(t) for t in out_t]      # primal stores are dropped
        tangents = [Zero(t) for t in pid_t] + [next(tins) if nz else Zero(t)
                                               for t, nz in zip(in_t, nonzero)] + list(touts)
        _, result = jvp_eval(body, [*pids, *ins, *outs], tangents)
        return [zeros(t) if is_zero(r) else r for r, t in zip(result, out_t)]

    return drop_write_only(optimize(trace_flat(fn, [*pid_t, *in_t, *tin_t, *out_t],
                                               "kernel_jvp")))


def _regions(regions, order):
    """Regions whose window shapes follow ``order`` (indices into the original operands)."""
    return tuple(Region(tuple(r.shapes[i] for i in order), r.conditions) for r in regions)


def _kernel_jvp(primals, tangents, **params):
    outs = kernel_call_p.bind(*primals, **params)
    nonzero = [not is_zero(t) for t in tangents]
    if not any(nonzero):
        return outs, [Zero(o.aval) for o in outs]
    n_in, k = params["num_inputs"], len(params["grid"])
    n_out = len(params["windows"]) - n_in
    order = [*range(n_in), *_pick(range(n_in), nonzero), *range(n_in, n_in + n_out)]
    bodies = [unrolled(b, params["name"]) for b in params["bodies"]]
    check_no_overwrites(params["name"], params["grid"], params["regions"], bodies)
    touts = kernel_linear_call_p.bind(
        *primals, *_pick(tangents, nonzero), name=params["name"] + "_jvp",
        grid=params["grid"], windows=tuple(params["windows"][i] for i in order),
        regions=_regions(params["regions"], order),
        bodies=tuple(tangent_body(b, k, n_in, nonzero) for b in bodies),
        num_inputs=n_in + sum(nonzero), accumulate=params["accumulate"],
        target=params["target"], num_primals=n_in)
    return outs, touts


# --- reverse mode ---------------------------------------------------------------------------------
def _starts(eqn, env):
    return [env[a] if type(a) is Var else a.value for a in eqn.inputs[1:]] \
        if eqn.prim is kernel_load_p else \
        [env[a] if type(a) is Var else a.value for a in eqn.inputs[2:]]


def transposed_body(body, k, n_primal, n_tangent):
    """``(*pids, *primal ins, *out cotangents, *in cotangent refs) -> in cotangents`` of a
    linear block program ``(*pids, *primal ins, *tangent ins, *tangent out refs) -> outs``."""
    ir = body.ir
    types = body.in_types
    pid_t, in_t = types[:k], types[k:k + n_primal]
    tin_vars = ir.invars[k + n_primal:k + n_primal + n_tangent]
    tout_t = types[k + n_primal + n_tangent:]
    tin_t = [v.type for v in tin_vars]

    def fn(*args):
        known = args[:k + n_primal]
        ct_outs = args[k + n_primal:k + n_primal + len(tout_t)]
        ct_ins = dict(zip(tin_vars, args[k + n_primal + len(tout_t):]))
        env = dict(zip(ir.constvars, body.consts))
        env.update(zip(ir.invars[:k + n_primal], known))
        linear = set(ir.invars[k + n_primal:])
        with source_info.replaying() as at:
            linear_eqns = forward_pass(ir.eqns, env, linear, at)   # the block's primal values
            cts = dict(zip(ir.outvars, ct_outs))   # refs: the output cotangent arrays
            for eqn in reversed(linear_eqns):
                at(eqn.source)
                _transpose_eqn(eqn, env, linear, cts, ct_ins)
        return [ct_ins[v] for v in tin_vars]

    return optimize(trace_flat(fn, [*pid_t, *in_t, *tout_t, *tin_t], "kernel_transpose"))


def _transpose_eqn(eqn, env, linear, cts, ct_ins):
    p = eqn.params
    if eqn.prim is kernel_store_p:           # ct(value) = the cotangent's window
        ref, value = eqn.inputs[:2]
        ct_ref = cts.pop(eqn.outputs[0])
        cts[ref] = ct_ref
        if type(value) is Var and value in linear:
            ct = kernel_load_p.bind(ct_ref, *_starts(eqn, env), sizes=p["sizes"],
                                    squeezed=p["squeezed"])
            cts[value] = add_tangents(cts.get(value, Zero(value.type)), ct)
        return
    if eqn.prim is kernel_fori_p:            # a loop with run-time bounds, run backwards
        transpose_fori(eqn, env, linear, cts, ct_ins, _transpose_eqn)
        return
    if eqn.prim is kernel_load_p:            # added into the input's cotangent
        ct = cts.pop(eqn.outputs[0], None)
        ref = eqn.inputs[0]
        if ct is None or is_zero(ct):
            return
        ct_ins[ref] = kernel_store_p.bind(ct_ins[ref], ct, *_starts(eqn, env),
                                          sizes=p["sizes"], squeezed=p["squeezed"], add=True)
        return
    transpose_eqn(eqn, env, linear, cts)


def _kernel_transpose(cts, *inputs, name, grid, windows, regions, bodies, num_inputs,
                      accumulate, target, num_primals, kernel=None):
    primals = inputs[:num_primals]
    n_tangent = num_inputs - num_primals
    n_out = len(windows) - num_inputs
    ct_outs = [zeros(v.type) if is_zero(c) else c for c, v in zip(cts, bodies[0].ir.outvars)]
    order = [*range(num_primals), *range(num_inputs, num_inputs + n_out),
             *range(num_primals, num_inputs)]
    k = len(grid)
    ct_ins = kernel_call_p.bind(
        *primals, *ct_outs, name=name.removesuffix("_jvp") + "_vjp", grid=grid,
        windows=tuple(windows[i] for i in order), regions=_regions(regions, order),
        bodies=tuple(transposed_body(b, k, num_primals, n_tangent) for b in bodies),
        num_inputs=num_primals + n_out, accumulate=tuple(range(n_tangent)), target=target,
        kernel=None)
    return [None] * num_primals + list(ct_ins)


kernel_call_p.define(jvp=_kernel_jvp)
kernel_linear_call_p.define(transpose=_kernel_transpose)
