"""Primitives that call a sub-IR, with every fact: ``checkpoint`` (rematerialized region),
``custom_jvp_call`` and ``custom_vjp_call`` (functions with user-defined derivatives) and
``custom_lin`` (the linear stand-in of a custom_vjp function inside a JVP, transposed by the
user's bwd).

Sub-IRs in params are closed and carry no consts: values a body closes over are passed as
leading operands, so every equation names all its inputs.

- checkpoint's partial eval keeps only the region's inputs and puts a recomputing copy of the
  region in the linear IR; its transpose transposes the body.
- custom_jvp's JVP calls the user's rule; custom_vjp's JVP emits the user's fwd plus a
  ``custom_lin`` equation whose transpose calls the user's bwd. Differentiating with respect to
  a value the function closes over is an error (as in JAX).
- vmap: unbatched operands stay unbatched; the body, jvp, fwd and bwd are vmapped (outputs
  forced to batch dim 0), and a batched bwd's cotangent for an unbatched operand is summed
  over the batch.
- pto.shard: a checkpoint body is partitioned as a sub-program; custom_jvp/custom_vjp bodies are
  inlined (their rules do not survive partitioning).
"""
from __future__ import annotations

from ptojax import source_info
from ptojax.batching.api import vmap
from ptojax.batching.vmap import batched_type, vmap_ir
from ptojax.errors import CustomRuleError, GradError
from ptojax.eval import axis_env
from ptojax.eval.interpreter import eval_ir
from ptojax.ir.core import IR, ClosedIR, Eqn, Var, consts_as_args
from ptojax.ops import sharding_rules as sr
from ptojax.ops.broadcast import instantiate, reduce_sum, to_front
from ptojax.ops.shape import move_axis
from ptojax.ops.tangents import Zero, is_undefined, is_zero
from ptojax.optimize import dce
from ptojax.autodiff.jvp import jvp_ir
from ptojax.autodiff.partial_eval import partial_eval
from ptojax.autodiff.transpose import transpose_ir
from ptojax.trace import Primitive, Unsupported, trace_flat

BODY_NOT_TILED = Unsupported("the called body stays tensor-level (its equations are not tiled)")


def _call_abstract(*in_types, body, **_):
    return body.out_types


def _call_impl(*args, body, **_):
    return [getattr(o, "_value", o) for o in eval_ir(body, args)]


def _call_cost(eqn, body_counts):
    """A call costs its body."""
    return body_counts[0]


def _call_reference(jnp, lax):
    def run_call(*args, body, run, **_):
        return run(body)(*args)
    return run_call


def _call_primitive(name, linear=False):
    # its body may be inlined by executors (never merged by CSE)
    return Primitive(name, _call_abstract, _call_impl, multiple_results=True, call_like=True,
                     linear=linear)


# checkpoint: body evaluated as is; autodiff recomputes it in the backward pass instead of
# saving its intermediates (but those its policy saves). params: body, prevent_cse=True,
# policy=None
checkpoint_p = _call_primitive("checkpoint", linear=True)   # transposed when its body is

# custom_jvp_call: params body, jvp (flat rule: (primals, tangents) -> outs + tangent outs),
# num_consts
custom_jvp_call_p = _call_primitive("custom_jvp_call")

# custom_vjp_call: params body, fwd (flat: args -> outs + residuals), bwd (flat: residuals +
# cts -> input cts), num_consts, out_types
custom_vjp_call_p = _call_primitive("custom_vjp_call")


def _custom_lin_abstract(*in_types, num_res, bwd, out_types, **_):
    return list(out_types)


def _custom_lin_impl(*args, **params):
    raise GradError("forward-mode differentiation (jvp/jacfwd) of a custom_vjp "
                           "function is not supported: it only defines reverse mode. Use "
                           "custom_jvp, or reverse mode (grad/vjp/jacrev).")


# custom_lin(residuals..., tangents...): linear in the tangents; transposed by calling bwd.
custom_lin_p = Primitive("custom_lin", _custom_lin_abstract, _custom_lin_impl,
                         multiple_results=True, linear=True)


# checkpoint ------------------------------------------------------------------------------------
def policy_param(policy) -> dict:
    """The ``policy`` param of a checkpoint equation: absent for the default (save nothing)."""
    return {} if policy is None else {"policy": policy}


def _checkpoint_jvp(primals, tangents, body, prevent_cse=True, policy=None):
    nonzeros = [not is_zero(t) for t in tangents]
    jbody, out_nz = jvp_ir(body, nonzeros)
    jbody, consts = consts_as_args(jbody)
    outs = checkpoint_p.bind(*consts, *primals, *[t for t in tangents if not is_zero(t)],
                             body=jbody, prevent_cse=prevent_cse, **policy_param(policy))
    n = len(body.ir.outvars)
    touts = iter(outs[n:])
    return outs[:n], [next(touts) if nz else Zero(v.type)
                      for v, nz in zip(body.ir.outvars, out_nz)]


def _checkpoint_partial_eval(eqn, unknown_inputs):
    """Split a checkpointed region (whose body has no consts): the known side computes the
    known outputs, keeping only the intermediates its ``policy`` saves (none by default);
    the linear side re-runs the rest of the known body and then the linear body, so the
    backward pass recomputes instead of reading residuals."""
    known_body, linear_body, n_res, out_unknown = partial_eval(eqn.params["body"],
                                                               unknown_inputs)
    known = known_body.ir
    n_known_outs = len(known.outvars) - n_res
    policy = eqn.params.as_dict().get("policy")
    saved = _saved_intermediates(policy, known, linear_body)
    kept = [e for e in known.eqns if not any(v in saved for v in e.outputs)]
    forward = dce(IR((), known.invars, known.eqns, [*known.outvars[:n_known_outs], *saved]))
    recompute = dce(IR((), [*known.invars, *saved, *linear_body.invars[n_res:]],
                       [*kept, *linear_body.eqns], linear_body.outvars))
    known_in = [a for a, u in zip(eqn.inputs, unknown_inputs) if not u]
    unknown_in = [a for a, u in zip(eqn.inputs, unknown_inputs) if u]
    known_out = [v for v, u in zip(eqn.outputs, out_unknown) if not u]
    unknown_out = [v for v, u in zip(eqn.outputs, out_unknown) if u]
    saved_out = [Var(v.type) for v in saved]
    known_eqn = Eqn(checkpoint_p, known_in, [*known_out, *saved_out],
                    eqn.params.replace(body=ClosedIR(forward)), eqn.source)
    unknown_eqn = Eqn(checkpoint_p, [*known_in, *saved_out, *unknown_in], unknown_out,
                      eqn.params.replace(body=ClosedIR(recompute)), eqn.source)
    return [known_eqn], [unknown_eqn], unknown_out


def _saved_intermediates(policy, known, linear_body) -> list:
    """The outputs of the known equations ``policy`` saves that recomputing the linear side
    would otherwise need."""
    if policy is None:
        return []
    chosen = [v for e in known.eqns
              if policy(e.prim, *[a.type for a in e.inputs], **e.params.as_dict())
              for v in e.outputs]
    if not chosen:
        return []
    chosen_set = set(chosen)
    kept = [e for e in known.eqns if not any(v in chosen_set for v in e.outputs)]
    recompute = dce(IR((), [*known.invars, *chosen], [*kept, *linear_body.eqns],
                       linear_body.outvars))
    read = {a for e in recompute.eqns for a in e.inputs if type(a) is Var}
    read.update(v for v in recompute.outvars if type(v) is Var)
    return [v for v in chosen if v in read]


def _checkpoint_transpose(cts, *args, body, prevent_cse=True, policy=None):
    mask = [is_undefined(a) for a in args]
    tbody, nonzeros = transpose_ir(body.ir, mask, body.consts)
    tbody, consts = consts_as_args(tbody)
    cts = [instantiate(c, v.type) for c, v in zip(cts, body.ir.outvars)]
    outs = iter(checkpoint_p.bind(*consts, *[a for a in args if not is_undefined(a)],
                                  *cts, body=tbody, prevent_cse=prevent_cse,
                                  **policy_param(policy)))
    linear_cts = [next(outs) if nz else None for nz in nonzeros]
    it = iter(linear_cts)
    return [next(it) if m else None for m in mask]


def _checkpoint_batch(args, dims, body, prevent_cse=True, policy=None):
    batched, out_dims = vmap_ir(body, dims, axis_env.batch_axis_size(),
                                axis_env.batch_axis_name())
    batched, consts = consts_as_args(batched)
    outs = checkpoint_p.bind(*consts, *args, body=batched, prevent_cse=prevent_cse,
                             **policy_param(policy))
    return outs, out_dims


def _whole_partials(ctx, operands):
    return [ctx.reshard(x, x.dims) if x.partial else x for x in operands]


def _checkpoint_local(ctx, eqn, operands, targets):
    """The body partitioned as a sub-program: still a checkpoint per device."""
    operands = _whole_partials(ctx, operands)
    body, out_dims = ctx.partition_body(eqn.params["body"], operands)
    body, consts = consts_as_args(body)
    outs = checkpoint_p.bind(*consts, *[x.value for x in operands],
                             **eqn.params.replace(body=body).as_dict())
    return [sr.Local(o, d) for o, d in zip(outs, out_dims)]


checkpoint_p.define(
    jvp=_checkpoint_jvp, partial_eval=_checkpoint_partial_eval,
    transpose=_checkpoint_transpose, batch=_checkpoint_batch,
    shard=sr.ShardRule(None, local=_checkpoint_local), tile=BODY_NOT_TILED,
    cost=_call_cost, reference=_call_reference)


# custom_jvp / custom_vjp -----------------------------------------------------------------------
def _require_no_closure_tangents(kind, tangents, num_consts):
    """A custom rule gives derivatives for the function's arguments only (as in JAX)."""
    if any(not is_zero(t) for t in tangents[:num_consts]):
        raise CustomRuleError(f"a {kind} function is differentiated with respect to a value "
                              f"it closes over (or takes as a nondiff argument), but its "
                              f"custom rule only gives derivatives for its differentiable "
                              f"arguments; pass that value as one of them instead",
                              source_info.user_frame())


def _custom_jvp_jvp(primals, tangents, body, jvp, num_consts):
    _require_no_closure_tangents("custom_jvp", tangents, num_consts)
    args = primals[num_consts:]
    tans = [instantiate(t) for t in tangents[num_consts:]]
    result = jvp(primals[:num_consts], args, tans)
    n = len(body.ir.outvars)
    return result[:n], result[n:]


def _custom_vjp_jvp(primals, tangents, body, fwd, bwd, num_consts, out_types):
    _require_no_closure_tangents("custom_vjp", tangents, num_consts)
    result = fwd(primals[:num_consts], primals[num_consts:])
    n = len(out_types)
    outs, residuals = result[:n], result[n:]
    tans = [instantiate(t) for t in tangents[num_consts:]]
    touts = custom_lin_p.bind(*residuals, *tans, num_res=len(residuals), bwd=bwd,
                              out_types=tuple(t.strip_weak() for t in out_types))
    return outs, touts


def _batched_body(body: ClosedIR, dims) -> tuple:
    """``body`` batched at ``dims`` (0 or None) with every output batched at 0: (const-free
    ClosedIR, the consts it now takes as leading operands)."""
    batched, out_dims = vmap_ir(body, dims, axis_env.batch_axis_size(),
                                axis_env.batch_axis_name())

    def front(*args):
        return [to_front(o, d) for o, d in zip(eval_ir(batched, args), out_dims)]

    return consts_as_args(trace_flat(front, batched.in_types, "vmap"))


def _batched_rule_fn(fn, group_dims):
    """``fn(*groups)`` (each group a flat list; a custom_jvp/custom_vjp rule) vectorized over
    this vmap's axis: ``group_dims[i]`` is None for a group passed as is, 0 for a group mapped
    at 0, or a list of 0/None per element. Every output is batched at 0."""
    size, name = axis_env.batch_axis_size(), axis_env.batch_axis_name()
    mapped = [i for i, g in enumerate(group_dims) if g is not None]

    def batched(*groups):
        def per_example(*mapped_groups):
            full = list(groups)
            for i, g in zip(mapped, mapped_groups):
                full[i] = g
            return fn(*full)
        return vmap(per_example, in_axes=tuple(group_dims[i] for i in mapped),
                    axis_name=name, axis_size=size)(*[list(groups[i]) for i in mapped])
    return batched


def _front_args(args, dims):
    """Batched operands moved to 0, unbatched ones left alone: (args, dims of 0/None)."""
    return ([a if d is None else move_axis(a, d, 0) for a, d in zip(args, dims)],
            [None if d is None else 0 for d in dims])


def _custom_jvp_batch(args, dims, body, jvp, num_consts):
    args, dims = _front_args(args, dims)
    body, extra = _batched_body(body, dims)
    primal_dims, const_dims = dims[num_consts:], [None] * len(extra) + dims[:num_consts]
    outs = custom_jvp_call_p.bind(
        *extra, *args, body=body,
        jvp=_batched_rule_fn(jvp, (const_dims, primal_dims, primal_dims)),
        num_consts=num_consts + len(extra))
    return outs, [0] * len(outs)


def _custom_vjp_batch(args, dims, body, fwd, bwd, num_consts, out_types):
    args, dims = _front_args(args, dims)
    body, extra = _batched_body(body, dims)
    primal_dims, const_dims = dims[num_consts:], [None] * len(extra) + dims[:num_consts]
    size = axis_env.batch_axis_size()
    outs = custom_vjp_call_p.bind(
        *extra, *args, body=body, fwd=_batched_rule_fn(fwd, (const_dims, primal_dims)),
        bwd=_summing_bwd(_batched_rule_fn(bwd, (0, 0)), primal_dims),
        num_consts=num_consts + len(extra),
        out_types=tuple(batched_type(t, 0, size) for t in out_types))
    return outs, [0] * len(outs)


def _summing_bwd(batched_bwd, primal_dims):
    """The batched bwd gives one cotangent per example; an unbatched input gets their sum."""
    def bwd(residuals, cts):
        in_cts = batched_bwd(residuals, cts)
        return [ct if d is not None or ct is None else reduce_sum(ct, (0,))
                for ct, d in zip(in_cts, primal_dims)]
    return bwd


def _inline_local(ctx, eqn, operands, targets):
    """Per device, differentiation goes through the body's own rules: inline it."""
    return ctx.inline(eqn.params["body"], operands)


custom_jvp_call_p.define(
    jvp=_custom_jvp_jvp, batch=_custom_jvp_batch,
    shard=sr.ShardRule(None, local=_inline_local), tile=BODY_NOT_TILED, cost=_call_cost,
    reference=_call_reference)
custom_vjp_call_p.define(
    jvp=_custom_vjp_jvp, batch=_custom_vjp_batch,
    shard=sr.ShardRule(None, local=_inline_local), tile=BODY_NOT_TILED, cost=_call_cost,
    reference=_call_reference)


# custom_lin ------------------------------------------------------------------------------------
def _custom_lin_transpose(cts, *args, num_res, bwd, out_types):
    cts = [instantiate(c, t) for c, t in zip(cts, out_types)]
    return [None] * num_res + list(bwd(args[:num_res], cts))


ONLY_INSIDE_A_JVP = "it only exists inside a JVP being transposed"
custom_lin_p.define(
    jvp=Unsupported("a custom_vjp function defines reverse mode only"),
    transpose=_custom_lin_transpose, batch=Unsupported(ONLY_INSIDE_A_JVP),
    shard=Unsupported(ONLY_INSIDE_A_JVP), tile=Unsupported(ONLY_INSIDE_A_JVP),
    cost=lambda eqn: 0, reference=Unsupported(ONLY_INSIDE_A_JVP))
