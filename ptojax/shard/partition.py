"""Phase 2 of ``pto.shard``: emit the per-device (SPMD) program of a global IR.

With every value's target split chosen (``shard_propagate.py``), the global equations are
evaluated in order on ``Local`` values (block + split + pending partial sum) while a new trace
records the per-device program. For each equation:

1. its factors take the splits of its results' targets first, then of its operands' actual
   splits (``assign_factors``);
2. each operand is resharded to the split the factors imply (``reshard``: psum, psum_scatter,
   all_to_all, all_gather, or a local slice); a pending partial sum stays pending when the op
   is linear in that operand and does not use those mesh axes itself;
3. the equation is emitted on the local blocks (params holding shapes are localized); its
   split reduce factors make the result a partial sum (``sum``) or are combined at once
   (``pmax``/``pmin``). Some primitives have special local forms (the ``local`` of their
   shard fact), written against this module's ``ShardContext``.

At the end each output is resharded to its ``out_specs`` (partial sums resolved). The result
is an ordinary IR with local shapes and explicit collectives.
"""
from __future__ import annotations

from typing import NamedTuple

from ptojax import source_info
from ptojax.errors import UnsupportedError
from ptojax.ir.core import ClosedIR, Literal, Var
from ptojax.ops.sharding_rules import Local, project
from ptojax.optimize import dce
from ptojax.shard.collectives import pmax_p, pmin_p, ppermute_p
from ptojax.shard.propagate import Propagation, assign_factors, replicated
from ptojax.shard.reshard import device_index, reshard, reshard_cost
from ptojax.shard.runtime.arrays import local_aval
from ptojax.sharding import local_shape
from ptojax.trace import Unsupported, bind, trace_flat


class Plan(NamedTuple):
    rule: object      # OpRule
    axes: list        # mesh axes per factor
    operands: list    # operands resharded as the factors imply


def _is_zero_literal(x: Local) -> bool:
    return type(x.value) is Literal and x.value.value == 0


class ShardContext:
    """What the rules need while emitting one (sub-)program: the mesh, the values computed so
    far and which global equation produced each global Var."""

    def __init__(self, mesh, ir):
        self.mesh = mesh
        self.env: dict = {}
        self.producers = {v: e for e in ir.eqns for v in e.outputs}

    def reshard(self, x: Local, dims, keep_partial=False) -> Local:
        return reshard(self.mesh, x, dims, keep_partial)

    def device_index(self, axes):
        """This device's position along ``axes`` (int32, traced)."""
        return device_index(axes)

    def ppermute(self, value, axes, perm):
        """Send ``value`` from position ``src`` to ``dst`` along ``axes`` for each pair."""
        return ppermute_p.bind(value, axes=tuple(axes), perm=tuple(perm))

    def plan(self, eqn, operands, targets) -> Plan:
        """Split the equation's factors and reshard its operands accordingly. Two candidate
        splits — the results' targets first, or the operands' splits first — are costed in
        bytes sent (operand reshards plus reshards of the results to their targets); the
        cheaper wins, the results-first one on a tie."""
        rule = eqn.prim.fact("shard").factors(eqn)
        by_results = [(fd, t) for fd, t in zip(rule.results, targets)]
        by_operands = [(fd, x.dims) for fd, x in zip(rule.operands, operands)]
        first = assign_factors(rule, by_results + by_operands, self.mesh)
        second = assign_factors(rule, by_operands + by_results, self.mesh)
        axes = first if first == second or \
            self._cost(eqn, rule, first, operands, targets) <= \
            self._cost(eqn, rule, second, operands, targets) else second
        keep = self._keep_partial(eqn, operands, axes)
        resharded = [self.reshard(x, project(fd, axes), k)
                     for x, fd, k in zip(operands, rule.operands, keep)]
        return Plan(rule, axes, resharded)

    def _cost(self, eqn, rule, axes, operands, targets) -> int:
        keep = self._keep_partial(eqn, operands, axes)
        total = sum(reshard_cost(self.mesh, a.type, x.dims, x.partial, project(fd, axes), k)
                    for a, x, fd, k in zip(eqn.inputs, operands, rule.operands, keep))
        partial = {a for x, k in zip(operands, keep) if k for a in x.partial}
        partial |= {a for f, kind in enumerate(rule.kinds) if kind in ("sum", "gather")
                    for a in axes[f]}
        total += sum(reshard_cost(self.mesh, v.type, project(fd, axes), tuple(partial), t)
                     for v, fd, t in zip(eqn.outputs, rule.results, targets))
        return total

    def _keep_partial(self, eqn, operands, axes) -> list:
        """Which operands may stay partial sums: the op is linear in them (its rule says how)
        and it splits nothing over their partial axes."""
        keep = [False] * len(operands)
        policy = eqn.prim.fact("shard").linear
        policy = policy(eqn) if callable(policy) else policy
        partial = [set(x.partial) for x in operands]
        if policy is None or not any(partial):
            return keep
        used = {a for ax in axes for a in ax}
        if any(p & used for p in partial):
            return keep
        if policy == "unary":
            keep[0] = bool(partial[0]) and not any(partial[1:])
        elif policy == "one":
            keep = [bool(p) for p in partial] if sum(map(bool, partial)) == 1 else keep
        elif policy in ("all", "select"):
            first = 1 if policy == "select" else 0
            linear = [(p, x) for p, x in zip(partial[first:], operands[first:])]
            shared = next(p for p, _ in linear if p) if any(p for p, _ in linear) else set()
            if not any(partial[:first]) and all(p == shared or _is_zero_literal(x)
                                                for p, x in linear):
                keep = [False] * first + [bool(p) for p, _ in linear]
        return keep

    def emit_planned(self, eqn, plan: Plan) -> list:
        """The equation on the resharded blocks; results carry their split and partial sum."""
        entry = eqn.prim.fact("shard")
        out_dims = [project(fd, plan.axes) for fd in plan.rule.results]
        params = eqn.params
        if entry.localize is not None:
            params = entry.localize(params, [x.value.shape for x in plan.operands],
                                    [local_shape(v.type.shape, d, self.mesh)
                                     for v, d in zip(eqn.outputs, out_dims)])
        outs = bind(eqn.prim, [x.value for x in plan.operands], params)
        outs = outs if eqn.prim.multiple_results else [outs]
        partial = {a for x in plan.operands for a in x.partial}
        for f, kind in enumerate(plan.rule.kinds):
            ax = plan.axes[f]
            if ax and kind == "sum":
                partial.update(ax)
            elif ax and kind in ("max", "min"):
                prim = pmax_p if kind == "max" else pmin_p
                outs = [prim.bind(o, axes=ax) for o in outs]
        partial = tuple(a for a in self.mesh.axis_names if a in partial)
        return [Local(o, d, partial) for o, d in zip(outs, out_dims)]

    def generic(self, eqn, operands, targets) -> list:
        return self.emit_planned(eqn, self.plan(eqn, operands, targets))

    # sub-programs -----------------------------------------------------------------------------
    def inline(self, body: ClosedIR, operands) -> list:
        """Evaluate a sub-IR's equations in place (its equations join this program)."""
        return evaluate(body.ir, self.mesh, operands)

    def partition_body(self, body: ClosedIR, operands) -> tuple:
        """A sub-IR as its own per-device IR: (local ClosedIR, its output dims). Operands
        must not be partial."""
        in_dims = [x.dims for x in operands]
        prop = Propagation(body.ir, self.mesh, in_dims)
        out_dims = [prop.of(v) for v in body.ir.outvars]
        local = partition_with(body.ir, self.mesh, prop, in_dims, out_dims)
        return local, out_dims


def emit(ctx: ShardContext, eqn, operands, targets) -> list:
    entry = eqn.prim.facts.get("shard")
    if type(entry) is Unsupported:
        raise UnsupportedError(f"pto.shard cannot partition `{eqn.prim.name}`: "
                               f"{entry.reason}", eqn.source)
    if entry is None:
        raise UnsupportedError(f"pto.shard has no sharding rule for `{eqn.prim.name}`",
                               eqn.source)
    if entry.local is not None:
        return entry.local(ctx, eqn, operands, targets)
    return ctx.generic(eqn, operands, targets)


def evaluate(ir, mesh, operands, prop: Propagation | None = None) -> list:
    """The Locals of ``ir``'s outputs, emitting the per-device equations into the active
    trace. ``prop`` gives the target splits (propagated from the operands if None)."""
    if prop is None:
        prop = Propagation(ir, mesh, [x.dims for x in operands])
    ctx = ShardContext(mesh, ir)
    ctx.env.update(zip(ir.invars, operands))
    with source_info.replaying() as at:
        for eqn in ir.eqns:
            ins = [ctx.env[a] if type(a) is Var else Local(a, ()) for a in eqn.inputs]
            at(eqn.source)
            targets = [prop.dims.get(v) or replicated(v) for v in eqn.outputs]
            ctx.env.update(zip(eqn.outputs, emit(ctx, eqn, ins, targets)))
    return [ctx.env[v] if type(v) is Var else Local(v, ()) for v in ir.outvars]


def partition_with(ir, mesh, prop, in_dims, out_dims) -> ClosedIR:
    local_types = [local_aval(v.type, d, mesh) for v, d in zip(ir.invars, in_dims)]

    def per_device(*args):
        outs = evaluate(ir, mesh, [Local(a, d) for a, d in zip(args, in_dims)], prop)
        return [reshard(mesh, x, d).value for x, d in zip(outs, out_dims)]

    local = trace_flat(per_device, local_types, "shard")
    return ClosedIR(dce(local.ir), local.consts)


def partition_as_propagated(closed: ClosedIR, mesh, in_dims) -> tuple:
    """(the per-device program of ``closed`` whose outputs stay split as propagation splits
    them, those output dims)."""
    prop = Propagation(closed.ir, mesh, in_dims)
    out_dims = [prop.of(v) for v in closed.ir.outvars]
    return partition_with(closed.ir, mesh, prop, in_dims, out_dims), out_dims


def partition(closed: ClosedIR, mesh, in_dims, out_dims) -> ClosedIR:
    """The per-device program of ``closed`` (a global IR without consts) whose inputs are split
    as ``in_dims`` and whose outputs must come out split as ``out_dims``."""
    prop = Propagation(closed.ir, mesh, in_dims, out_dims)
    return partition_with(closed.ir, mesh, prop, in_dims, out_dims)
