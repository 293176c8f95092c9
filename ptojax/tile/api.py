"""``pto.tile``: tensor-level PTO IR -> tile IR (``tile_kernel`` equations), an IR -> IR rewrite.

    tiled = pto.tile(f)                     # or pto.tile(f, pto.TileConfig(vec=(64, 512)))
    pto.make_ir(tiled)(x)                   # shows the tile_kernel equations
    tiled(x)                                # runs them with the numpy tile interpreter

Pipeline (each step its own module):

    optimize (fold, CSE, DCE); tile_prepare (transposes folded into matmuls)
    -> tile_fusion.fuse       group equations into kernels (tile_rules, by each primitive's
                              ``tile`` fact)
    -> tile_planner           pick tile shapes (TileConfig or automatic), check capacity
    -> tile_build             emit each kernel's body (one per ragged-edge region)
    -> here                   order kernels and leftover tensor ops; assemble the IR

Equations without a tile rule stay tensor-level between the kernels; ``TileResult.unfused``
(and ``lowered.unfused()``) lists them with the reason. Tiling works on any IR, including the
output of ``grad`` and ``vmap``: apply those first, then tile (``pto.tile(pto.grad(f))``).
"""
from __future__ import annotations

import functools
import heapq
from dataclasses import dataclass, field

from ptojax.autodiff.api import trace_pytree_fn
from ptojax.errors import TileError, UnsupportedError
from ptojax.eval.interpreter import eval_ir
from ptojax.ir.core import IR, ClosedIR, Eqn, Var
from ptojax.ir.core import print_eqn
from ptojax.targets import ascend910b, get_target
from ptojax.tile.kernel import tile_kernel_p
from ptojax.tile.kernel_names import kernel_name
from ptojax.kernel.call import kernel_call_p, kernel_linear_call_p
from ptojax.kernel.lower import lower_kernel
from ptojax.optimize import has_effect, optimize
from ptojax.tile.attention import fuse_attention
from ptojax.tile.fusion import fuse
from ptojax.tile.planner import TileConfig, plan_group
from ptojax.tile.prepare import expand, fold_transposes
from ptojax.tile.rules import COLSUM
from ptojax.pytree import tree_flatten
from ptojax.ops.arithmetic import integer_pow_p
from ptojax.ops.broadcast import reduce_sum_p
from ptojax.ops.convert import convert_element_type_p
from ptojax.ops.linalg import dot_general_p
from ptojax.ops.reductions import reduce_max_p, reduce_min_p
from ptojax.public import add_examples as _add_examples

__all__ = ["tile", "tile_ir", "TileConfig", "TileResult", "UnfusedOp"]

# how a kernel is named after its ops (names appear in the emitted PTO code)
SHORT = {reduce_max_p: "rmax", reduce_sum_p: "rsum", reduce_min_p: "rmin",
         dot_general_p: "matmul", integer_pow_p: "pow"}


def _names_kernel(prim) -> bool:
    """Layout changes, conversions and identities do not name a kernel."""
    form = prim.fact("tile")
    return not (form.kind in ("broadcast", "reshape") or form.identity
                or prim is convert_element_type_p)


@dataclass
class UnfusedOp:
    """A tensor-level equation left between kernels, and why."""
    eqn: Eqn
    reason: str

    def __str__(self):
        where = f"  ({self.eqn.source.short()})" if self.eqn.source else ""
        return f"{print_eqn(self.eqn)}\n    -> {self.reason}{where}"


@dataclass
class TileResult:
    ir: ClosedIR
    kernels: list = field(default_factory=list)      # tile_kernel equations, in order
    unfused: list = field(default_factory=list)      # UnfusedOp


def kernel_label(group) -> str:
    names = []
    for e in group.eqns:
        n = SHORT.get(e.prim, e.prim.name)
        if _names_kernel(e.prim) and n not in names:
            names.append(n)
    if not names:
        names = ["copy"]
    return names[0] if len(names) == 1 else f"{names[0]}_{names[-1]}"


def tile_ir(closed: ClosedIR, config=None, target=ascend910b) -> TileResult:
    """Tile every fusible part of ``closed`` for ``target`` (see the module docstring)."""
    config = config or TileConfig()
    if not isinstance(config, TileConfig):
        raise TileError(f"config must be a pto.TileConfig, got {type(config).__name__}")
    target = get_target(target)
    prepare = functools.partial(_prepare, target=target)
    closed = prepare(closed)
    if config.attention:
        closed = fuse_attention(closed, target, prepare, config.attention_gradient)
    ir = closed.ir
    fusion = fuse(ir, target)
    fusion.finalize()                      # group outputs (needed to build the bodies)
    unfused = dict(fusion.unfused)
    plans = {}
    for n, group in enumerate(fusion.groups):
        name = f"k{n}_{kernel_label(group)}"
        plan = plan_group(group, config, target, name)
        if isinstance(plan, str):
            for e in group.eqns:
                unfused[fusion.index_of[e]] = f"its kernel cannot be tiled: {plan}"
        else:
            plans[group.id] = plan
    fusion.groups = [g for g in fusion.groups if g.id in plans]
    standalone = fusion.finalize()
    for i in standalone:
        unfused.setdefault(i, "a broadcast/reshape used outside kernels stays a tensor op")
    units = _order_units(ir, fusion, standalone, unfused)
    eqns, kernels, kept = [], [], []
    for kind, item in units:
        if kind == "eqn" and ir.eqns[item].prim in (kernel_call_p, kernel_linear_call_p):
            e = ir.eqns[item]
            params = e.params.replace(name=kernel_name(e.params["name"], kernels))
            eqns.append(lower_kernel(params, e.inputs, e.outputs, e.source))
            kernels.append(eqns[-1])
        elif kind == "eqn":
            eqns.append(ir.eqns[item])
            kept.append(UnfusedOp(ir.eqns[item], unfused[item]))
        else:
            eqn = _kernel_eqn(item, plans[item.id], kernels, target)
            eqns.append(eqn)
            kernels.append(eqn)
    out = ClosedIR(IR(ir.constvars, ir.invars, eqns, ir.outvars), closed.consts)
    return TileResult(out, kernels, kept)


def _prepare(closed: ClosedIR, target) -> ClosedIR:
    """Optimize, expand primitives without an instruction, fold transposes into matmuls."""
    closed = optimize(ClosedIR(expand(closed.ir, target), closed.consts))
    return ClosedIR(fold_transposes(closed.ir), closed.consts)


def _kernel_eqn(group, plan, kernels, target) -> Eqn:
    name = kernel_name(f"k{len(kernels)}_{kernel_label(group)}", kernels)
    accumulate = tuple(i for i, v in enumerate(group.outputs) if group.layout[v] == COLSUM)
    params = dict(name=name, kind=group.kind, grid=plan.grid, regions=plan.regions,
                  bodies=plan.bodies, buffers=plan.buffers, target=target.name,
                  cube=plan.cube, accumulate=accumulate)
    return Eqn(tile_kernel_p, plan.inputs, group.outputs, params, group.eqns[0].source)


def _order_units(ir, fusion, standalone, unfused):
    """Kernels and tensor equations in a dependency order, as close to the original as can."""
    units, producer = [], {}
    members = {}
    for g in fusion.groups:
        units.append(("group", g))
        for e in g.eqns:
            members[fusion.index_of[e]] = g
    for i, eqn in enumerate(ir.eqns):
        if i in unfused and i not in members:
            units.append(("eqn", i))
    for u, (kind, item) in enumerate(units):
        outs = item.outputs if kind == "group" else ir.eqns[item].outputs
        for v in outs:
            producer[v] = u
    deps = []
    for kind, item in units:
        if kind == "group":
            inputs = {a for e in item.eqns + [p for p, _, _ in item.pulled.values()]
                      for a in e.inputs if type(a) is Var and not item.produces(a)
                      and a not in item.pulled}
        else:
            inputs = {a for a in ir.eqns[item].inputs if type(a) is Var}
        deps.append({producer[a] for a in inputs if a in producer})
    _chain_effects(ir, units, deps)
    key = [item.first if kind == "group" else item for kind, item in units]
    waiting = [len(d) for d in deps]
    users = [[] for _ in units]
    for u, d in enumerate(deps):
        for p in d:
            users[p].append(u)
    ready = [(key[u], u) for u in range(len(units)) if waiting[u] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, u = heapq.heappop(ready)
        order.append(units[u])
        for w in users[u]:
            waiting[w] -= 1
            if waiting[w] == 0:
                heapq.heappush(ready, (key[w], w))
    if len(order) != len(units):
        raise TileError("tile: kernels would depend on each other cyclically (internal error)")
    return order


def _chain_effects(ir, units, deps):
    """Equations with effects (host callbacks) keep their program order: each depends on the
    one before it."""
    previous = None
    for u, (kind, item) in enumerate(units):   # tensor equations are listed in program order
        if kind == "eqn" and has_effect(ir.eqns[item]):
            if previous is not None:
                deps[u].add(previous)
            previous = u


# --- the public transform --------------------------------------------------------------------
def tile(fn, config=None, target=ascend910b):
    """``fn`` with every fusible part run as tile kernels for ``target``.

    ``pto.make_ir(pto.tile(f))(x)`` shows the ``tile_kernel`` equations; calling the result
    runs them with the numpy tile interpreter (eagerly or under ``pto.jit``). ``config`` is a
    ``pto.TileConfig`` with explicit tile shapes, or None for the automatic planner. A config
    that overflows a buffer or breaks alignment raises ``pto.errors.TileError``.
    """
    config = config or TileConfig()
    target = get_target(target)

    @functools.wraps(fn)
    def tiled(*args, **kwargs):
        leaves, in_tree = tree_flatten((tuple(args), kwargs))
        closed, out_tree, _ = trace_pytree_fn(lambda a, kw: fn(*a, **kw), leaves, in_tree,
                                              name=getattr(fn, "__name__", "fn"))
        result = tile_ir(closed, config, target)
        if any(e.params["grid"].dynamic for e in result.kernels):
            raise UnsupportedError(
                f"pto.tile({getattr(fn, '__name__', 'fn')}): its kernels have a runtime row "
                f"count or row length (symbolic dimensions, pto.jit(..., dynamic=...)), which the numpy tile "
                f"interpreter cannot run; leave out pto.tile: pto.jit tiles and compiles the "
                f"kernels itself (.lower(...).as_text('pto') shows them)")
        return out_tree.unflatten(eval_ir(result.ir, leaves))

    tiled.tile_config = config
    tiled.tile_target = target
    return tiled


_add_examples(globals(), """
tile:
    >>> f = pto.tile(lambda x: pnp.exp(x) * 2.0)
    >>> f(pnp.zeros((8, 64)))[0, :3]
    Array([2., 2., 2.], dtype=float32)
""")
