"""Derivatives of ``pto.kernel.fori`` loops with run-time bounds (``kernel/autodiff.py`` unrolls
loops with static bounds; these it cannot).

Forward mode: the JVP of a loop is the primal loop and a tangent loop carrying the primal
carries (recomputed) and the tangents of the float carries, its body the body's JVP.

Reverse mode, in the transposed block program: the tangent loop runs backwards,
``j = hi - 1, ..., lo``. Step ``j`` needs the primal carries entering step ``j``: it recomputes
them with a loop ``[lo, j)`` of the primal body inside the reverse loop (no carries are
stored, so the work is quadratic in the trip count: a causal loop of ``n`` blocks runs
``n (n + 1) / 2`` forward steps), evaluates the step's primal values and transposes its
linear equations (loads become atomic adds into the input cotangents, which the reverse loop
carries; an output ref's cotangent is the same array every step). The cotangents of the
linear carries are the reverse loop's carries, those of linear loop invariants accumulators.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.autodiff.jvp import jvp_eval
from ptojax.autodiff.transpose import forward_pass
from ptojax.ir.core import IR, ClosedIR, Literal, Var
from ptojax.ir.types import TensorType
from ptojax.kernel.primitives import kernel_fori_p, kernel_store_p, loop_body
from ptojax.ops.arithmetic import add_tangents, max_p
from ptojax.ops.broadcast import zeros
from ptojax.ops.tangents import Zero, is_zero
from ptojax.trace import trace_flat

I32 = TensorType((), dtypes.int32)


def _aval(x):
    if isinstance(x, Var):
        return x.type
    if hasattr(x, "aval"):
        return x.aval
    return TensorType(tuple(np.shape(x)), dtypes.canonicalize(np.result_type(x)))


def _instantiate(t, like):
    return zeros(_aval(like)) if is_zero(t) else t


def bind_fori(lo, hi, carries, consts, fn, name) -> list:
    """``kernel_fori`` of ``fn(i, *carries, *consts) -> carries`` (values it captures are
    passed as further loop invariants, as ``pto.kernel.fori`` does)."""
    closed = trace_flat(fn, [I32, *map(_aval, carries), *map(_aval, consts)], name)
    ir = closed.ir
    body = ClosedIR(IR((), (*ir.invars, *ir.constvars), ir.eqns, ir.outvars))
    return kernel_fori_p.bind(lo, hi, *carries, *consts, *closed.consts, body=body,
                              num_carry=len(carries))


# --- forward mode -------------------------------------------------------------------------------
def fori_jvp(primals, tangents, body, num_carry):
    lo, hi, *args = primals
    n = num_carry
    carries, consts = args[:n], args[n:]
    tc, tk = tangents[2:2 + n], tangents[2 + n:]
    outs = kernel_fori_p.bind(*primals, body=body, num_carry=n)
    if all(is_zero(t) for t in tangents):
        return outs, [Zero(_aval(o)) for o in outs]
    live_c = [dtypes.is_float(_aval(c).dtype) for c in carries]
    live_k = [not is_zero(t) for t in tk]
    tcarry = [_instantiate(t, c) for c, t, live in zip(carries, tc, live_c) if live]
    tconst = [t for t, live in zip(tk, live_k) if live]
    closed = ClosedIR(loop_body(dict(body=body)), ())
    m, nk = len(tcarry), len(consts)

    def step(i, *xs):
        c, tcs, k, tks = xs[:n], iter(xs[n:n + m]), xs[n + m:n + m + nk], iter(xs[n + m + nk:])
        tan_c = [next(tcs) if live else Zero(_aval(x)) for x, live in zip(c, live_c)]
        tan_k = [next(tks) if live else Zero(_aval(x)) for x, live in zip(k, live_k)]
        new, tnew = jvp_eval(closed, [i, *c, *k], [Zero(I32), *tan_c, *tan_k])
        return [*new, *[_instantiate(t, o) for o, t, live in zip(new, tnew, live_c) if live]]

    res = bind_fori(lo, hi, [*carries, *tcarry], [*consts, *tconst], step, "fori_jvp")
    touts = iter(res[n:])
    return outs, [next(touts) if live else Zero(_aval(o)) for o, live in zip(outs, live_c)]


# --- reverse mode -------------------------------------------------------------------------------
def _stored_refs(ir) -> set:
    return {e.inputs[0] for e in ir.eqns if e.prim is kernel_store_p}


def _primal_carries(ir, primal_pos, const_pos, linear_vars):
    """The primal carries entering step ``j``: the primal part of the body over ``[lo, j)``."""
    def primal_step(i, *xs):
        env = {ir.invars[0]: i}
        env.update(zip([ir.invars[1 + p] for p in primal_pos], xs[:len(primal_pos)]))
        env.update(zip([ir.invars[1 + q] for q in const_pos], xs[len(primal_pos):]))
        forward_pass(ir.eqns, env, set(linear_vars), lambda source: None)
        return [_value(ir.outvars[p], env) for p in primal_pos]
    return primal_step


def _linear_operands(ir, n, is_lin) -> list:
    """Which loop operands are linear: the linear ones, and carries whose body results
    depend on linear values (a tangent carry that starts at a constant zero)."""
    is_lin = list(is_lin)
    while True:
        lin = {ir.invars[1 + k] for k, x in enumerate(is_lin) if x}
        for e in ir.eqns:
            if any(type(a) is Var and a in lin for a in e.inputs):
                lin.update(e.outputs)
        new = [k for k in range(n) if not is_lin[k] and type(ir.outvars[k]) is Var and
               ir.outvars[k] in lin]
        if not new:
            return is_lin
        for k in new:
            is_lin[k] = True


def _value(a, env):
    return a.value if type(a) is Literal else env[a]


def transpose_fori(eqn, env, linear, cts, ct_ins, transpose_eqn):
    """Move the cotangents of loop ``eqn``'s linear outputs to its linear inputs (module
    docstring); ``transpose_eqn`` transposes one body equation (the kernel walk's)."""
    p = eqn.params
    n, ir = p["num_carry"], loop_body(p)
    lo, hi = (_value(a, env) for a in eqn.inputs[:2])
    ins = eqn.inputs[2:]
    is_lin = _linear_operands(ir, n, [type(a) is Var and a in linear for a in ins])
    carry_lin = [k for k in range(n) if is_lin[k]]
    primal_pos = [k for k in range(n) if not is_lin[k]]
    const_pos = [k for k in range(n, len(ins)) if not is_lin[k]]
    lin_consts = [k for k in range(n, len(ins)) if is_lin[k]]
    refs = _stored_refs(ir)
    ref_carries = [k for k in carry_lin if ir.invars[1 + k] in refs]
    val_carries = [k for k in carry_lin if k not in ref_carries]
    ref_consts = [k for k in lin_consts if ins[k] in ct_ins]
    acc_consts = [k for k in lin_consts if k not in ref_consts]
    ct_out = {k: cts.pop(eqn.outputs[k], Zero(eqn.outputs[k].type)) for k in range(n)}
    ref_cts = [ct_out[k] for k in ref_carries]
    if all(is_zero(c) for c in ct_out.values()) and not ref_cts:
        return
    p_init = [_value(ins[k], env) for k in primal_pos]
    p_consts = [_value(ins[k], env) for k in const_pos]
    linear_vars = [ir.invars[1 + k] for k in carry_lin + lin_consts]
    primal_step = _primal_carries(ir, primal_pos, const_pos, linear_vars)
    n_val, n_ref, n_acc = len(val_carries), len(ref_consts), len(acc_consts)

    def reverse_step(t, *xs):
        ct_c, ct_r, acc = xs[:n_val], xs[n_val:n_val + n_ref], xs[n_val + n_ref:
                                                                   n_val + n_ref + n_acc]
        rest = xs[n_val + n_ref + n_acc:]
        lo_, hi_, rcts = rest[0], rest[1], rest[2:2 + len(ref_cts)]
        pi, pk = rest[2 + len(ref_cts):2 + len(ref_cts) + len(p_init)], \
            rest[2 + len(ref_cts) + len(p_init):]
        j = hi_ - 1 - t
        pc = bind_fori(lo_, j, list(pi), list(pk), primal_step, "fori_recompute") \
            if pi else []
        env_b = {ir.invars[0]: j}
        env_b.update(zip([ir.invars[1 + k] for k in primal_pos], pc))
        env_b.update(zip([ir.invars[1 + k] for k in const_pos], pk))
        linear_b = set(linear_vars)
        lin_eqns = forward_pass(ir.eqns, env_b, linear_b, lambda source: None)
        cts_b = {}
        for k, c in zip(val_carries, ct_c):
            out = ir.outvars[k]
            if type(out) is Var and out in linear_b:
                cts_b[out] = add_tangents(cts_b.get(out, Zero(out.type)), c)
        for k, c in zip(ref_carries, rcts):
            cts_b[ir.outvars[k]] = c
        ct_ins_b = {ir.invars[1 + k]: r for k, r in zip(ref_consts, ct_r)}
        for e in reversed(lin_eqns):
            transpose_eqn(e, env_b, linear_b, cts_b, ct_ins_b)
        new_c = [_instantiate(cts_b.get(ir.invars[1 + k], Zero(ir.invars[1 + k].type)),
                              ir.invars[1 + k]) for k in val_carries]
        new_r = [ct_ins_b[ir.invars[1 + k]] for k in ref_consts]
        new_acc = [add_tangents(a, cts_b.get(ir.invars[1 + k], Zero(a.aval)))
                   for a, k in zip(acc, acc_consts)]
        return [*new_c, *new_r, *[_instantiate(a, ir.invars[1 + k])
                                  for a, k in zip(new_acc, acc_consts)]]

    init = [*[_instantiate(ct_out[k], ins[k]) for k in val_carries],
            *[ct_ins[ins[k]] for k in ref_consts],
            *[zeros(ins[k].type) for k in acc_consts]]
    trips = _trips(lo, hi)
    res = bind_fori(np.int32(0), trips, init, [lo, hi, *ref_cts, *p_init, *p_consts],
                    reverse_step, "fori_transpose")
    for k, c in zip(val_carries, res[:n_val]):
        cts[ins[k]] = add_tangents(cts.get(ins[k], Zero(ins[k].type)), c)
    for k, c in zip(ref_carries, ref_cts):
        cts[ins[k]] = c
    for k, r in zip(ref_consts, res[n_val:n_val + n_ref]):
        ct_ins[ins[k]] = r
    for k, c in zip(acc_consts, res[n_val + n_ref:]):
        cts[ins[k]] = add_tangents(cts.get(ins[k], Zero(ins[k].type)), c)


def _trips(lo, hi):
    return max_p.bind(hi - lo, np.int32(0))


kernel_fori_p.define(jvp=fori_jvp)
