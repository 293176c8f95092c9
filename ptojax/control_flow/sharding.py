"""``pto.shard`` rows of the control-flow primitives: for now each runs whole on every device
(its operands are gathered to replicated values first and its results are replicated), which
is correct for any body. Partitioning the bodies themselves (a batch dimension split through
a scan's consts, carries and xs) is work for the sharding pass: the bodies are ordinary IRs,
and ``structure.py`` says how each equation's operands and results meet its sub-IRs' inputs
and outputs.
"""
from __future__ import annotations

from ptojax.trace import bind
from ptojax.transforms.shard import ShardRule, shard_rules
from ptojax.transforms.shard_propagate import replicated
from ptojax.transforms.shard_reshard import Local
from ptojax.control_flow.conditionals import cond_p
from ptojax.control_flow.scan_primitive import scan_p
from ptojax.control_flow.while_primitive import while_p


def _replicated_local(ctx, eqn, operands, targets) -> list:
    whole = [ctx.reshard(x, replicated(a)) for x, a in zip(operands, eqn.inputs)]
    outs = bind(eqn.prim, [x.value for x in whole], eqn.params)
    return [Local(o, replicated(v)) for o, v in zip(outs, eqn.outputs)]


for _prim in (cond_p, scan_p, while_p):
    shard_rules[_prim] = ShardRule(None, local=_replicated_local)
