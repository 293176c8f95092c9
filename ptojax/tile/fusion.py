"""Grouping tensor equations into fused kernels.

One pass in program order. An equation with a tile rule joins the group of one of its operands
when its rule accepts the operand layouts in that group's space (merging two groups of the same
space when it consumes both), or else a vector group that already loads one of its operands
(siblings reading the same tensor share one kernel); otherwise it starts a new group. Broadcasts and reshapes of
values from outside any group are *pending*: each group that consumes one recomputes it inside
the kernel (so a bias broadcast costs no HBM traffic), and it is materialized as a tensor op
only if something outside the kernels needs it.

Groups never form cycles: an equation does not join (and two groups do not merge) when one of
its operands depends on the group through a unit outside it. Limits: a group holds at most one
matmul, and a matmul's group (its epilogue) has no row reductions.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptojax.ir.core import Var
from ptojax.tile.rules import CUBE_KINDS, rule_of, unsupported_reason

PENDING_KINDS = ("broadcast", "reshape")


@dataclass(eq=False)
class Group:
    id: int
    space: tuple
    kind: str = "vector"                  # vector | cube
    eqns: list = field(default_factory=list)
    layout: dict = field(default_factory=dict)       # var -> layout, for vars computed here
    in_layouts: dict = field(default_factory=dict)   # eqn -> operand layouts
    pulled: dict = field(default_factory=dict)       # var -> (eqn, layout, in_layouts)
    dot: object = None
    has_reduction: bool = False
    outputs: list = field(default_factory=list)
    first: int = 0                                   # index of its first equation

    def produces(self, var) -> bool:
        return var in self.layout and var not in self.pulled


@dataclass
class Fusion:
    ir: object
    groups: list                          # live groups, by first equation
    unfused: dict                         # eqn index -> reason
    pending: dict                         # var -> eqn index of a pending broadcast/reshape
    index_of: dict                        # eqn -> index

    def finalize(self):
        """Set each group's outputs; returns the pending equations to emit as tensor ops."""
        users: dict = {}
        for eqn in self.ir.eqns:
            for a in eqn.inputs:
                if type(a) is Var:
                    users.setdefault(a, []).append(eqn)
        outvars = {v for v in self.ir.outvars if type(v) is Var}
        in_group = {e: g for g in self.groups for e in g.eqns}
        for g in self.groups:
            g.outputs = [v for e in g.eqns for v in e.outputs
                         if v in outvars or any(in_group.get(u) is not g
                                                for u in users.get(v, ()))]
        pending_eqn = {self.ir.eqns[i]: v for v, i in self.pending.items()}
        standalone = set()
        for var, i in sorted(self.pending.items(), key=lambda kv: -kv[1]):
            needed = var in outvars
            for u in users.get(var, ()):
                if u in in_group:
                    needed |= var not in in_group[u].pulled
                elif u in pending_eqn:
                    uvar = pending_eqn[u]
                    needed |= self.pending[uvar] in standalone or any(
                        uvar in g.pulled and var not in g.pulled for g in self.groups)
                else:
                    needed = True
            if needed:
                standalone.add(i)
        return standalone


class _Fuser:
    def __init__(self, ir, target):
        self.ir = ir
        self.target = target
        self.groups: dict = {}
        self.parent: dict = {}
        self.owner: dict = {}             # var -> group id (computed in a group)
        self.pending: dict = {}           # var -> eqn index
        self.anc: dict = {}               # var -> frozenset of group ids it depends on
        self.readers: dict = {}           # var -> ids of groups that load it from GM
        self.unfused: dict = {}
        self.index_of = {e: i for i, e in enumerate(ir.eqns)}

    # --- union-find --------------------------------------------------------------------------
    def find(self, g):
        while self.parent.get(g, g) != g:
            g = self.parent[g]
        return g

    def group_of(self, var):
        g = self.owner.get(var)
        return None if g is None else self.groups[self.find(g)]

    def depends_on(self, var, group) -> bool:
        return any(self.find(g) == group.id for g in self.anc.get(var, ()))

    def _anc_of(self, eqn, extra=()):
        out = set(extra)
        for a in eqn.inputs:
            if type(a) is Var:
                out.update(self.find(g) for g in self.anc.get(a, ()))
        return frozenset(out)

    # --- the pass ----------------------------------------------------------------------------
    def run(self) -> Fusion:
        for i, eqn in enumerate(self.ir.eqns):
            self.step(i, eqn)
        groups = sorted((g for gid, g in self.groups.items() if self.find(gid) == gid),
                        key=lambda g: g.first)
        return Fusion(self.ir, groups, self.unfused, self.pending, self.index_of)

    def step(self, i, eqn):
        reason = unsupported_reason(eqn, self.target)
        if reason is None:
            rule = rule_of(eqn)
            producers = self._operand_groups(eqn)
            if rule.kind in PENDING_KINDS and not producers:
                self.pending[eqn.outputs[0]] = i
                self._define(eqn, None)
                return
            for group in producers + self._siblings(eqn, producers):
                group = self.groups[self.find(group.id)]
                result = self._join(group, eqn, rule)
                if not isinstance(result, str):
                    return
                reason = reason or result
            result = self._seed(i, eqn, rule)
            if not isinstance(result, str):
                return
            reason = reason or result
        self.unfused[i] = reason
        self._define(eqn, None)

    def _operand_groups(self, eqn):
        seen, out = set(), []
        for a in eqn.inputs:
            g = self.group_of(a) if type(a) is Var else None
            if g is not None and g.id not in seen:
                seen.add(g.id)
                out.append(g)
        return out

    def _siblings(self, eqn, producers):
        """Vector groups that already read one of ``eqn``'s operands from GM: joining one
        reads that tensor once instead of twice (horizontal fusion)."""
        seen = {self.find(g.id) for g in producers}
        out = []
        for a in eqn.inputs:
            for gid in self.readers.get(a, ()):
                gid = self.find(gid)
                if gid not in seen and gid in self.groups and \
                        self.groups[gid].kind == "vector":
                    seen.add(gid)
                    out.append(self.groups[gid])
        return out

    def _define(self, eqn, group):
        anc = self._anc_of(eqn, () if group is None else (group.id,))
        for v in eqn.outputs:
            self.anc[v] = anc
            if group is not None:
                self.owner[v] = group.id

    # --- joining, seeding, merging -----------------------------------------------------------
    def _join(self, group, eqn, rule):
        if rule.kind in CUBE_KINDS:
            return "a matmul starts its own (cube) kernel"
        if rule.kind == "reduce" and group.kind == "cube":
            return "row reductions are not fused into matmul epilogues"
        for other in self._operand_groups(eqn):
            other = self.groups[self.find(other.id)]
            if other.id != group.id and other.space == group.space:
                if self._can_merge(group, other):
                    self._merge(group, other)
        in_layouts = [group.layout.get(a) if type(a) is Var and group.produces(a) else None
                      for a in eqn.inputs]
        result = rule.layout(eqn, in_layouts, group.space)
        if isinstance(result, str):
            return result
        return self._admit(group, eqn, result)

    def _seed(self, i, eqn, rule):
        space = rule.seed_space(eqn)
        result = rule.layout(eqn, [None] * len(eqn.inputs), space)
        if isinstance(result, str):
            return result
        gid = len(self.parent)
        self.parent[gid] = gid
        group = Group(gid, space, kind="cube" if rule.kind in CUBE_KINDS else "vector", first=i)
        self.groups[gid] = group
        admitted = self._admit(group, eqn, result)
        if isinstance(admitted, str):
            del self.groups[gid]
        return admitted

    def _admit(self, group, eqn, result):
        out_layout, in_layouts = result
        pulls = {}
        for a, layout in zip(eqn.inputs, in_layouts):
            if type(a) is Var and a in group.pulled and layout != group.pulled[a][1]:
                return f"it needs {a.type} as a {layout} value, but the kernel recomputes " \
                       f"it as {group.pulled[a][1]}"
            if type(a) is not Var or group.produces(a) or a in group.pulled:
                continue
            if a in self.pending and layout is not None:
                pulls.update(self._pull(group, a, layout))
        for a in self._external_operands(group, eqn, pulls):
            if self.depends_on(a, group):
                return "joining would create a cycle between kernels"
        for a in self._external_operands(group, eqn, pulls):
            self.readers.setdefault(a, []).append(group.id)
        group.pulled.update(pulls)
        for var, (peqn, layout, _) in pulls.items():
            group.layout[var] = layout
        group.eqns.append(eqn)
        group.in_layouts[eqn] = in_layouts
        for v in eqn.outputs:
            group.layout[v] = out_layout
        if rule_of(eqn).kind == "reduce":
            group.has_reduction = True
        if rule_of(eqn).kind in CUBE_KINDS:
            group.dot = eqn
        self._define(eqn, group)
        return None

    def _pull(self, group, var, layout) -> dict:
        """The pending equations recomputing ``var`` as ``layout`` in ``group`` ({} if none)."""
        eqn = self.ir.eqns[self.pending[var]]
        rule = rule_of(eqn)
        in_layouts = [None] * len(eqn.inputs)
        result = rule.layout(eqn, in_layouts, group.space, want=layout)
        if isinstance(result, str):
            return {}
        out = {var: (eqn, layout, result[1])}
        for a, need in zip(eqn.inputs, result[1]):
            if type(a) is Var and a in self.pending and need is not None:
                inner = self._pull(group, a, need)
                if not inner:
                    continue
                out.update(inner)
        return out

    def _external_operands(self, group, eqn, pulls):
        pending = [eqn] + [e for e, _, _ in pulls.values()]
        for e in pending:
            for a in e.inputs:
                if type(a) is Var and not group.produces(a) and a not in pulls \
                        and a not in group.pulled:
                    yield a

    def _can_merge(self, a, b) -> bool:
        if a.kind == "cube" and b.kind == "cube":
            return False
        if (a.kind == "cube" and b.has_reduction) or (b.kind == "cube" and a.has_reduction):
            return False
        if any(v in b.pulled and b.pulled[v][1] != p[1] for v, p in a.pulled.items()):
            return False
        for x, y in ((a, b), (b, a)):
            for e in x.eqns + [p for p, _, _ in x.pulled.values()]:
                for v in e.inputs:
                    if type(v) is Var and not x.produces(v) and not y.produces(v) \
                            and v not in x.pulled and self.depends_on(v, y):
                        return False
            if self._reads_in_another_layout(x, y):
                return False
        return True

    @staticmethod
    def _reads_in_another_layout(x, y) -> bool:
        """Whether some equation of ``x`` reads a value ``y`` computes in another layout
        than ``y``'s (a [M,1] value of an [M,1] space is both a row and a full value: merged,
        the reader would get the producer's tile, of the other shape)."""
        for e in x.eqns:
            for v, layout in zip(e.inputs, x.in_layouts.get(e, ())):
                if type(v) is Var and y.produces(v) and layout is not None and \
                        layout != y.layout[v]:
                    return True
        return False

    def _merge(self, into, other):
        self.parent[other.id] = into.id
        into.eqns = sorted(into.eqns + other.eqns, key=self.index_of.__getitem__)
        into.layout.update(other.layout)
        into.in_layouts.update(other.in_layouts)
        into.pulled.update(other.pulled)
        into.kind = "cube" if "cube" in (into.kind, other.kind) else "vector"
        into.dot = into.dot or other.dot
        into.has_reduction = into.has_reduction or other.has_reduction
        into.first = min(into.first, other.first)
        del self.groups[other.id]


def fuse(ir, target) -> Fusion:
    """Partition ``ir``'s equations into fused groups (see the module docstring)."""
    return _Fuser(ir, target).run()
