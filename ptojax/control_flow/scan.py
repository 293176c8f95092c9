"""``scan``: a loop over the leading axis of its ``xs`` with a carry, the primitive under
``pto.lax.scan``, ``fori_loop`` with static bounds, ``map`` and ``while_loop(max_steps=)``
in reverse mode.

    carry_out... ys... = scan[length=n reverse=False num_consts=c num_carry=k body=...]
                         consts... init... xs...

``body`` is a const-free ClosedIR ``(consts..., carry..., x slices...) -> (carry...,
y slices...)``; iteration ``i`` (``n-1-i`` with ``reverse``) reads ``xs[:, i]``... slice ``i``
of every xs and writes slice ``i`` of every ys.

Rules (all registered here):

- jvp: a scan of the body's JVP. A carry gets a tangent if its initial value has one or the
  body gives it one (a fixpoint), so the carry keeps one form around the loop.
- partial eval (reverse mode): a *known* scan and a *linear* scan. The body is split (with
  the same fixpoint for unknown carries); the residuals the linear body reads are classified:
  a known const or x slice is passed to the linear scan as it is, a value computed from consts
  alone is computed once, before the loop, and passed as a const; everything else is stacked
  by the known scan as extra ys (one slice per iteration) and read as xs by the linear scan.
- transpose: the linear scan run backwards (``reverse`` flipped): its carry is (the
  accumulated cotangents of the linear consts, the carry's cotangent), its xs are the
  residual xs and the ys' cotangents, its ys the cotangents of the linear xs.
- vmap: batched consts stay where they are; batched carries (a fixpoint again) and x slices
  carry the batch at 0, stacked xs/ys at 1.
- dce: unused ys leave the body; a carry leaves when neither its final value nor any kept
  output needs it; consts and xs nothing reads leave the scan.
"""
from __future__ import annotations

import numpy as np

from ptojax.errors import ControlFlowError
from ptojax.ir.core import IR, ClosedIR, Eqn, Params, Var
from ptojax.ir.types import TensorType
from ptojax.ir.symbolic import as_dim
from ptojax.ops.checks import fmt_types
from ptojax.ops.arithmetic import add_p
from ptojax.ops.broadcast import instantiate, zeros
from ptojax.ops.shape import move_axis
from ptojax.ops.tangents import Zero, is_undefined, is_zero, tangent_aval
from ptojax.optimize import dce, has_effect
from ptojax.autodiff.partial_eval import partial_eval
from ptojax.control_flow import partition
from ptojax.trace import Primitive, Unsupported
from ptojax.control_flow.common import (carry_fixpoint, compiled, groups, inline,
                                        keep_inputs, new_eqn, reorder, same_shape_dtype,
                                        select_by, strong)
from ptojax.control_flow.fission import hoist_carry_free
from ptojax.control_flow.sub_ir import (batch_at_front, batch_sub_ir, dce_sub_ir,
                                        jvp_sub_ir, partial_eval_sub_ir, transpose_sub_ir)


# the primitive --------------------------------------------------------------------------------
def slice_type(t):
    """The type of one slice of a stacked xs/ys value."""
    return TensorType(t.shape[1:], t.dtype, t.weak_type)


def stacked_type(t, length):
    return TensorType((length, *t.shape), t.dtype, t.weak_type)   # weak ys stay weak, as JAX


def _scan_abstract(*args, body, num_consts, num_carry, length, reverse):
    consts, init, xs = groups(args, num_consts, num_carry)
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise ControlFlowError(f"scan: every xs operand needs a leading axis of the "
                                   f"length {length}, got {x}")
    expected = [*consts, *init, *map(slice_type, xs)]
    ins = body.in_types
    if len(ins) != len(expected) or not all(map(same_shape_dtype, ins, expected)):
        raise ControlFlowError(f"scan: the body takes ({fmt_types(ins)}) but the operands "
                               f"give ({fmt_types(expected)})")
    outs = body.out_types
    carry_out, ys = outs[:num_carry], outs[num_carry:]
    if len(carry_out) != num_carry or not all(map(same_shape_dtype, carry_out, init)):
        raise ControlFlowError(f"scan: the body returns the carry ({fmt_types(carry_out)}) "
                               f"but it enters as ({fmt_types(init)})")
    # the body's weak type, as JAX's scan (whose carry results are the body's carry outputs)
    carry = [t.update(weak_type=o.weak_type) for t, o in zip(init, carry_out)]
    return [*carry, *[stacked_type(y, length) for y in ys]]


def _scan_impl(*args, body, num_consts, num_carry, length, reverse):
    return run_scan(compiled(body), args, body, num_consts, num_carry, length, reverse)


def run_scan(run, args, body, num_consts, num_carry, length, reverse):
    """The scan of ``body`` over ``args``, each step ``run(*consts, *carry, *x)`` (the
    numpy executor here; the cpu backend passes the body's compiled program)."""
    consts, carry, xs = groups(args, num_consts, num_carry)
    ys = [np.empty((length, *t.shape), t.dtype) for t in body.out_types[num_carry:]]
    for step in range(length):
        i = length - 1 - step if reverse else step
        outs = run(*consts, *carry, *[x[i] for x in xs])
        carry = outs[:num_carry]
        for stack, y in zip(ys, outs[num_carry:]):
            stack[i] = y
    return [*carry, *ys]


scan_p = Primitive("scan", _scan_abstract, _scan_impl, multiple_results=True, linear=True)


def scan_params(body, num_consts, num_carry, length, reverse) -> Params:
    return Params(length=as_dim(length), reverse=bool(reverse), num_consts=num_consts,
                  num_carry=num_carry, body=body)


def bind_scan(consts, init, xs, body, length, reverse, body_consts=()):
    """``scan_p`` on the operands; ``body_consts`` are values the body captured, passed as
    its first consts."""
    return scan_p.bind(*body_consts, *consts, *init, *xs,
                       **scan_params(body, len(body_consts) + len(consts), len(init), length,
                                     reverse).as_dict())


# jvp ------------------------------------------------------------------------------------------
def _scan_jvp(primals, tangents, body, num_consts, num_carry, length, reverse):
    nz = [not is_zero(t) for t in tangents]
    const_nz, init_nz, xs_nz = groups(nz, num_consts, num_carry)
    n_ys = len(body.outvars) - num_carry

    def carry_out_nonzeros(carry_nz):
        return jvp_sub_ir(body, const_nz + carry_nz + xs_nz, carry_nz + [False] * n_ys)[2][
            :num_carry]

    carry_nz = carry_fixpoint(init_nz, carry_out_nonzeros)
    jbody, jconsts, out_nz = jvp_sub_ir(body, const_nz + carry_nz + xs_nz,
                                        carry_nz + [False] * n_ys)
    jbody = _primal_tangent_groups(jbody, len(jconsts), [num_consts, num_carry, len(xs_nz)],
                                   [sum(const_nz), sum(carry_nz), sum(xs_nz)],
                                   [num_carry, n_ys], [sum(carry_nz), sum(out_nz[num_carry:])])
    consts, init, xs = groups(primals, num_consts, num_carry)
    t_consts, t_init, t_xs = groups(tangents, num_consts, num_carry)
    carry_types = body.in_types[num_consts:num_consts + num_carry]
    init_tangents = [instantiate(t, tangent_aval(ty))
                     for t, ty, c in zip(t_init, carry_types, carry_nz) if c]
    outs = bind_scan([*consts, *select_by(t_consts, const_nz)],
                     [*init, *init_tangents], [*xs, *select_by(t_xs, xs_nz)],
                     jbody, length, reverse, jconsts)
    carry, t_carry, ys, t_ys = groups(outs, num_carry, sum(carry_nz), n_ys)
    tangent_out = iter([*t_carry, *t_ys])
    return [*carry, *ys], [next(tangent_out) if n else Zero(strong(t))
                           for n, t in zip(out_nz, _scan_out_types(body, num_carry, length))]


def _scan_out_types(body, num_carry, length) -> list:
    outs = body.out_types
    return [*outs[:num_carry], *[stacked_type(y, length) for y in outs[num_carry:]]]


def _primal_tangent_groups(jbody, n_lead, in_sizes, in_tangent_sizes, out_sizes,
                           out_tangent_sizes) -> ClosedIR:
    """The JVP body ``(lead..., primal groups..., tangent groups...) -> (primal groups...,
    tangent groups...)`` reordered to interleave each group with its tangents:
    ``(lead, consts, t_consts, carry, t_carry, xs, t_xs) -> (carry, t_carry, ys, t_ys)``."""
    def interleave(offset, sizes, tangent_sizes):
        primal_starts = np.cumsum([offset, *sizes])
        tangent_starts = np.cumsum([primal_starts[-1], *tangent_sizes])
        order = []
        for k in range(len(sizes)):
            order += range(primal_starts[k], primal_starts[k + 1])
            order += range(tangent_starts[k], tangent_starts[k + 1])
        return order

    return reorder(jbody, [*range(n_lead), *interleave(n_lead, in_sizes, in_tangent_sizes)],
                   interleave(0, out_sizes, out_tangent_sizes))


# partial evaluation ---------------------------------------------------------------------------
def _scan_partial_eval(eqn, unknowns):
    p = eqn.params
    body, num_consts, num_carry = p["body"], p["num_consts"], p["num_carry"]
    const_uk, init_uk, xs_uk = groups(unknowns, num_consts, num_carry)
    n_ys = len(body.outvars) - num_carry

    def carry_out_unknown(carry_uk):
        return partial_eval(body, const_uk + carry_uk + xs_uk)[3][:num_carry]

    carry_uk = carry_fixpoint(init_uk, carry_out_unknown)
    in_uk = const_uk + carry_uk + xs_uk
    known, linear, n_res, out_uk = partial_eval_sub_ir(body, in_uk, carry_uk + [False] * n_ys)
    split = _ResidualSplit(known.ir, n_res, num_consts, const_uk, carry_uk, xs_uk)
    consts, init, xs = groups(eqn.inputs, num_consts, num_carry)
    hoisted_eqns, hoisted = inline(split.hoisting_ir(), select_by(consts, const_uk,
                                                                  keep=False))
    known_eqn = _known_scan(eqn, split, consts, init, xs, const_uk, carry_uk, xs_uk, out_uk)
    stacked = known_eqn.outputs[len(known_eqn.outputs) - len(split.stacked):]
    linear_eqn = _linear_scan(eqn, linear, split, consts, init, xs, hoisted, stacked,
                              const_uk, carry_uk, xs_uk, out_uk)
    unknown_eqns = hoist_carry_free(linear_eqn)
    return ([*hoisted_eqns, *hoist_carry_free(known_eqn)], unknown_eqns,
            [v for e in unknown_eqns for v in e.outputs])


class _ResidualSplit:
    """Where each residual of a split scan body comes from, in the known body's terms:
    ``forwarded_consts``/``forwarded_xs`` (known body inputs passed straight to the linear
    scan, as their operand positions among the known consts/xs), ``hoisted`` (computed from
    known consts alone: once, before the loop) and ``stacked`` (per iteration: extra ys of the
    known scan)."""

    def __init__(self, known: IR, n_res, num_consts, const_uk, carry_uk, xs_uk):
        self.known = known
        n_known_consts = num_consts - sum(const_uk)
        n_known_carry = len(carry_uk) - sum(carry_uk)
        const_vars = known.invars[:n_known_consts]
        xs_vars = known.invars[n_known_consts + n_known_carry:]
        invariant = _loop_invariant(known, const_vars)
        self.residuals = list(known.outvars[len(known.outvars) - n_res:])
        self.const_vars = list(const_vars)
        self.forwarded_consts, self.forwarded_xs, self.hoisted, self.stacked = [], [], [], []
        for r in self.residuals:
            if r in const_vars:
                self.forwarded_consts.append(r)
            elif r in xs_vars:
                self.forwarded_xs.append(r)
            elif r in invariant:
                self.hoisted.append(r)
            else:
                self.stacked.append(r)
        self.xs_vars = list(xs_vars)
        self.n_known_outs = len(known.outvars) - n_res

    def hoisting_ir(self) -> IR:
        """``known consts -> hoisted residuals``."""
        return dce(IR((), self.const_vars, self.known.eqns, self.hoisted),
                   keep_effects=False)

    def known_body(self) -> ClosedIR:
        """The known body returning its carry and ys, then the stacked residuals."""
        k = self.known
        return ClosedIR(dce(IR((), k.invars, k.eqns,
                               [*k.outvars[:self.n_known_outs], *self.stacked])))


def _loop_invariant(ir: IR, const_vars) -> set:
    """The variables of a loop body computed from its consts (and literals) alone, by
    equations without effects (an effect must happen in every iteration)."""
    invariant = set(const_vars)
    for eqn in ir.eqns:
        if all(type(a) is not Var or a in invariant for a in eqn.inputs) and \
                not has_effect(eqn):
            invariant.update(eqn.outputs)
    return invariant


def _known_scan(eqn, split, consts, init, xs, const_uk, carry_uk, xs_uk, out_uk) -> Eqn:
    p = eqn.params
    num_carry = p["num_carry"]
    known_consts = select_by(consts, const_uk, keep=False)
    known_init = select_by(init, carry_uk, keep=False)
    outputs = [*select_by(eqn.outputs, out_uk, keep=False), *[None] * len(split.stacked)]
    params = scan_params(split.known_body(), len(known_consts), num_carry - sum(carry_uk),
                         p["length"], p["reverse"])
    return new_eqn(scan_p, [*known_consts, *known_init, *select_by(xs, xs_uk, keep=False)],
                   params, eqn.source, outputs)


def _linear_scan(eqn, linear, split, consts, init, xs, hoisted, stacked, const_uk, carry_uk,
                 xs_uk, out_uk) -> Eqn:
    """The linear scan: consts (forwarded consts, hoisted values, unknown consts), carry
    (unknown carries), xs (forwarded xs, stacked residuals, unknown xs)."""
    p = eqn.params
    known_consts = select_by(consts, const_uk, keep=False)
    known_xs = select_by(xs, xs_uk, keep=False)
    by_residual = dict(zip(split.residuals, linear.invars[:len(split.residuals)]))
    unknown_in = linear.invars[len(split.residuals):]
    uk_consts, uk_carry, uk_xs = groups(unknown_in, sum(const_uk), sum(carry_uk))
    body_in = [*[by_residual[r] for r in (*split.forwarded_consts, *split.hoisted)], *uk_consts,
               *uk_carry, *[by_residual[r] for r in (*split.forwarded_xs, *split.stacked)],
               *uk_xs]
    body = ClosedIR(IR((), body_in, linear.eqns, linear.outvars))
    const_ops = [*[known_consts[split.const_vars.index(r)] for r in split.forwarded_consts],
                 *hoisted, *select_by(consts, const_uk)]
    xs_ops = [*[known_xs[split.xs_vars.index(r)] for r in split.forwarded_xs], *stacked,
              *select_by(xs, xs_uk)]
    params = scan_params(body, len(const_ops), sum(carry_uk), p["length"], p["reverse"])
    return Eqn(scan_p, [*const_ops, *select_by(init, carry_uk), *xs_ops],
               select_by(eqn.outputs, out_uk), params, eqn.source)


# transpose ------------------------------------------------------------------------------------
def _scan_transpose(cts, *args, body, num_consts, num_carry, length, reverse):
    # Every carry is linear: one with a known initial value (a tangent instantiated as
    # zeros before the loop) starts at zero, so its cotangent is dropped (as JAX does).
    consts, init, xs = groups(args, num_consts, num_carry)
    const_lin = [is_undefined(c) for c in consts]
    xs_lin = [is_undefined(x) for x in xs]
    ct_carry, ct_ys = groups(cts, num_carry)
    ys_present = [not is_zero(c) for c in ct_ys]
    linear_mask = const_lin + [True] * num_carry + xs_lin
    tbody, tconsts = transpose_sub_ir(body, linear_mask, [True] * num_carry + ys_present)
    # tbody: (lead, res consts, res xs, ct carry, ct ys) -> (ct consts, ct carry, ct xs)
    n_lead, n_rc, n_rx = len(tconsts), num_consts - sum(const_lin), len(xs) - sum(xs_lin)
    n_lc = sum(const_lin)
    body_t = _accumulating_body(tbody, n_lead, n_rc, n_rx, n_lc, num_carry, sum(ys_present))
    acc_init = [zeros(strong(c.aval)) for c in consts if is_undefined(c)]
    carry_init = [instantiate(c, strong(v.aval)) for c, v in zip(ct_carry, init)]
    outs = bind_scan(select_by(consts, const_lin, keep=False), [*acc_init, *carry_init],
                     [*select_by(xs, xs_lin, keep=False), *select_by(ct_ys, ys_present)],
                     body_t, length, not reverse, tconsts)
    ct_consts, ct_init, ct_xs = groups(outs, n_lc, num_carry)
    ct_consts, ct_xs = iter(ct_consts), iter(ct_xs)
    return [*[next(ct_consts) if lin else None for lin in const_lin],
            *[ct if is_undefined(x) else None for ct, x in zip(ct_init, init)],
            *[next(ct_xs) if lin else None for lin in xs_lin]]


def _accumulating_body(tbody, n_lead, n_rc, n_rx, n_lc, num_carry, n_cty) -> ClosedIR:
    """The transposed body as a scan body: ``(lead, res consts, [acc, ct carry], [res xs,
    ct ys]) -> ([acc + ct consts, ct carry in], ct xs)``."""
    ir = tbody.ir
    lead, res_consts, res_xs, ct_carry, ct_ys = groups(ir.invars, n_lead, n_rc, n_rx,
                                                       num_carry)
    ct_consts, ct_carry_in, ct_xs = groups(ir.outvars, n_lc, num_carry)
    acc = [Var(strong(v.type)) for v in ct_consts]
    eqns = list(ir.eqns)
    summed = []
    for a, c in zip(acc, ct_consts):
        total = Var(a.type)
        eqns.append(Eqn(add_p, [a, c], [total], Params(), None))
        summed.append(total)
    return ClosedIR(IR((), [*lead, *res_consts, *acc, *ct_carry, *res_xs, *ct_ys], eqns,
                       [*summed, *ct_carry_in, *ct_xs]))


# vmap -----------------------------------------------------------------------------------------
def _scan_batch(args, dims, body, num_consts, num_carry, length, reverse):
    consts, init, xs = groups(args, num_consts, num_carry)
    const_dims, init_dims, xs_dims = groups(dims, num_consts, num_carry)
    x_slice_dims = [None if d is None else 0 for d in xs_dims]
    n_ys = len(body.outvars) - num_carry

    def carry_out_batched(carry_b):
        carry_dims = [0 if b else None for b in carry_b]
        return batch_sub_ir(body, const_dims + carry_dims + x_slice_dims,
                            carry_b + [False] * n_ys)[2][:num_carry]

    carry_b = carry_fixpoint([d is not None for d in init_dims], carry_out_batched)
    carry_dims = [0 if b else None for b in carry_b]
    bbody, bconsts, out_b = batch_sub_ir(body, const_dims + carry_dims + x_slice_dims,
                                         carry_b + [False] * n_ys)
    init = [batch_at_front(x, d, b) for x, d, b in zip(init, init_dims, carry_b)]
    xs = [x if d is None else move_axis(x, d, 1) for x, d in zip(xs, xs_dims)]
    outs = scan_p.bind(*bconsts, *consts, *init, *xs,
                       **scan_params(bbody, len(bconsts) + num_consts, num_carry, length,
                                     reverse).as_dict())
    return outs, [*carry_dims, *[1 if b else None for b in out_b[num_carry:]]]


# dce ------------------------------------------------------------------------------------------
def _scan_dce(eqn, used_outputs):
    p = eqn.params
    body, num_consts, num_carry = p["body"], p["num_consts"], p["num_carry"]
    used_carry, used_ys = groups(used_outputs, num_carry)

    def carry_inputs_read(keep_carry):
        used_in = dce_sub_ir(body, keep_carry + used_ys)[1]
        return used_in[num_consts:num_consts + num_carry]

    keep_carry = carry_fixpoint(list(used_carry), carry_inputs_read)
    pruned, used_in = dce_sub_ir(body, keep_carry + used_ys)
    used_consts, _, used_xs = groups(used_in, num_consts, num_carry)
    keep = used_consts + keep_carry + used_xs
    consts, init, xs = groups(eqn.inputs, num_consts, num_carry)
    inputs = [*select_by(consts, used_consts), *select_by(init, keep_carry),
              *select_by(xs, used_xs)]
    params = p.replace(body=keep_inputs(pruned, keep), num_consts=sum(used_consts),
                       num_carry=sum(keep_carry))
    return Eqn(scan_p, inputs, select_by(eqn.outputs, keep_carry + used_ys), params,
               eqn.source)


def _scan_cost(eqn, body_counts):
    """A scan runs its body ``length`` times."""
    return {name: n * eqn.params["length"] for name, n in body_counts[0].items()}


def _scan_reference(jnp, lax):
    def run_scan(*args, body, num_consts, num_carry, length, reverse, run):
        consts, carry, xs = (args[:num_consts], args[num_consts:num_consts + num_carry],
                             args[num_consts + num_carry:])
        step_fn = run(body)

        def step(c, x):
            outs = step_fn(*consts, *c, *x)
            return tuple(outs[:num_carry]), tuple(outs[num_carry:])
        final, ys = lax.scan(step, tuple(carry), tuple(xs), length=length, reverse=reverse)
        return [*final, *ys]
    return run_scan


scan_p.define(jvp=_scan_jvp, partial_eval=_scan_partial_eval, transpose=_scan_transpose,
              batch=_scan_batch, dce=_scan_dce, shard=partition.SCAN,
              tile=Unsupported("loop bodies stay tensor-level (they are not tiled today)"),
              cost=_scan_cost, reference=_scan_reference)
