"""The ``bucket`` facts of cond, while and scan (see ``ops/bucketing.py``): their sub-IRs are
rewritten at the bucket and take the call's sizes as extra leading constants; a scan over a
symbolic length runs the bucket's number of steps and leaves the carry as it is in the
steps past the true length."""
from __future__ import annotations

from ptojax import dtypes
from ptojax.ir.symbolic import is_symbolic
from ptojax.ir.types import TensorType
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.logic import lt, select
from ptojax.ops.slicing import iota
from ptojax.control_flow.cond import cond_p
from ptojax.control_flow.scan import scan_p
from ptojax.control_flow.while_loop import while_p


def _scan(ctx, eqn, *args):
    p = eqn.params
    nc, nk, body = p["num_consts"], p["num_carry"], p["body"]
    counted = is_symbolic(p["length"])
    in_types = [ctx.padded_type(v.type) for v in body.ir.invars]

    def step(inner, *a):
        outs = inner.evaluate(body, a[:len(in_types)])
        if not counted:
            return outs
        keep = lt(a[-1], inner.valid(p["length"]))   # a step within the true length
        carry = [select(broadcast_in_dim(keep, new.shape, ()), new, old)
                 for new, old in zip(outs[:nk], a[nc:nc + nk])]
        return [*carry, *outs[nk:]]
    steps = ctx.padded(p["length"])
    extra = [TensorType((), dtypes.int32)] if counted else []
    xs = [*args[nc + nk:], *([iota(dtypes.int32, steps)] if counted else [])]
    return scan_p.bind(*ctx.size_args, *args[:nc + nk], *xs,
                       body=ctx.trace(step, in_types + extra),
                       num_consts=nc + len(ctx.size_args), num_carry=nk, length=steps,
                       reverse=p["reverse"])


def _while(ctx, eqn, *args):
    p = eqn.params
    nc, nb, k = p["cond_nconsts"], p["body_nconsts"], len(ctx.size_args)
    return while_p.bind(*ctx.size_args, *args[:nc], *ctx.size_args, *args[nc:],
                        cond=ctx.sub_ir(p["cond"]), body=ctx.sub_ir(p["body"]),
                        cond_nconsts=nc + k, body_nconsts=nb + k, max_steps=p["max_steps"])


def _cond(ctx, eqn, index, *operands):
    return cond_p.bind(index, *ctx.size_args, *operands,
                       branches=tuple(ctx.sub_ir(b) for b in eqn.params["branches"]))


scan_p.define(bucket=_scan)
while_p.define(bucket=_while)
cond_p.define(bucket=_cond)
