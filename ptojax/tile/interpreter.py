"""The numpy interpreter for ``tile_kernel`` equations: runs a kernel tile by tile.

It models the on-chip buffers: each memory space of the target is a byte array of its real
capacity, and every tile is a view placed at the address the memory plan gives it (staging
tiles rotate through their pipeline copies). A plan that needs more than a buffer holds raises
``TileError`` instead of silently succeeding, and buffers start filled with NaN bytes, so a
planner bug that overlaps two live tiles, or an op that reads outside a valid region, shows up
as wrong results. Blocks run one after another; within a block, tiles run in order.
"""
from __future__ import annotations

import functools

import numpy as np

from ptojax import dtypes
from ptojax.errors import TileError
from ptojax.ir.core import ClosedIR, Literal, Var
from ptojax.ir.types import TileType
from ptojax.targets import get_target
from ptojax.tile import ops as T
from ptojax.tile.memory import plan_memory
from ptojax.tile.row_split import both_vector_buffers


def cached_plan(body, buffers, target, single_fallback=False, split_rows=0, shorten=True):
    return _cached_plan(body, buffers, target, bool(single_fallback), int(split_rows),
                        bool(shorten))


@functools.lru_cache(maxsize=512)
def _cached_plan(body, buffers, target, single_fallback, split_rows, shorten):
    return plan_memory(body, buffers, target, single_fallback, split_rows, shorten)


def check_plan_fits(name, body, buffers, target, single_fallback=False, split_rows=0):
    plan = cached_plan(body, buffers, target, single_fallback, split_rows)
    over = plan.overflow(target)
    if over is not None:
        slot, space, needed, cap = over
        op = slot.owner.prim.name if slot.owner is not None else "?"
        raise TileError(
            f"tile_kernel {name}: buffer {space} overflows: the tiles need {needed:,} bytes "
            f"but {target.name} has {cap:,} bytes of {space} (first overflow at `{op}`). "
            f"Re-tile with smaller tiles (pto.TileConfig) for this target.")
    return plan


def _empty(t):
    arr = np.empty(t.shape, t.dtype)
    if dtypes.is_float(t.dtype):
        arr.fill(np.nan)
    else:
        arr.fill(0)
    return arr


class _Arenas:
    def __init__(self, target):
        self.mem = {s: np.full(c, 0xFF, np.uint8) for s, c in target.buffers.items()}
        self.block = np.int32(0)      # the core running the current tile

    def view(self, slot, copy, t: TileType):
        nbytes = t.size * t.dtype.itemsize
        addr = slot.address(copy)
        raw = self.mem[slot.space][addr:addr + nbytes]
        vr, vc = T.valid_shape(t)
        return raw.view(t.dtype).reshape(t.shape)[:vr, :vc]

    def scrub(self, slot):
        self.mem[slot.space][slot.offset:slot.extent] = 0xFF


def run_tile_kernel(inputs, *, name, kind, grid, regions, bodies, buffers, target, cube=None,
                    accumulate=(), row_split=0, workspace_depths=()):
    """Execute a tile kernel on numpy inputs; returns its outputs. A kernel whose vector
    sub-blocks split the rows (``row_split``) runs its whole tiles in both sub-blocks' UB."""
    target = get_target(target)
    if row_split:
        target = both_vector_buffers(target)
    plans = [check_plan_fits(name, body, buffers, target, kind == "kernel") for body in bodies]
    inputs = [np.asarray(x) for x in inputs]
    ins, outs, spaces = T.kernel_signature(bodies[0], len(inputs))
    out_arrays = [np.zeros(v.type.shape, v.type.dtype) if i in accumulate else _empty(v.type)
                  for i, v in enumerate(outs)]
    workspaces = [_empty(v.type) for v in spaces]
    arenas = _Arenas(target)
    for block in range(grid.blocks):
        arenas.block = np.int32(block)
        for local, t in enumerate(grid.block_range(block)):
            ti, tj = grid.coords(t)
            k = grid.region_of(ti, tj)
            body = bodies[k]
            env = dict(zip(body.invars, [np.int32(ti), np.int32(tj), *inputs, *out_arrays,
                                         *workspaces]))
            _run(body, env, plans[k], arenas, [local])
    return out_arrays


def _value(env, a):
    return a.value if type(a) is Literal else env[a]


def _run(ir, env, plan, arenas, copies):
    for eqn in ir.eqns:
        prim = eqn.prim
        vals = [_value(env, a) for a in eqn.inputs]
        if prim is T.tile_store_p:
            gm, tile, r0, c0 = vals
            T.write_window(gm, tile, int(r0), int(c0), eqn.params["view"],
                           eqn.params.get("atomic", False))
            env[eqn.outputs[0]] = gm
            continue
        if prim is T.tile_loop_p:
            _run_loop(eqn, vals, env, plan, arenas, copies)
            continue
        if prim is T.tile_block_index_p:
            env[eqn.outputs[0]] = arenas.block
            continue
        scratch = plan.scratch.get(eqn)
        if scratch is not None:
            arenas.scrub(scratch)
        if prim.multiple_results:
            raise TileError(f"tile interpreter: unexpected multi-result `{prim.name}`")
        result = prim.impl(*vals, **eqn.params)
        out = eqn.outputs[0]
        if isinstance(out.type, TileType):
            slot = plan.slots[out]
            dst = arenas.view(slot, copies[slot.level], out.type)
            dst[...] = np.asarray(result).astype(out.type.dtype, copy=False)
            env[out] = dst
        else:
            env[out] = np.asarray(result, out.type.dtype)[()]


def _run_loop(eqn, vals, env, plan, arenas, copies):
    p = eqn.params
    body = p["body"].ir if isinstance(p["body"], ClosedIR) else p["body"]
    carries, invariants, start, stop = T.loop_operands(vals, p)
    for k in range(int(start), int(stop)):
        inner = dict(zip(body.invars, [np.int32(k), *carries, *invariants]))
        _run(body, inner, plan, arenas, copies + [k - int(start)])
        carries = [inner[v] if type(v) is Var else v.value for v in body.outvars]
    for v, c in zip(eqn.outputs, carries):
        env[v] = c
