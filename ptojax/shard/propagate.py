"""Phase 1 of ``pto.shard``: choose how every value of the global IR is split.

Seeds: the arguments (their ``in_specs``, fixed), ``with_sharding_constraint`` results (fixed)
and the outputs (their ``out_specs``, as hints). Then forward and backward passes over the
equations, through each primitive's factors (its ``shard`` fact): an equation's factors take the
splits its operands (forward) or results (backward) already have, and those splits are
projected onto its other values. A value's split is only ever *refined* — a whole dimension
may become split, a split one never changes — so the passes reach a fixed point; two rounds
suffice in practice. A dimension some consumer needs whole (a sort axis, a partial slice) is
not split backward, so it is not gathered again for that consumer. Splits flow forward
through call-like bodies and control flow, and backward through control flow into the
operands a body would like split (the ``body_dims`` of their shard facts, defined in
``control_flow/``).

The result maps every Var to its dims; values no rule reached are replicated.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from ptojax.ir.core import IR, Literal, Var
from ptojax.ops.sharding_rules import project
from ptojax.shard.constraint import constraint_dims

_ROUNDS = 2


class BodyDims(NamedTuple):
    results: Callable   # (mesh, eqn, operand dims) -> result dims (forward through bodies)
    operands: Callable  # (mesh, eqn, operand dims) -> operand dims the bodies would like


def blocked_factors(rule) -> set:
    """Factors that are minor in a merged dimension: never split (the merged dimension's
    blocks would not be contiguous)."""
    return {f for side in (rule.operands, rule.results) for value in side for fdims in value
            for f in fdims[1:]}


def assign_factors(rule, sources, mesh) -> list:
    """Mesh axes per factor, taken from ``sources`` — (factor dims, dims or None) pairs — in
    priority order. A factor takes the split of the first source dim that names it as major,
    if its size divides and the mesh axes are not already taken by another factor."""
    axes = [()] * len(rule.sizes)
    blocked = blocked_factors(rule)
    used = set()
    for fdims, dims in sources:
        if dims is None:
            continue
        for fd, ax in zip(fdims, dims):
            if not ax or not fd:
                continue
            f = fd[0]
            if axes[f] or f in blocked or used.intersection(ax) or \
                    rule.sizes[f] % mesh.axis_size(ax):
                continue
            axes[f] = ax
            used.update(ax)
    return axes


def replicated(v) -> tuple:
    return ((),) * len(v.type.shape)


class Propagation:
    """The dims of every value of ``ir``, found from the seeds by forward/backward passes.
    Inputs are fixed to ``in_dims``, except those whose index is in ``free``: seeded with
    their dims but refined by the passes like any other value (what a body would like its
    operands to be)."""

    def __init__(self, ir: IR, mesh, in_dims, out_hints=None, free=frozenset()):
        self.mesh = mesh
        self.dims: dict = dict(zip(ir.invars, in_dims))
        self.fixed = {v for i, v in enumerate(ir.invars) if i not in free} | set(ir.constvars)
        self.dims.update((v, replicated(v)) for v in ir.constvars)
        self._rules = {}
        for eqn in ir.eqns:
            fixed = constraint_dims(eqn, mesh)
            if fixed is not None:
                self.dims[eqn.outputs[0]] = fixed
                self.fixed.add(eqn.outputs[0])
        for v, d in zip(ir.outvars, out_hints or ()):
            if type(v) is Var and v not in self.fixed and d is not None:
                self.dims[v] = d
        self.whole = self._whole_dims(ir)
        for _ in range(_ROUNDS):
            changed = any([self._forward(e) for e in ir.eqns])
            changed = any([self._backward(e) for e in reversed(ir.eqns)]) or changed
            if not changed:
                break

    def of(self, v) -> tuple:
        if type(v) is Literal:
            return ()
        d = self.dims.get(v)
        return replicated(v) if d is None else d

    def _rule(self, eqn):
        if eqn not in self._rules:
            entry = eqn.prim.fact("shard")
            self._rules[eqn] = entry.factors(eqn) if entry and entry.factors else None
        return self._rules[eqn]

    def _whole_dims(self, ir) -> dict:
        whole: dict = {}
        for eqn in ir.eqns:
            rule = self._rule(eqn)
            if rule is None:
                continue
            for a, fdims in zip(eqn.inputs, rule.operands):
                if type(a) is Var:
                    whole.setdefault(a, set()).update(
                        d for d, fd in enumerate(fdims) if not fd and a.type.shape[d] > 1)
        return whole

    def _refine(self, v, proposal, blocked=frozenset()) -> bool:
        old = self.dims.get(v)
        base = list(old) if old is not None else list(replicated(v))
        used = {a for ax in base for a in ax}
        for d, ax in enumerate(proposal):
            if ax and not base[d] and d not in blocked and not used.intersection(ax):
                base[d] = ax
                used.update(ax)
        new = tuple(base)
        if new != old:
            self.dims[v] = new
            return True
        return False

    def _forward(self, eqn) -> bool:
        if eqn.prim.call_like:
            outs = propagate_body(eqn.params["body"], self.mesh,
                                  [self.of(a) for a in eqn.inputs])
            return any([self._refine(v, d) for v, d in zip(eqn.outputs, outs)
                        if v not in self.fixed])
        body_dims = _body_dims(eqn)
        if body_dims is not None:
            outs = body_dims.results(self.mesh, eqn, [self.of(a) for a in eqn.inputs])
            return any([self._refine(v, d) for v, d in zip(eqn.outputs, outs)
                        if v not in self.fixed])
        rule = self._rule(eqn)
        if rule is None:
            return False
        sources = [(fd, self.of(a)) for fd, a in zip(rule.operands, eqn.inputs)]
        sources += [(fd, self.dims.get(v)) for fd, v in zip(rule.results, eqn.outputs)]
        axes = assign_factors(rule, sources, self.mesh)
        return any([self._refine(v, project(fd, axes))
                    for fd, v in zip(rule.results, eqn.outputs) if v not in self.fixed])

    def _backward(self, eqn) -> bool:
        body_dims = _body_dims(eqn)
        if body_dims is not None:
            wanted = body_dims.operands(self.mesh, eqn, [self.of(a) for a in eqn.inputs])
            return any([self._refine(a, d, self.whole.get(a, frozenset()))
                        for a, d in zip(eqn.inputs, wanted)
                        if type(a) is Var and a not in self.fixed])
        rule = self._rule(eqn)
        if rule is None:
            return False
        sources = [(fd, self.dims.get(v)) for fd, v in zip(rule.results, eqn.outputs)]
        sources += [(fd, self.of(a)) for fd, a in zip(rule.operands, eqn.inputs)]
        axes = assign_factors(rule, sources, self.mesh)
        return any([self._refine(a, project(fd, axes), self.whole.get(a, frozenset()))
                    for fd, a in zip(rule.operands, eqn.inputs)
                    if type(a) is Var and a not in self.fixed])


def _body_dims(eqn):
    entry = eqn.prim.fact("shard")
    return entry.body_dims if entry is not None else None


def propagate_body(body, mesh, in_dims) -> list:
    """The dims of a sub-IR's outputs given its inputs' dims."""
    ir = body.ir
    prop = Propagation(ir, mesh, in_dims)
    return [prop.of(v) for v in ir.outvars]
