"""The pipes of a core as queues: the time a kernel schedule takes (an estimate).

An Ascend core issues its instructions in program order to per-pipe queues, and each pipe
runs its queue in order:

    MTE2   GM -> L1 / UB          MTE1   L1 -> L0A / L0B (TEXTRACT, TIMG2COL)
    M      the cube (TMATMUL)     FIX    L0C -> GM
    V      the vector unit        MTE3   UB -> GM          S   scalar register writes

so a load, a matmul and a store of different steps overlap, and the time of a core is set by
its critical pipe, not by the sum of its transfers. The schedule's flags are what orders
them, and this model honours exactly those (``ptojax.lower.schedule``):

- ``set_flag(src, dst, e)`` fires once ``src`` has finished what was issued to it before;
  ``wait_flag(src, dst, e)`` holds ``dst`` until that firing (flags are counted: each wait
  takes the oldest unconsumed set of its (src, dst, e));
- a cross-core ``set`` fires once its pipe is done; a cross-core ``wait`` holds every pipe of
  the waiting core (CANN CrossCoreWaitFlag / wait_flag_dev, a PIPE_S instruction: with the
  counter at 0 every instruction after it is blocked); a cube core's set reaches each vector
  sub-block, and the cube's wait is released only once every sub-block has set its flag
  (CrossCoreSetFlag, mode 2);
- ``pipe_barrier`` is free here (a pipe is in order already).

The schedule is walked once in program order (a set always precedes the wait it releases in
that order: credits are set in the prologue), so each instruction's start is
``max(its pipe's free time, the flags it waits for)``: a max-plus recurrence. A loop of many
steps reaches a periodic regime after a few; once two successive pairs of steps advance every
clock by the same amounts, the remaining pairs are extrapolated.
"""
from __future__ import annotations

import math

import numpy as np
from collections import deque

from ptojax.ir.pto import Instr, RowView, Scratch
from ptojax.ir.symbolic import evaluate
from ptojax.ir.types import TileType
from ptojax.lower import loop_trips
from ptojax.lower.emit import region_order
from ptojax.lower.schedule_items import loop_slot
from ptojax.lower.schedule import (Barrier, CoreBlock, CrossSync, Flag, KLoop, Let, Loop,
                                   ScalarLoad, StaticK, Window)
from ptojax.tile import ops as T
from ptojax.tile.row_split import half_type

CUBE = "cube"
UNIT_PIPES = {"cube": ("MTE2", "MTE1", "M", "FIX", "S"), "vector": ("MTE2", "V", "MTE3", "S")}
PERIOD = 2                       # K-step slots alternate over two buffers
MAX_WARMUP = 16                  # loop steps simulated before extrapolating anyway


def window_bytes(window, sizes=None) -> int:
    """The bytes a TLOAD/TSTORE moves through its GM window (symbolic extents at ``sizes``)."""
    return (evaluate(window.rows, sizes or {}) * evaluate(window.cols, sizes or {})
            * window.param.type.dtype.itemsize)


def instr_pipe_seconds(ins, target, sizes=None, split_rows=0):
    """(pipe, seconds) of one instruction on ``target`` (``split_rows``: a vector tile of that
    many rows is one sub-block's half, ``tile/row_split.py``)."""
    hz = target.clock_hz
    if ins.op in ("TLOAD", "TSTORE"):
        g = ins.srcs[0]
        nbytes = window_bytes(g, sizes)
        if ins.op == "TLOAD":
            path = "GM->L1" if ins.dst.type.space == "L1" else "GM->UB"
            pipe = "MTE2"
        else:
            acc = ins.srcs[1].type.space == "L0C"
            path, pipe = ("L0C->GM", "FIX") if acc else ("UB->GM", "MTE3")
        return pipe, nbytes / target.dma_bandwidth[path] + target.dma_issue_cycles / hz
    if ins.op in ("TEXTRACT", "TIMG2COL"):     # the L0 block written (a TEXTRACT may take
        op = ins.dst                            # one K step of a larger L1 tile), at its
        path = "L1->" + op.type.space           # L0A or L0B rate
        return "MTE1", _elems(op) * _itemsize(op) / target.dma_bandwidth[path]
    if ins.pipe == "S":
        return "S", 1 / hz
    if ins.op in ("TMATMUL", "TMATMUL_ACC"):
        a, b = ins.srcs[-2], ins.srcs[-1]
        (vm, vk), (_, vn) = T.valid_shape(a.type), T.valid_shape(b.type)
        f = target.cube_fractal[0]
        fractals = math.ceil(vm / f) * math.ceil(vk / f) * math.ceil(vn / f)
        macs = target.cube_macs_per_cycle.get(a.type.dtype.name, 1024)
        return "M", fractals * f ** 3 / macs / hz
    src = ins.srcs[0] if ins.op.startswith(("TROW", "TCOL")) and "EXPAND" not in ins.op \
        else ins.dst
    nbytes = evaluate(_elems(src, split_rows), sizes or {}) * _itemsize(src)
    return "V", (target.vector_issue_cycles
                 + math.ceil(nbytes / target.vector_bytes_per_cycle)) / hz


def _elems(op, split_rows=0):
    if isinstance(op, RowView):
        op = op.var
    if isinstance(op, Scratch):
        t = op.eqn.inputs[0].type
    elif isinstance(op, Window):
        return op.rows * op.cols
    else:
        t = op.type
    t = half_type(t, split_rows)
    return math.prod(T.valid_shape(t)) if isinstance(t, TileType) else 1


def _itemsize(op):
    if isinstance(op, RowView):
        op = op.var
    if isinstance(op, Scratch):
        return op.eqn.inputs[0].type.dtype.itemsize
    if isinstance(op, Window):
        return op.param.type.dtype.itemsize
    return op.type.dtype.itemsize


class PipeClock:
    """The pipes of the cores of one cube/vector group (one AIC and its AIV sub-blocks, or
    one vector core), their flags, and the cross-core flags between them."""

    def __init__(self, target, vector_units=1, sizes=None, split_rows=0):
        self.target, self.sizes = target, sizes
        self.split_rows = split_rows   # a pto.kernel whose vector sub-blocks split the rows
        self.vector_units = [f"vec{i}" for i in range(vector_units)]
        self.free = {}                 # (unit, pipe) -> time it is free (s)
        self.flags = {}                # (unit, src, dst, event) -> deque of firing times
        self.cross = {}                # (receiving unit, flag) -> deque of firing times
        self.busy = {}                 # (unit, pipe) -> seconds of work issued to it

    # --- the state, for loops' extrapolation ---------------------------------------------------
    def snapshot(self):
        snap = {("p",) + k: v for k, v in self.free.items()}
        snap.update({("b",) + k: v for k, v in self.busy.items()})
        for name, table in (("f", self.flags), ("x", self.cross)):
            for k, q in table.items():
                for i, v in enumerate(q):
                    snap[(name, k, i)] = v
        return snap

    def shift(self, delta, times):
        """Advance every clock by ``times`` x its per-period advance ``delta``."""
        for k in list(self.free):
            self.free[k] += times * delta[("p",) + k]
        for k in list(self.busy):
            self.busy[k] += times * delta[("b",) + k]
        for name, table in (("f", self.flags), ("x", self.cross)):
            for k, q in table.items():
                table[k] = deque(v + times * delta[(name, k, i)] for i, v in enumerate(q))

    # --- statements ----------------------------------------------------------------------------
    def at(self, unit, pipe):
        return self.free.get((unit, pipe), 0.0)

    def instr(self, unit, ins):
        self.run(unit, *instr_pipe_seconds(ins, self.target, self.sizes, self.split_rows))

    def run(self, unit, pipe, seconds):
        """``seconds`` of work queued on ``unit``'s ``pipe``."""
        key = (unit, pipe)
        self.free[key] = self.at(unit, pipe) + seconds
        self.busy[key] = self.busy.get(key, 0.0) + seconds

    def flag(self, unit, f: Flag, event):
        key = (unit, f.src, f.dst, event)
        if f.action == "set":
            self.flags.setdefault(key, deque()).append(self.at(unit, f.src))
        else:
            self._hold(unit, (f.dst,), self._take(self.flags, key))

    def cross_sync(self, unit, x: CrossSync):
        """Mode-2 (AIC <-> AIV) notifications as the A2 documents them (CANN
        CrossCoreSetFlag): a cube set adds one to the counter of every vector sub-block; a
        vector set counts for the cube only once every sub-block has set it, so the cube's
        wait takes one set from each sub-block and is released by the latest."""
        if x.action == "set":
            when = self.at(unit, x.pipe)
            if unit == CUBE:
                for to in self.vector_units:
                    self.cross.setdefault((to, x.flag), deque()).append(when)
            else:
                self.cross.setdefault((CUBE, x.flag, unit), deque()).append(when)
        elif unit == CUBE:
            when = max(self._take(self.cross, (CUBE, x.flag, u)) for u in self.vector_units)
            self._hold(unit, UNIT_PIPES[CUBE], when)
        else:
            self._hold(unit, UNIT_PIPES["vector"], self._take(self.cross, (unit, x.flag)))

    def _take(self, table, key):
        q = table.get(key)
        if not q:
            raise AssertionError(f"pipe model: a wait on {key} that no earlier set releases")
        return q.popleft()

    def _hold(self, unit, pipes, when):
        for p in pipes:
            self.free[(unit, p)] = max(self.at(unit, p), when)

    def finish(self) -> float:
        return max(self.free.values(), default=0.0)


def repeat(clock, n, step, period=PERIOD):
    """Runs ``step(i)`` for i in range(n) on ``clock``; once two successive periods of
    ``period`` steps advance every clock alike (after at most ``MAX_WARMUP`` steps: by the
    last period's advance), the rest are extrapolated."""
    i, last, delta = 0, None, None
    while i < n:
        if i % period == 0:
            snap = clock.snapshot()
            if last is not None and snap.keys() == last.keys():
                d = {k: snap[k] - last[k] for k in snap}
                if delta is not None and d.keys() == delta.keys() and all(
                        abs(d[k] - delta[k]) <= 1e-12 for k in d) or i >= MAX_WARMUP:
                    times = (n - i) // period
                    if times:
                        clock.shift(d, times)
                        i += times * period
                        last = None
                        continue
                delta = d
            last = snap
        step(i)
        i += 1


class ScheduleWalk:
    """Walks a schedule's statements into a ``PipeClock``; ``scalars`` holds the scalar
    values known so far (loop bounds of a pto.kernel), ``slots`` the current buffer slots."""

    def __init__(self, clock, buffers, scalars=None):
        self.clock, self.buffers = clock, buffers
        self.scalars = scalars
        self.slots = {"slot": 0, "kslot": 0}

    def event(self, e):
        if isinstance(e, tuple):
            return self.slots[e[0]] % self.buffers + e[1]
        return self.slots[e] if isinstance(e, str) else e

    def stmts(self, stmts, unit):
        for s in stmts:
            self.stmt(s, unit)

    def stmt(self, s, unit):
        c = self.clock
        if isinstance(s, Instr):
            c.instr(unit, s)
        elif isinstance(s, Flag):
            c.flag(unit, s, self.event(s.event))
        elif isinstance(s, CrossSync):
            c.cross_sync(unit, s)
        elif isinstance(s, CoreBlock) and s.core != CUBE and self.clock.split_rows:
            for u in self.clock.vector_units:        # each sub-block runs its half
                self.stmts(s.stmts, u)
        elif isinstance(s, CoreBlock):
            self.stmts(s.stmts, CUBE if s.core == CUBE else unit)
        elif isinstance(s, StaticK):
            self.slots["kslot"] = s.index % 2
            self.stmts(s.stmts, unit)
        elif isinstance(s, KLoop):
            self.loop(s.start, s.stop, s.stmts, unit)
        elif isinstance(s, Loop):
            self.kernel_loop(s, unit)
        elif isinstance(s, Let):
            loop_trips.let(s, self.scalars)
        elif isinstance(s, ScalarLoad):
            loop_trips.scalar_load(s, self.scalars)
        elif not isinstance(s, Barrier):
            raise AssertionError(f"pipe model: unknown statement {s!r}")

    def loop(self, start, stop, stmts, unit):
        def step(i):
            self.slots["kslot"] = (start + i) % 2
            self.stmts(stmts, unit)
        repeat(self.clock, max(0, stop - start), step)

    def kernel_loop(self, loop, unit):
        """A pto.kernel loop (nested ones too): each step sets the loop's index and its
        buffer slot; a loop whose steps differ (a nested loop's bounds depend on its index)
        is walked step by step, not extrapolated."""
        start, n = loop_trips.loop_steps(loop, self.scalars)
        slot = loop_slot(loop.depth)

        def step(i):
            if start is not None:
                self.scalars[loop.var] = np.int32(start + i)
            self.slots[slot] = ((start or 0) + i) % 2
            self.stmts(loop.stmts, unit)
        differ = start is not None and loop_trips.steps_differ(loop)
        repeat(self.clock, n, step, period=n + 1 if differ else PERIOD)

    def region(self, reg, units, owner):
        """One tile's region: the cross-core waits on every sub-block ``units`` (they come
        before the sub-block guard), the rest on ``owner``."""
        lets, waits, rest = region_order(reg.stmts)
        self.stmts(lets, owner)
        for u in units:
            self.stmts(waits, u)
        self.stmts(rest, owner)
