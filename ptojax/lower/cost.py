"""A cost model for tile kernels on a target (estimates, never measurements).

Per tile (from the kernel's instruction schedule, ``ptojax.lower.schedule``):

    DMA     sum over TLOAD/TSTORE windows of (bytes / per-core path bandwidth + issue cost);
            the first-byte latency is paid once per core (pipelined transfers hide it after)
    vector  sum over vector instructions of (issue cycles + ceil(bytes / vector bytes per cycle))
            where bytes = valid elements x element size of the instruction's destination (its
            source for reductions)
    cube    sum over TMATMUL[_ACC] of ceil(m/16) ceil(k/16) ceil(n/16) fractals x 4096 MACs /
            (MACs per cycle of the input dtype); TEXTRACT bytes (TIMG2COL: the im2col block
            written) / the L1->L0 bandwidth; a cycle per fmatrix register write

Those figures give each instruction its time on its pipe (``ptojax.lower.pipes``): MTE2,
MTE1, M (cube), FIX, V (vector), MTE3 are in-order queues that overlap, ordered only by the
schedule's flags and cross-core flags, so a core's time is its critical pipe or its
dependency chain, whichever is longer. Each block (a cube core with its vector sub-blocks,
or a vector core) runs its tiles in order; a kernel takes the slowest block plus the first-
byte latency and the launch overhead, and never less than its HBM time: each tensor it
touches crosses HBM once (re-reads of a tile by other cores, e.g. matmul panels, are assumed
to hit the L2 cache) at the HBM bandwidth. The bound is HBM when that floor dominates,
"latency" when the slowest block takes over 1.5x its busiest pipe's work (a chain of
dependent steps: one tile's load -> compute -> store with nothing to overlap, or cube <->
vector round trips), else the unit of that pipe (a DMA pipe counts as HBM; FIX, the cube's
L0C -> GM stores through the fixpipe, is "fixpipe": its rate is not HBM's). Tensor-level
equations left between kernels are estimated as memory-bound (bytes in + out over HBM).
Target figures are in ``ptojax.targets``; most are estimates, and nothing has been measured on
hardware.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

import numpy as np

from ptojax.ir.symbolic import evaluate, symbols_of
from ptojax.ir.types import TensorType
from ptojax.ir.pto import Instr
from ptojax.lower.pipes import (CUBE, PipeClock, ScheduleWalk, _elems,
                                instr_pipe_seconds, repeat, window_bytes)
from ptojax.lower.program_schedule import schedule_of
from ptojax.lower import loop_trips
from ptojax.lower.schedule import CoreBlock, KLoop, Let, Loop, ScalarLoad, StaticK
from ptojax.targets import get_target
from ptojax.tile import ops as T
from ptojax.tile.kernel import tile_kernel_p
from ptojax.ir.core import Literal, Var, print_eqn


@dataclass
class KernelCost:
    name: str
    kind: str
    tiles: int
    blocks: int
    bytes: int
    flops: int
    cycles: float
    seconds: float
    bound: str
    detail: dict = field(default_factory=dict)

    @property
    def us(self) -> float:
        return self.seconds * 1e6


@dataclass
class _TileCost:
    dma_s: float = 0.0
    vec_cycles: float = 0.0
    cube_cycles: float = 0.0
    bytes: int = 0
    flops: int = 0


def _walk(stmts, trip=1, scalars=None, vector_copies=1):
    """(instruction, times it runs); a vector block runs ``vector_copies`` times (on each
    sub-block of a kernel that splits the rows)."""
    for s in stmts:
        if isinstance(s, StaticK):
            yield from _walk(s.stmts, trip, scalars, vector_copies)
        elif isinstance(s, KLoop):
            yield from _walk(s.stmts, trip * max(0, s.stop - s.start), scalars, vector_copies)
        elif isinstance(s, CoreBlock):
            copies = vector_copies if s.core != CUBE else 1
            yield from _walk(s.stmts, trip * copies, scalars, vector_copies)
        elif isinstance(s, Loop):
            yield from _walk_loop(s, trip, scalars, vector_copies)
        elif isinstance(s, Let):
            loop_trips.let(s, scalars)
        elif isinstance(s, ScalarLoad):
            loop_trips.scalar_load(s, scalars)
        elif isinstance(s, Instr):
            yield s, trip


def _walk_loop(loop, trip, scalars, vector_copies=1):
    """A pto.kernel loop's instructions: its body times its trip count, or step by step
    when the loops nested in it run a number of steps that depends on its index (the inner
    trip counts are summed)."""
    start, n = loop_trips.loop_steps(loop, scalars)
    if start is None or not loop_trips.steps_differ(loop):
        yield from _walk(loop.stmts, trip * n, scalars, vector_copies)
        return
    for i in range(n):
        scalars[loop.var] = np.int32(start + i)
        yield from _walk(loop.stmts, trip, scalars, vector_copies)


BLOCK_INDEX = loop_trips.BLOCK_INDEX


def _program_scalars(reg, grid, t, block, known=None):
    """The scalars a pto.kernel tile starts from: its tile indices and block index, and
    ``known`` (the scalar operands the call gave, the user's trip count hint)."""
    named = {}
    for v, name in reg.names.items():       # the body's own ti/tj come first (loops alias)
        named.setdefault(name, v)
    ti, tj = grid.coords(t)
    return {**(known or {}), named["ti"]: np.int32(ti), named["tj"]: np.int32(tj),
            BLOCK_INDEX: np.int32(block)}


def _kernel_tile_costs(sched, known=None):
    """Per tile of a pto.kernel (its loops may run a number of steps that depends on the
    program): {tile: [(section, cost)]}."""
    grid, (sec,) = sched.grid, sched.sections
    costs = {}
    for block in range(grid.blocks):
        for t in grid.block_range(block):
            reg = sec.regions[grid.region_of(*grid.coords(t))]
            scalars = _program_scalars(reg, grid, t, block, known)
            costs[t] = [(sec, _tile_cost(reg.stmts, sched.target, scalars,
                                         split_rows=sec.row_split))]
    return costs


def _tile_cost(stmts, target, scalars=None, sizes=None, split_rows=0) -> _TileCost:
    """One tile's cost; ``scalars`` (a pto.kernel tile: its scalar values so far) gives the
    trip counts of loops with run-time bounds; ``sizes`` the value of a runtime valid row
    count (``tile.ops.runtime_valid_rows``)."""
    c = _TileCost()
    hz = target.clock_hz
    copies = target.vector_cores_per_cube if split_rows else 1
    for ins, n in _walk(stmts, 1, scalars, copies):
        pipe, seconds = instr_pipe_seconds(ins, target, sizes, split_rows)
        if pipe in ("MTE2", "MTE3", "FIX"):         # TLOAD / TSTORE
            c.dma_s += n * seconds
            c.bytes += n * window_bytes(ins.srcs[0], sizes)
        elif pipe in ("MTE1", "S", "M"):            # L1->L0 moves, fmatrix writes, matmuls
            c.cube_cycles += n * seconds * hz
            if pipe == "M":
                (vm, vk), (_, vn) = (T.valid_shape(ins.srcs[-2].type),
                                     T.valid_shape(ins.srcs[-1].type))
                c.flops += n * 2 * vm * vk * vn
        else:
            c.vec_cycles += n * seconds * hz
            src = ins.srcs[0] if ins.op.startswith(("TROW", "TCOL")) and "EXPAND" not in \
                ins.op else ins.dst
            c.flops += n * evaluate(_elems(src, split_rows), sizes or {})
    return c


def kernel_cost(eqn, sizes=None, known=None) -> KernelCost:
    """The kernel's cost; one with a runtime row count (a symbolic dimension) is estimated at
    the symbols' ``sizes`` (name -> int; default: their upper bounds). ``known``: the
    pto.kernel scalars the call determines (``loop_trips.OPERANDS``, ``TRIP_HINT``)."""
    sched = schedule_of(eqn)
    target = sched.target
    grid = sched.grid
    hz = target.clock_hz
    region_of, tile_sizes, params_sizes = grid.region_of, None, {}
    if grid.dynamic_rows:
        params_sizes = sizes or upper_bounds(grid.space[0])
        grid, region_of, tile_sizes = _at_rows(grid, grid.rows_at(params_sizes))
    elif grid.dynamic_cols:    # one tile spans the row: every tile has the runtime columns
        params_sizes = sizes or upper_bounds(grid.space[1])
        tile_sizes = {T.VALID_COLS: evaluate(grid.space[1], params_sizes)}
    per_region = {}
    for sec in sched.sections:
        for i, reg in enumerate(sec.regions):
            if sched.kind != "kernel":
                per_region.setdefault(i, []).append(
                    (sec, _tile_cost(reg.stmts, target, sizes=tile_sizes)))
    per_tile = _kernel_tile_costs(sched, known) if sched.kind == "kernel" else None

    def costs_of(t):
        return per_tile[t] if per_tile is not None else \
            per_region[region_of(*grid.coords(t))]
    worst, total_bytes, total_flops = 0.0, 0, 0
    parts = {"HBM": 0.0, "vector": 0.0, "cube": 0.0}
    for t in grid.block_range(0):
        for sec, c in costs_of(t):
            share = 0.5 if sec.split_subblocks else 1.0
            parts["HBM"] += c.dma_s * share
            parts["vector"] += c.vec_cycles / hz * share
            parts["cube"] += c.cube_cycles / hz * share
    memo, critical = {}, {}
    for block in range(grid.blocks):
        tiles = list(grid.block_range(block))
        key = None if per_tile is not None else tuple(region_of(*grid.coords(t))
                                                      for t in tiles)
        if key is None or key not in memo:
            clock = _block_clock(sched, block, tiles, grid, region_of, tile_sizes, known)
            memo[key] = (clock.finish(), clock.busy)
        busy, pipes = memo[key]
        if busy > worst:
            critical = pipes
        worst = max(worst, busy + (target.dma_latency_cycles / hz if busy else 0.0))
    for t in range(grid.num_tiles):
        for _, c in costs_of(t):
            total_bytes += c.bytes
            total_flops += c.flops
    unique = sum(evaluate(p.type.nbytes, params_sizes) for p in sched.params)
    hbm = min(total_bytes, unique) / target.hbm_bandwidth
    seconds = max(worst, hbm) + target.launch_overhead_s
    parts["HBM"] = max(parts["HBM"], hbm)
    bound = _bound(critical, hbm, parts, worst)
    detail = {k: v * 1e6 for k, v in parts.items()}
    detail["pipes"] = {f"{u}.{p}": v * 1e6 for (u, p), v in sorted(critical.items())}
    detail["slowest core"] = worst * 1e6
    return KernelCost(sched.name, sched.kind, grid.num_tiles, grid.blocks, total_bytes,
                      total_flops, seconds * hz, seconds, bound, detail)


PIPE_BOUND = {"MTE2": "HBM", "MTE3": "HBM", "FIX": "fixpipe", "M": "cube", "MTE1": "cube",
              "S": "cube", "V": "vector"}


LATENCY_SLACK = 1.5     # a core this many times slower than its busiest pipe mostly waits


def _bound(busy, hbm, parts, core_seconds):
    """What bounds a kernel: HBM when its traffic takes longer than any pipe's work;
    "latency" when the slowest core mostly waits (a chain of dependent steps longer than any
    pipe's work); else the unit of its busiest pipe."""
    if not busy:
        return max(parts, key=parts.get)
    (unit, pipe), seconds = max(busy.items(), key=lambda kv: kv[1])
    if hbm >= seconds:
        return "HBM"
    return "latency" if core_seconds > LATENCY_SLACK * seconds else PIPE_BOUND[pipe]


def _block_clock(sched, block, tiles, grid, region_of, sizes, known=None) -> PipeClock:
    """The pipes of one block (a cube core and its vector sub-blocks, or a vector core) after
    running its tiles: every section's prologue, tile loop and epilogue, in program order."""
    split = any(sec.split_subblocks or sec.row_split for sec in sched.sections)
    clock = PipeClock(sched.target, 2 if split else 1, sizes,
                      max(sec.row_split for sec in sched.sections))
    for sec in sched.sections:
        walk = ScheduleWalk(clock, sched.buffers)
        units = clock.vector_units if sec.split_subblocks else \
            [CUBE if sec.core == "cube" else clock.vector_units[0]]
        for u in units:
            walk.stmts(sec.prologue, u)
        if sched.kind == "kernel":
            for i, t in enumerate(tiles):
                reg = sec.regions[grid.region_of(*grid.coords(t))]
                walk.scalars = _program_scalars(reg, grid, t, block, known)
                walk.slots["slot"] = i % sched.buffers
                walk.region(reg, units, units[0])
        else:
            _tile_runs(walk, sec, units, tiles, grid, region_of, sched.buffers)
        for u in units:
            walk.stmts(sec.epilogue, u)
    return clock


def _tile_runs(walk, sec, units, tiles, grid, region_of, buffers):
    """A vector or cube section's tiles, run by run of one region (a run's steady state is
    extrapolated); split sub-blocks take alternate tiles, each its own buffer slots."""
    regions = [region_of(*grid.coords(t)) for t in tiles]
    handled = {u: 0 for u in units}
    i = 0
    while i < len(tiles):
        j = i
        while j < len(tiles) and regions[j] == regions[i]:
            j += 1
        reg, start = sec.regions[regions[i]], i

        def step(n, reg=reg, start=start):
            owner = units[(start + n) % len(units)]
            walk.slots["slot"] = handled[owner] % buffers
            handled[owner] += 1
            walk.region(reg, units, owner)
        repeat(walk.clock, j - i, step, period=buffers * len(units))
        i = j


def _at_rows(grid, rows):
    """(the static grid of ``rows`` rows, its tiles' regions in the runtime-row grid
    ``grid``, the value of the last grid row's runtime valid rows)."""
    static = T.TileGrid((rows, grid.space[1]), grid.tile, grid.blocks)
    last_row = -(-rows // grid.tile[0]) - 1
    regions = grid.regions()

    def region_of(ti, tj):
        vr, vc = static.valid(ti, tj)
        want = grid.tile[0] if ti < last_row else T.runtime_valid_rows(grid.tile[0])
        return regions.index((want, vc))
    return static, region_of, {T.VALID_ROWS: rows - last_row * grid.tile[0]}


def upper_bounds(*dims) -> dict:
    """name -> upper bound of every symbol in ``dims`` (a symbol without one: its lower
    bound)."""
    return {name: sym.hi if sym.hi is not None else sym.lo
            for name, sym in symbols_of(list(dims)).items()}


def _tensor_op_cost(eqn, target, sizes) -> KernelCost:
    nbytes = sum(evaluate(a.type.nbytes, sizes) for a in (*eqn.inputs, *eqn.outputs)
                 if isinstance(a.type, TensorType))
    seconds = nbytes / target.hbm_bandwidth + target.launch_overhead_s
    return KernelCost(f"({eqn.prim.name})", "tensor op", 0, 0, nbytes, 0,
                      seconds * target.clock_hz, seconds, "HBM (estimate)",
                      {"eqn": print_eqn(eqn)})


class CostReport:
    """Per-kernel estimates and the program total; prints as a table."""

    def __init__(self, rows, target, sizes=None):
        self.rows = rows
        self.target = target
        self.sizes = sizes or {}     # symbolic dimensions: the sizes estimated at

    @property
    def total_seconds(self) -> float:
        return sum(r.seconds for r in self.rows)

    @property
    def total_us(self) -> float:
        return self.total_seconds * 1e6

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]

    HEAD = ("kernel", "kind", "tiles", "blocks", "bytes", "flops", "cycles", "us", "bound")

    def _cells(self, r):
        return (r.name, r.kind, str(r.tiles), str(r.blocks), f"{r.bytes:,}", f"{r.flops:,}",
                f"{r.cycles:,.0f}", f"{r.us:.2f}", r.bound)

    def __str__(self):
        rows = [self.HEAD] + [self._cells(r) for r in self.rows]
        rows.append(("total", "", "", "", f"{sum(r.bytes for r in self.rows):,}",
                     f"{sum(r.flops for r in self.rows):,}",
                     f"{self.total_seconds * self.target.clock_hz:,.0f}",
                     f"{self.total_us:.2f}", ""))
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.HEAD))]
        lines = [f"cost estimate on {self.target.name} (a model, not a measurement)"]
        if self.sizes:
            lines.append("at the upper bound of the symbolic sizes: " + ", ".join(
                f"{name}={n}" for name, n in sorted(self.sizes.items())))
        for i, r in enumerate(rows):
            lines.append("  ".join(c.ljust(w) if j < 2 else c.rjust(w)
                                   for j, (c, w) in enumerate(zip(r, widths))))
            if i == 0 or i == len(rows) - 2:
                lines.append("  ".join("-" * w for w in widths))
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self):
        head = "".join(f"<th>{h}</th>" for h in self.HEAD)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in self._cells(r))
                       + "</tr>" for r in self.rows)
        total = (f"<tr><th>total</th><td colspan='6'></td><th>{self.total_us:.2f}</th>"
                 f"<td></td></tr>")
        at = "" if not self.sizes else " at the upper bound of the symbolic sizes: " + \
            html.escape(", ".join(f"{k}={n}" for k, n in sorted(self.sizes.items())))
        return (f"<p>cost estimate on <b>{self.target.name}</b> (a model, not a "
                f"measurement){at}</p><table><tr>{head}</tr>{body}{total}</table>")


def program_cost(closed, target, values=None, trip_count=None) -> CostReport:
    """The cost of each equation; ``values`` (one per input of ``closed``, None where not
    concrete) give the scalar operands of pto.kernel loops with run-time bounds their
    values; ``trip_count`` is the number of steps assumed for loops whose bounds they do not
    give."""
    target = get_target(target)
    ir = closed.ir if hasattr(closed, "ir") else closed
    sizes = upper_bounds(*(v.type.shape for v in ir.invars),
                         *(v.type.shape for e in ir.eqns for v in e.outputs))
    env = _known_values(closed, values)
    rows = [kernel_cost(e, sizes, _kernel_known(e, env, trip_count))
            if e.prim is tile_kernel_p else _tensor_op_cost(e, target, sizes) for e in ir.eqns]
    return CostReport(rows, target, sizes)


def _known_values(closed, values) -> dict:
    """Var -> concrete value: the program's inputs the call gave and its constants."""
    ir = closed.ir if hasattr(closed, "ir") else closed
    env = dict(zip(ir.constvars, getattr(closed, "consts", ()) or ()))
    for v, x in zip(ir.invars, values or ()):
        if x is not None:
            env[v] = x
    return env


def _kernel_known(eqn, env, trip_count) -> dict:
    """The pto.kernel scalars a kernel's call determines: its scalar (one-element) operands
    with known values, by parameter name, and the trip count hint."""
    operands = {}
    for i, a in enumerate(eqn.inputs):
        if getattr(a.type, "size", None) != 1:
            continue
        x = a.value if isinstance(a, Literal) else env.get(a) if isinstance(a, Var) else None
        if x is not None:
            operands[f"in{i}"] = x
    known = {loop_trips.OPERANDS: operands}
    if trip_count is not None:
        known[loop_trips.TRIP_HINT] = trip_count
    return known
