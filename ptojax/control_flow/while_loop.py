"""``while``: the primitive under ``pto.lax.while_loop`` (and ``fori_loop`` with traced
bounds).

    carry... = while[cond_nconsts=a body_nconsts=b max_steps=None cond=... body=...]
               cond_consts... body_consts... init...

``cond`` is a const-free ClosedIR ``(cond_consts..., carry...) -> bool[]``, ``body`` one of
``(body_consts..., carry...) -> carry...``. With ``max_steps`` (beyond JAX) the loop stops
after at most that many iterations, which makes its trip count bounded: reverse mode then
runs it as a masked scan of ``max_steps`` iterations.

Rules (all registered here):

- jvp: a while over (carry, carry tangents); which carries get tangents is a fixpoint over
  the body. The predicate reads primals only, so the trip count is unchanged.
- partial eval: with ``max_steps``, the loop is rewritten as ``scan`` of ``max_steps``
  iterations whose body computes the predicate and keeps the old carry once it is false
  (``select``), and that is split by the scan rule. Without, reverse mode is an error that
  suggests ``fori_loop``/``scan``/``max_steps`` (the number of residuals is unknown).
- vmap: an unbatched predicate keeps one loop for all lanes. A batched predicate (lanes
  stop at different iterations) batches every carry; the loop runs while any lane runs and
  each iteration keeps the old carry of finished lanes (``select`` per lane).
- dce: a carry leaves when its final value is unused and neither the predicate nor a kept
  carry reads it; consts nothing reads leave too.
"""
from __future__ import annotations

from ptojax import dtypes
from ptojax.errors import ControlFlowError, UnsupportedError
from ptojax.ir.core import IR, ClosedIR, Eqn, Var, consts_as_args
from ptojax.ops.checks import fmt_types
from ptojax.eval.interpreter import eval_ir
from ptojax.trace import Primitive, Unsupported, trace_flat
from ptojax.ops.broadcast import broadcast_in_dim, instantiate, to_front
from ptojax.ops.logic import select
from ptojax.ops.reductions import reduce_or
from ptojax.ops.tangents import Zero, is_zero, tangent_aval
from ptojax.autodiff.partial_eval import partial_eval
from ptojax.batching.vmap import vmap_ir
from ptojax.control_flow import partition
from ptojax.eval import axis_env
from ptojax.control_flow.common import (as_index, carry_fixpoint, compiled, groups, inline,
                                        keep_inputs, reorder, same_shape_dtype, select_by,
                                        strong)
from ptojax.control_flow.scan import bind_scan
from ptojax.control_flow.sub_ir import batch_at_front, batch_sub_ir, dce_sub_ir, jvp_sub_ir


# the primitive --------------------------------------------------------------------------------
def _while_abstract(*args, cond, body, cond_nconsts, body_nconsts, max_steps):
    cond_consts, body_consts, init = groups(args, cond_nconsts, body_nconsts)
    for name, ir, expected in (("cond", cond, [*cond_consts, *init]),
                               ("body", body, [*body_consts, *init])):
        ins = ir.in_types
        if len(ins) != len(expected) or not all(map(same_shape_dtype, ins, expected)):
            raise ControlFlowError(f"while: {name} takes ({fmt_types(ins)}) but the "
                                   f"operands give ({fmt_types(expected)})")
    pred = cond.out_types
    if len(pred) != 1 or pred[0].shape != () or not dtypes.is_bool(pred[0].dtype):
        raise ControlFlowError(f"while: cond must return one bool[], got ({fmt_types(pred)})")
    outs = body.out_types
    if len(outs) != len(init) or not all(map(same_shape_dtype, outs, init)):
        raise ControlFlowError(f"while: body returns ({fmt_types(outs)}) but the carry is "
                               f"({fmt_types(init)})")
    # the body's weak type, as JAX's while_loop (whose result types are the body's: a weak
    # carry becomes strong when the body makes it so, a strong one weak when the body does)
    return [t.update(weak_type=o.weak_type) for t, o in zip(init, outs)]


def _while_impl(*args, cond, body, cond_nconsts, body_nconsts, max_steps):
    return run_while(compiled(cond), compiled(body), args, cond_nconsts, body_nconsts,
                     max_steps)


def run_while(test, step, args, cond_nconsts, body_nconsts, max_steps):
    """The while loop over ``args`` with the predicate ``test`` and the body ``step`` (the
    numpy executor here; the cpu backend passes the body's compiled program)."""
    cond_consts, body_consts, carry = groups(args, cond_nconsts, body_nconsts)
    steps = 0
    while (max_steps is None or steps < max_steps) and as_index(test(*cond_consts, *carry)[0]):
        carry = step(*body_consts, *carry)
        steps += 1
    return carry


while_p = Primitive("while", _while_abstract, _while_impl, multiple_results=True)


def bind_while(cond_consts, body_consts, init, cond, body, max_steps):
    return while_p.bind(*cond_consts, *body_consts, *init, cond_nconsts=len(cond_consts),
                        body_nconsts=len(body_consts), max_steps=max_steps, cond=cond,
                        body=body)


# jvp ------------------------------------------------------------------------------------------
def _while_jvp(primals, tangents, cond, body, cond_nconsts, body_nconsts, max_steps):
    cond_consts, body_consts, init = groups(primals, cond_nconsts, body_nconsts)
    _, t_consts, t_init = groups(tangents, cond_nconsts, body_nconsts)
    const_nz = [not is_zero(t) for t in t_consts]
    n = len(init)

    def carry_out_nonzeros(carry_nz):
        return jvp_sub_ir(body, const_nz + carry_nz, carry_nz)[2]

    carry_nz = carry_fixpoint([not is_zero(t) for t in t_init], carry_out_nonzeros)
    if not any(carry_nz):
        outs = bind_while(cond_consts, body_consts, init, cond, body, max_steps)
        return outs, [Zero(tangent_aval(o.aval)) for o in outs]
    jbody, jconsts, _ = jvp_sub_ir(body, const_nz + carry_nz, carry_nz)
    n_tc, n_t = sum(const_nz), sum(carry_nz)
    m = len(jconsts) + body_nconsts
    jbody = reorder(jbody, [*range(m), *range(m + n, m + n + n_tc), *range(m, m + n),
                            *range(m + n + n_tc, m + n + n_tc + n_t)], range(n + n_t))
    t_carry_types = [tangent_aval(t) for t, nz in zip(body.in_types[body_nconsts:], carry_nz)
                     if nz]
    jcond = _with_trailing_inputs(cond, t_carry_types)
    init_tangents = [instantiate(t, ty) for t, ty in zip(select_by(t_init, carry_nz),
                                                        t_carry_types)]
    outs = bind_while(cond_consts, [*jconsts, *body_consts, *select_by(t_consts, const_nz)],
                      [*init, *init_tangents], jcond, jbody, max_steps)
    t_outs = iter(outs[n:])
    return outs[:n], [next(t_outs) if nz else Zero(tangent_aval(o.aval))
                      for o, nz in zip(outs[:n], carry_nz)]


def _with_trailing_inputs(closed: ClosedIR, types) -> ClosedIR:
    ir = closed.ir
    return ClosedIR(IR((), [*ir.invars, *[Var(t) for t in types]], ir.eqns, ir.outvars))


# partial evaluation ---------------------------------------------------------------------------
def _while_partial_eval(eqn, unknowns):
    p = eqn.params
    if p["max_steps"] is None:
        raise UnsupportedError(
            "reverse-mode differentiation (grad, vjp, linearize) of a while_loop is not "
            "supported: its trip count is only known when it runs, so there is no bound on "
            "the values the backward pass needs. Use fori_loop with static bounds, or scan; "
            "or bound the loop: while_loop(cond_fun, body_fun, init, max_steps=N) runs at "
            "most N iterations and differentiates as a masked scan of N steps", eqn.source)
    lowered = masked_scan(p["cond"], p["body"], p["cond_nconsts"], p["body_nconsts"],
                          p["max_steps"], [a.type for a in eqn.inputs])
    known, linear, n_res, out_unknown = partial_eval(lowered, unknowns)
    residuals = [Var(v.type) for v in known.ir.outvars[len(known.ir.outvars) - n_res:]]
    known_eqns, _ = inline(known.ir, select_by(eqn.inputs, unknowns, keep=False),
                           [*select_by(eqn.outputs, out_unknown, keep=False), *residuals],
                           eqn.source)
    unknown_out = select_by(eqn.outputs, out_unknown)
    unknown_eqns, _ = inline(linear, [*residuals, *select_by(eqn.inputs, unknowns)],
                             unknown_out, eqn.source)
    return known_eqns, unknown_eqns, [v for e in unknown_eqns for v in e.outputs]


def masked_scan(cond, body, cond_nconsts, body_nconsts, max_steps, in_types) -> ClosedIR:
    """The while loop as ``scan`` of ``max_steps`` iterations that each evaluate the
    predicate and keep the old carry where it is false (so later iterations keep it too: the
    predicate reads nothing else)."""
    def step(*args):
        cond_consts, body_consts, carry = groups(args, cond_nconsts, body_nconsts)
        (pred,) = eval_ir(cond, [*cond_consts, *carry])
        new = eval_ir(body, [*body_consts, *carry])
        return [select(pred, n, c) for n, c in zip(new, carry)]

    types = [*in_types[:cond_nconsts + body_nconsts],
             *[strong(t) for t in in_types[cond_nconsts + body_nconsts:]]]
    step_ir, step_consts = consts_as_args(trace_flat(step, types, "while"))

    def loop(*args):
        consts, init = groups(args, cond_nconsts + body_nconsts)
        return bind_scan(consts, init, [], step_ir, max_steps, False, step_consts)

    return trace_flat(loop, list(in_types), "while")


# vmap -----------------------------------------------------------------------------------------
def _while_batch(args, dims, cond, body, cond_nconsts, body_nconsts, max_steps):
    cond_consts, body_consts, init = groups(args, cond_nconsts, body_nconsts)
    cond_dims, body_dims, init_dims = groups(dims, cond_nconsts, body_nconsts)
    n = len(init)

    def carry_dims(batched):
        return [0 if b else None for b in batched]

    def pred_batched(batched):
        return batch_sub_ir(cond, cond_dims + carry_dims(batched), [False])[2][0]

    def carry_out_batched(batched):
        if pred_batched(batched):
            return [True] * n
        return batch_sub_ir(body, body_dims + carry_dims(batched), batched)[2]

    batched = carry_fixpoint([d is not None for d in init_dims], carry_out_batched)
    init = [batch_at_front(x, d, b) for x, d, b in zip(init, init_dims, batched)]
    if not pred_batched(batched):
        bcond, cconsts, _ = batch_sub_ir(cond, cond_dims + carry_dims(batched), [False])
        bbody, bconsts, _ = batch_sub_ir(body, body_dims + carry_dims(batched), batched)
        outs = bind_while([*cconsts, *cond_consts], [*bconsts, *body_consts], init, bcond,
                          bbody, max_steps)
        return outs, carry_dims(batched)
    return _lanes_loop(cond_consts, body_consts, init, cond_dims, body_dims, cond, body,
                       max_steps), [0] * n


def _lanes_loop(cond_consts, body_consts, init, cond_dims, body_dims, cond, body, max_steps):
    """A while loop whose lanes stop at different iterations (every carry batched at 0):
    it runs while any lane runs; finished lanes keep their carry."""
    size, name = axis_env.batch_axis_size(), axis_env.batch_axis_name()
    n_cc, n = len(cond_consts), len(init)
    lane_pred, pred_dims = vmap_ir(cond, cond_dims + [0] * n, size, name)
    lane_step, step_dims = vmap_ir(body, body_dims + [0] * n, size, name)

    def running(cc, carry):
        (pred,) = eval_ir(lane_pred, [*cc, *carry])
        return to_front(pred, pred_dims[0])

    def any_running(*args):
        cc, carry = groups(args, n_cc)
        return [reduce_or(running(cc, carry), (0,))]

    def masked_step(*args):
        cc, bc, carry = groups(args, n_cc, len(body_consts))
        live = running(cc, carry)
        new = [to_front(o, d) for o, d in zip(eval_ir(lane_step, [*bc, *carry]), step_dims)]
        return [select(broadcast_in_dim(live, c.shape, (0,)), x, c)
                for x, c in zip(new, carry)]

    cond_types = [x.aval for x in (*cond_consts, *init)]
    body_types = [x.aval for x in (*cond_consts, *body_consts, *init)]
    mcond, mcond_consts = consts_as_args(trace_flat(any_running, cond_types, "vmap"))
    mbody, mbody_consts = consts_as_args(trace_flat(masked_step, body_types, "vmap"))
    return bind_while([*mcond_consts, *cond_consts],
                      [*mbody_consts, *cond_consts, *body_consts], init, mcond, mbody,
                      max_steps)


# dce ------------------------------------------------------------------------------------------
def _while_dce(eqn, used_outputs):
    p = eqn.params
    cond, cond_reads = dce_sub_ir(p["cond"], [True])
    body, n_cc, n_bc = p["body"], p["cond_nconsts"], p["body_nconsts"]

    def carry_inputs_read(keep):
        return dce_sub_ir(body, keep)[1][n_bc:]

    keep = carry_fixpoint([u or r for u, r in zip(used_outputs, cond_reads[n_cc:])],
                           carry_inputs_read)
    pruned_body, body_reads = dce_sub_ir(body, keep)
    keep_cc, keep_bc = cond_reads[:n_cc], body_reads[:n_bc]
    cond_consts, body_consts, init = groups(eqn.inputs, n_cc, n_bc)
    params = p.replace(cond=keep_inputs(cond, keep_cc + keep),
                       body=keep_inputs(pruned_body, keep_bc + keep),
                       cond_nconsts=sum(keep_cc), body_nconsts=sum(keep_bc))
    inputs = [*select_by(cond_consts, keep_cc), *select_by(body_consts, keep_bc),
              *select_by(init, keep)]
    return Eqn(while_p, inputs, select_by(eqn.outputs, keep), params, eqn.source)


def _while_cost(eqn, body_counts):
    """The trip count is unknown: one iteration of the predicate and the body."""
    total = dict(body_counts[0])
    for name, n in body_counts[1].items():
        total[name] = total.get(name, 0) + n
    return total


def _while_reference(jnp, lax):
    def run_while(*args, cond, body, cond_nconsts, body_nconsts, max_steps, run):
        cond_consts = args[:cond_nconsts]
        body_consts = args[cond_nconsts:cond_nconsts + body_nconsts]
        test, step = run(cond), run(body)

        def keep_going(state):
            steps, carry = state
            running = test(*cond_consts, *carry)[0]
            return running if max_steps is None else running & (steps < max_steps)

        def advance(state):
            steps, carry = state
            return steps + 1, tuple(step(*body_consts, *carry))
        _, final = lax.while_loop(keep_going, advance,
                                  (0, tuple(args[cond_nconsts + body_nconsts:])))
        return list(final)
    return run_while


while_p.define(jvp=_while_jvp, partial_eval=_while_partial_eval, batch=_while_batch,
               dce=_while_dce, shard=partition.WHILE,
               tile=Unsupported("loop bodies stay tensor-level (they are not tiled today)"),
               cost=_while_cost, reference=_while_reference)
