"""vmap rows of the call primitives (``ptojax/ops/calls.py``): ``checkpoint``, ``custom_jvp_call``
and ``custom_vjp_call``.

A checkpointed body is batched like any IR. For custom_jvp/custom_vjp, unbatched operands stay
unbatched: the body and the user's rules are vmapped over the batched operands only, with
every output batched at 0, and the batched bwd's cotangent for an unbatched operand is summed
over the batch (the operand was shared by every example).
"""
from __future__ import annotations

from ptojax import lax
from ptojax.ir.core import ClosedIR, consts_as_args
from ptojax.autodiff import calls
from ptojax.trace import trace_flat
from ptojax.batching.vmap import (batch_rules, batched_type, current_axis_name,
                                    current_axis_size, move_axis, to_front, vmap_ir)


def _checkpoint_rule(args, dims, body, prevent_cse=True):
    batched, out_dims = vmap_ir(body, dims, current_axis_size(), current_axis_name())
    batched, consts = consts_as_args(batched)
    outs = calls.checkpoint_p.bind(*consts, *args, body=batched, prevent_cse=prevent_cse)
    return outs, out_dims


def _batched_body(body: ClosedIR, dims) -> tuple:
    """``body`` batched at ``dims`` (0 or None) with every output batched at 0: (const-free
    ClosedIR, the consts it now takes as leading operands)."""
    batched, out_dims = vmap_ir(body, dims, current_axis_size(), current_axis_name())

    def front(*args):
        from ptojax.eval.interpreter import eval_ir
        return [to_front(o, d) for o, d in zip(eval_ir(batched, args), out_dims)]

    return consts_as_args(trace_flat(front, batched.in_types, "vmap"))


def _batched_rule_fn(fn, group_dims):
    """``fn(*groups)`` (each group a flat list; a custom_jvp/custom_vjp rule) vectorized over
    this vmap's axis: ``group_dims[i]`` is None for a group passed as is, 0 for a group mapped
    at 0, or a list of 0/None per element. Every output is batched at 0."""
    from ptojax.batching.api import vmap
    size, name = current_axis_size(), current_axis_name()
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


def _custom_jvp_rule(args, dims, body, jvp, num_consts):
    args, dims = _front_args(args, dims)
    body, extra = _batched_body(body, dims)
    primal_dims, const_dims = dims[num_consts:], [None] * len(extra) + dims[:num_consts]
    outs = calls.custom_jvp_call_p.bind(
        *extra, *args, body=body,
        jvp=_batched_rule_fn(jvp, (const_dims, primal_dims, primal_dims)),
        num_consts=num_consts + len(extra))
    return outs, [0] * len(outs)


def _custom_vjp_rule(args, dims, body, fwd, bwd, num_consts, out_types):
    args, dims = _front_args(args, dims)
    body, extra = _batched_body(body, dims)
    primal_dims, const_dims = dims[num_consts:], [None] * len(extra) + dims[:num_consts]
    size = current_axis_size()
    outs = calls.custom_vjp_call_p.bind(
        *extra, *args, body=body, fwd=_batched_rule_fn(fwd, (const_dims, primal_dims)),
        bwd=_summing_bwd(_batched_rule_fn(bwd, (0, 0)), primal_dims),
        num_consts=num_consts + len(extra),
        out_types=tuple(batched_type(t, 0, size) for t in out_types))
    return outs, [0] * len(outs)


def _summing_bwd(batched_bwd, primal_dims):
    """The batched bwd gives one cotangent per example; an unbatched input gets their sum."""
    def bwd(residuals, cts):
        in_cts = batched_bwd(residuals, cts)
        return [ct if d is not None or ct is None else lax.reduce_sum(ct, (0,))
                for ct, d in zip(in_cts, primal_dims)]
    return bwd


batch_rules[calls.checkpoint_p] = _checkpoint_rule
batch_rules[calls.custom_jvp_call_p] = _custom_jvp_rule
batch_rules[calls.custom_vjp_call_p] = _custom_vjp_rule
