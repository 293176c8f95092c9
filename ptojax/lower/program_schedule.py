"""The instruction schedule of a ``pto.kernel`` (a ``tile_kernel`` of kind ``kernel``).

A kernel body interleaves cube and vector work in program order, with loops (``tile_loop``)
that may hold both — flash attention's KV loop computes scores on the cube, softmax on the
vector unit, then ``P @ V`` on the cube again. The schedule keeps that order: each
statement is tagged with its core (``CoreBlock``), so one source serves both cores' builds
(each compiles its own blocks) and the host build, which runs the whole body in program
order on one thread. The synchronization is derived, not fixed:

- pipes of one core: a vector-clock simulation of the core's instructions (two tiles, each
  loop body twice, a loop that may run zero times) finds every read-after-write,
  write-after-read and write-after-write between pipes on the same buffer bytes (buffers
  are placed by the memory plan, and may be reused) or GM tensor that is not yet ordered, and
  orders it with an adjacent ``set_flag``/``wait_flag`` pair before the later instruction;
- double-buffered (staging) tiles: a ring of events per (reader pipe -> writer pipe) and
  loop level, as in the vector and cube schedules — the writer waits for the copy it is
  about to fill (freed two iterations earlier), the readers free it after their last use —
  so the next tile or step loads while this one computes;
- cube <-> vector: each GM workspace carries data one way; the producer notifies the
  consumer after its store (``ready``), the consumer notifies back after its last load
  (``free``, with one initial credit), so a workspace is never overwritten early.

The vector side runs on sub-block 0 of each cube core (one AIV per AIC), or, for a kernel
whose vector tiles overflow one UB and whose vector work is row-independent (``row_split``,
``tile/row_split.py``), on both sub-blocks, each on half of every R-row vector tile: the tiles
are declared at R/2 rows, vector windows and the row iota start ``sub * R/2`` rows on, and the
memory plan is one sub-block's. Nothing here has run on Ascend hardware; the host build executes this schedule and, built with ``check_sync``,
checks every ordering it relies on.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptojax.errors import TileError
from ptojax.ir.core import ClosedIR, Literal, Var
from ptojax.ir.pto import Instr, RowView, Scratch, is_row_vector
from ptojax.ir.types import TileType
from ptojax.lower.pto_ops import lower_eqn
from ptojax.lower.schedule import (Barrier, CoreBlock, CrossSync, Flag, KernelSchedule, Let,
                                   Loop, Region, ScalarLoad, Section, TileDecl, Window,
                                   kernel_parameters, kernel_schedule)
from ptojax.tile import ops as T
from ptojax.tile.row_split import half_type, is_split

CUBE_PIPES = ("MTE1", "M", "FIX")
ADJACENT_EVENT = 7           # event of adjacent set/wait pairs (rings use the low ids)
EARLY_EVENT = 6              # event of pairs set right after the earlier access (same step)
MAX_CROSS_FLAGS = 16         # cross-core flag ids per kernel (FFTS)
MAX_FIX_ROUNDS = 8


def schedule_of(eqn) -> KernelSchedule:
    """The schedule of any ``tile_kernel`` equation."""
    if eqn.params["kind"] == "kernel":
        return program_schedule(eqn)
    return kernel_schedule(eqn)


@dataclass(eq=False)
class _Op:
    """One tile operation: its core, pipe, statements, and the buffers it reads/writes."""
    core: str
    pipe: str
    stmts: list
    reads: list
    writes: list
    eqn: object
    before: list = field(default_factory=list)    # statements inserted before it
    after: list = field(default_factory=list)


@dataclass(eq=False)
class _LoopItem:
    var: Var
    start: object
    stop: object
    decls: list
    items: list
    before: list = field(default_factory=list)
    after: list = field(default_factory=list)


def program_schedule(eqn) -> KernelSchedule:
    p = eqn.params
    target, params, plans = kernel_parameters(eqn)
    split = p.get("row_split", 0)
    builders = [_Builder(b, plan, params, p["grid"], i, p["buffers"], split)
                for i, (b, plan) in enumerate(zip(p["bodies"], plans))]
    for b in builders:
        b.walk()
    prologue, epilogue = [], []
    for b in builders:
        b.rings(prologue, epilogue)
    _order_pipes(builders)
    _cross_core(builders, prologue, epilogue)
    regions = [b.region() for b in builders]
    cube = any(op.core == "cube" for b in builders for op, _ in _flat_ops(b.items))
    section = Section("kernel", regions, _blocks(_dedup(prologue)), _blocks(_dedup(epilogue)),
                      one_subblock=cube and not split, row_split=split)
    return KernelSchedule(p["name"], "kernel", target, p["grid"], p["buffers"], params,
                          [section], tuple(p.get("accumulate", ())), eqn.source, None)


def _dedup(stmts):
    out, seen = [], set()
    for core, s in stmts:
        if (core, s) not in seen:
            seen.add((core, s))
            out.append((core, s))
    return out


def _core_of_pipe(pipe, fallback):
    if pipe in CUBE_PIPES:
        return "cube"
    if pipe in ("V", "MTE3"):
        return "vector"
    return fallback


class _Builder:
    """The statements of one region's body, before grouping by core."""

    def __init__(self, body, plan, params, grid, index, buffers, split=0):
        self.body, self.plan, self.grid, self.index = body, plan, grid, index
        self.buffers = buffers
        self.split = split              # R: each vector sub-block holds half of R-row tiles
        self.param_of = dict(zip(body.invars[2:], params))
        self.names = {body.invars[0]: "ti", body.invars[1]: "tj"}
        self.decl_of = {}
        self.decls = []
        self.counter = {"t": 0, "g": 0, "s": 0}
        self.items = []
        self.lets = []
        self.move_space = {}            # L1 tile -> the L0 space it is moved to

    # --- naming ------------------------------------------------------------------------------
    def fresh(self, prefix):
        n = self.counter[prefix]
        self.counter[prefix] += 1
        return f"{prefix}{n}"

    def decl(self, var, core, level, into):
        if var in self.decl_of:
            return self.decl_of[var]
        t = half_type(var.type, self.split)
        kind = {"L0A": "left", "L0B": "right", "L0C": "acc"}.get(t.space)
        if t.space == "L1":
            kind = "mat_a" if self.move_space.get(var) == "L0A" else "mat_b"
        if kind is None:
            kind = "vec_col" if is_row_vector(t) else "vec"
        d = TileDecl(self.fresh("t"), t, self.plan.slots[var], kind, level, core=core)
        if kind == "vec_col":
            d.row_view = d.name + "_r"
        self.names[var] = d.name
        self.decl_of[var] = d
        into.append(d)
        return d

    def scratch(self, eqn, level, into):
        key = ("scratch", eqn)
        if key not in self.decl_of:
            src = half_type(eqn.inputs[0].type, self.split)
            d = TileDecl(self.fresh("t"), TileType(src.shape, src.dtype, src.space, src.valid),
                         self.plan.scratch[eqn], "vec_col" if is_row_vector(src) else "scratch",
                         level, core="vector")
            if d.kind == "vec_col":
                d.row_view = d.name + "_r"
            self.decl_of[key] = d
            self.names[key] = d.name
            into.append(d)
        return self.decl_of[key]

    # --- walking the body --------------------------------------------------------------------
    def walk(self):
        for e in _all_eqns(self.body):
            if e.prim is T.tile_move_p:
                self.move_space[e.inputs[0]] = e.params["space"]
        self.items = self._items(self.body, 0, self.decls)

    def _items(self, ir, level, decls):
        items = []
        for e in ir.eqns:
            if e.prim is T.tile_loop_p:
                items.append(self._loop(e, level))
            elif e.prim is T.tile_block_index_p or not _is_tile_op(e):
                self.names[e.outputs[0]] = self.fresh("s")
                items.append(Let(e.outputs[0], e.prim, tuple(e.inputs)))
            elif e.prim is T.tile_scalar_load_p:
                self.names[e.outputs[0]] = self.fresh("s")
                items.append(ScalarLoad(e.outputs[0], self.param_of[e.inputs[0]]))
            else:
                items.append(self._op(e, level, decls))
        return items

    def _loop(self, e, level):
        if level:
            raise TileError("kernel body: a loop inside a loop; kernels support one level of "
                            "pto.kernel.fori", e.source)
        body = e.params["body"]
        body = body.ir if isinstance(body, ClosedIR) else body
        carries, invariants, start, stop = T.loop_operands(list(e.inputs), e.params)
        kv = body.invars[0]
        self.names[kv] = "k"
        for inner, outer in zip(body.invars[1:], [*carries, *invariants]):
            self._alias(inner, outer)
        decls = []
        items = self._items(body, level + 1, decls)
        for res, inner_out, inner_in in zip(e.outputs, body.outvars, body.invars[1:]):
            self._alias(res, inner_in)
        return _LoopItem(kv, start, stop, decls, items)

    def _alias(self, inner, outer):
        if isinstance(inner.type, TileType):
            self.decl_of[inner] = self.decl_of[outer]
            self.names[inner] = self.names[outer]
        elif outer in self.param_of:
            self.param_of[inner] = self.param_of[outer]
        elif type(outer) is Literal:
            self.names[inner] = None
        else:
            self.names[inner] = self.names.get(outer, str(outer))

    def _op(self, e, level, decls):
        if e.prim is T.tile_load_p:
            core = "cube" if e.params["space"] == "L1" else "vector"
            self.decl(e.outputs[0], core, level, decls)
            g = self._window(e.inputs[0], e.inputs[1], e.inputs[2], e.params,
                             e.outputs[0].type)
            return _Op(core, "MTE2", [Instr("TLOAD", e.outputs[0], (g,))],
                       [("gm", g.param.name)], [("tile", e.outputs[0])], e)
        if e.prim is T.tile_store_p:
            tile = e.inputs[1]
            cube = tile.type.space == "L0C"
            g = self._window(e.inputs[0], e.inputs[2], e.inputs[3], e.params, tile.type)
            self.param_of[e.outputs[0]] = g.param      # the stored tensor is the parameter
            return _Op("cube" if cube else "vector", "FIX" if cube else "MTE3",
                       [Instr("TSTORE", None, (g, tile),
                              {"atomic": e.params.get("atomic", False)})],
                       [("tile", tile)], [("gm", g.param.name)], e)
        cube = e.prim in (T.tile_move_p, T.tile_matmul_p, T.tile_matmul_acc_p)
        core = "cube" if cube else "vector"
        if e.prim is T.tile_matmul_acc_p:          # accumulates in place
            self.decl_of[e.outputs[0]] = self.decl_of[e.inputs[0]]
            self.names[e.outputs[0]] = self.names[e.inputs[0]]
        else:
            for v in e.outputs:
                self.decl(v, core, level, decls)
        instrs = lower_eqn(e)
        if e.prim is T.tile_iota_p and is_split(e.outputs[0].type, self.split):
            instrs = [Instr(x.op, x.dst, x.srcs, {**x.attrs, "sub_start": self.split // 2})
                      for x in instrs]      # sub-block ``sub`` starts sub * R/2 rows on
        reads, writes = [], []
        for ins in instrs:
            for op in ins.srcs:
                r = _resource(op)
                if r is not None:
                    reads.append(r)
                if isinstance(op, Scratch):
                    self.scratch(op.eqn, level, decls)
                    writes.append(r)
            w = _resource(ins.dst)
            if w is not None:
                writes.append(w)
        pipe = {T.tile_move_p: "MTE1", T.tile_matmul_p: "M",
                T.tile_matmul_acc_p: "M"}.get(e.prim, "V")
        return _Op(core, pipe, instrs, reads, writes, e)

    def _window(self, gm, r0, c0, params, tile_type):
        split = is_split(tile_type, self.split)
        vr, vc = T.valid_shape(half_type(tile_type, self.split))
        return Window(self.fresh("g"), self.param_of[gm], params["view"],
                      params.get("transpose", False), r0, c0, vr, vc,
                      self.split // 2 if split else 0)

    # --- rings for staging tiles -------------------------------------------------------------
    def rings(self, prologue, epilogue):
        """Ring events for double-buffered tiles at each level (tiles; the loop's steps)."""
        self._rings(self.items, 0, prologue, epilogue)
        for item in self.items:
            if isinstance(item, _LoopItem):
                self._rings(item.items, 1, item.before, item.after)

    def _rings(self, items, level, before, after):
        groups = {}                     # (reader pipe, writer pipe, core) -> (first w, last r)
        flat = list(_flat_ops(items))
        for pos, (op, top) in enumerate(flat):
            for kind, var in op.writes:
                if kind == "tile" and self._staging(var, level):
                    for rpipe in self._reader_pipes(var, flat):
                        if rpipe != op.pipe:
                            g = groups.setdefault((rpipe, op.pipe, op.core), [None, None])
                            g[0] = top if g[0] is None else g[0]
            for kind, var in op.reads:
                if kind == "tile" and self._staging(var, level):
                    wpipe = self._writer_pipe(var, flat)
                    if wpipe is not None and wpipe != op.pipe:
                        g = groups.setdefault((op.pipe, wpipe, op.core), [None, None])
                        g[1] = top
        offset = 0 if level == 0 else self.buffers
        slot = "slot" if level == 0 else "kslot"
        for (rpipe, wpipe, core), (first, last) in groups.items():
            if first is None or last is None:
                continue
            for c in range(self.buffers):
                before.append((core, Flag("set", rpipe, wpipe, c + offset)))
                after.append((core, Flag("wait", rpipe, wpipe, c + offset)))
            first.before.append((core, Flag("wait", rpipe, wpipe, (slot, offset))))
            last.after.append((core, Flag("set", rpipe, wpipe, (slot, offset))))

    def _staging(self, var, level):
        slot = self.plan.slots.get(var)
        return slot is not None and slot.staging and slot.copies > 1 and slot.level == level

    def _reader_pipes(self, var, flat):
        slot = self.plan.slots[var]
        return {op.pipe for op, _ in flat for k, v in op.reads
                if k == "tile" and self.plan.slots.get(v) is slot}

    def _writer_pipe(self, var, flat):
        slot = self.plan.slots[var]
        for op, _ in flat:
            for k, v in op.writes:
                if k == "tile" and self.plan.slots.get(v) is slot:
                    return op.pipe
        return None

    # --- statements --------------------------------------------------------------------------
    def region(self) -> Region:
        stmts = _statements(self.items)
        return Region(self.index, self.grid.region_conditions(self.index), self.decls, stmts,
                      self.names)


def _is_tile_op(e) -> bool:
    return any(isinstance(v.type, TileType) for v in (*e.inputs, *e.outputs)) or \
        e.prim in (T.tile_store_p, T.tile_load_p, T.tile_scalar_load_p)


def _all_eqns(ir):
    for e in ir.eqns:
        yield e
        if e.prim is T.tile_loop_p:
            body = e.params["body"]
            yield from _all_eqns(body.ir if isinstance(body, ClosedIR) else body)


def _resource(op):
    if isinstance(op, RowView):
        op = op.var
    if isinstance(op, Scratch):
        return ("scratch", op.eqn)
    if isinstance(op, Var) and isinstance(op.type, TileType):
        return ("tile", op)
    return None


def _flat_ops(items):
    """(op, top-level item containing it) for every op, in program order."""
    for it in items:
        if isinstance(it, _Op):
            yield it, it
        elif isinstance(it, _LoopItem):
            for op, _ in _flat_ops(it.items):
                yield op, it


# --- ordering the pipes of one core: a vector-clock simulation ---------------------------------
PIPES = ("MTE2", "MTE1", "M", "FIX", "V", "MTE3")


class _Clocks:
    """What each pipe of one core has issued, and what it knows is done."""

    def __init__(self):
        self.clock = {p: 0 for p in PIPES}
        self.known = {p: {q: 0 for q in PIPES} for p in PIPES}
        self.records = []        # [space, lo, hi, writer (pipe, seq) | None, {pipe: seq}]

    def copy(self):
        c = _Clocks()
        c.clock = dict(self.clock)
        c.known = {p: dict(k) for p, k in self.known.items()}
        c.records = [[s, lo, hi, w, dict(r)] for s, lo, hi, w, r in self.records]
        return c

    def progress(self, q):
        k = dict(self.known[q])
        k[q] = self.clock[q]
        return k

    def order(self, q, p):
        """An adjacent set_flag(q, p)/wait_flag(q, p): p knows all q has issued is done."""
        for r, v in self.progress(q).items():
            self.known[p][r] = max(self.known[p][r], v)

    def meet(self, other):
        """Knowledge true on both paths (a loop that may not run)."""
        for p in PIPES:
            for q in PIPES:
                self.known[p][q] = min(self.known[p][q], other.known[p][q])
        self.records += other.records


class _Simulation:
    """Runs one core's ops over two tiles (regions ``first`` then ``second``), each loop body
    twice, and records the pairs that order unordered conflicting accesses. When the latest
    conflicting access is an op of the same statement list -- earlier in the same step, or
    later in the step before (a loop-carried buffer) -- its pipe sets the flag right after it
    and the later op waits for that set (``early``: it waits for that op, not for all its
    pipe was given since; a loop-carried one also sets before the loop and waits after it);
    else an adjacent pair before the later op orders it."""

    def __init__(self, core, pairs, buffers, early=None, entry=None):
        self.core = core
        self.pairs = pairs           # id(op) -> set of (src pipe, dst pipe)
        self.early = {} if early is None else early   # id(op) -> {(src, dst): earlier op}
        self.entry = {} if entry is None else entry   # id(op) -> pairs only a loop's entry asked
        self.buffers = buffers
        self.changed = False
        self.rings = {}              # ring event -> what its sets knew, oldest first

    def run(self, first, second):
        st = _Clocks()
        self.rings = {}
        self.by_seq = {}             # (pipe, seq) -> (op, its step context)
        self.fired = {}              # (id(earlier op), src, dst) -> what its set knew
        self.sets_after = {}         # id(earlier op) -> {(src, dst)} set right after it
        for later in self.early.values():
            for key, earlier in later.items():
                self.sets_after.setdefault(id(earlier), set()).add(key)
        self._items(first.items, st, [0], first)
        self._items(second.items, st, [1], second)

    def _items(self, items, st, copies, builder):
        ctx = (id(items), tuple(copies))
        for it in items:
            if isinstance(it, _Op):
                self._ring_flags(it.before, st, copies)
                if it.core == self.core:
                    self._op(it, st, copies, builder, ctx)
                self._ring_flags(it.after, st, copies)
            elif isinstance(it, _LoopItem):
                self._ring_flags(it.before, st, copies)
                self._loop_entry(it.items, st)
                before = st.copy()
                for i in range(2):
                    self._items(it.items, st, copies + [i], builder)
                st.meet(before)
                self._ring_flags(it.after, st, copies)

    def _loop_entry(self, items, st):
        """The sets before a loop of its loop-carried early pairs: what each pipe has done."""
        ops = [it for it in items if isinstance(it, _Op)]
        pos = {id(o): i for i, o in enumerate(ops)}
        for o in ops:
            for (src, dst), earlier in self.early.get(id(o), {}).items():
                if pos.get(id(earlier), -1) > pos[id(o)]:
                    self.fired[(id(earlier), src, dst)] = st.progress(src)

    def _ring_flags(self, flags, st, copies):
        """The staging rings' flags (``Builder.rings``): a wait gives its pipe what the
        matching set's pipe had done when it fired, so the rings order what they cover."""
        for core, f in flags:
            if core != self.core or not isinstance(f, Flag):
                continue
            if isinstance(f.event, tuple):
                copy = copies[0] if f.event[0] == "slot" else copies[-1]
                event = copy % self.buffers + f.event[1]
            else:
                event = f.event
            key = (f.src, f.dst, event)
            if f.action == "set":
                self.rings.setdefault(key, []).append(st.progress(f.src))
            elif self.rings.get(key):
                for r, v in self.rings[key].pop(0).items():
                    st.known[f.dst][r] = max(st.known[f.dst][r], v)

    def _ranges(self, res, copies, builder):
        kind, x = res
        if kind == "gm":
            return [("GM:" + x, 0, 1)]
        plan = builder.plan
        slot = plan.scratch[x] if kind == "scratch" else plan.slots[x]
        if kind == "scratch":
            nbytes = x.inputs[0].type.size * x.inputs[0].type.dtype.itemsize
        else:
            nbytes = x.type.size * x.type.dtype.itemsize
        lvl = min(slot.level, len(copies) - 1)
        addr = slot.address(copies[lvl])
        return [(slot.space, addr, addr + nbytes)]

    def _op(self, op, st, copies, builder, ctx):
        p = op.pipe
        for (src, dst), earlier in self.early.get(id(op), {}).items():
            known = self.fired.get((id(earlier), src, dst))
            if known is None:            # its set has not run: order it all
                st.order(src, dst)
            else:
                for r, v in known.items():
                    st.known[dst][r] = max(st.known[dst][r], v)
        for src, dst in self.pairs.get(id(op), ()):
            st.order(src, dst)
        latest = {}                      # pipe -> the latest unordered conflicting seq on it
        for write, resources in ((False, op.reads), (True, op.writes)):
            for res in resources:
                for space, lo, hi in self._ranges(res, copies, builder):
                    for q, seq in self._hazards(st, p, space, lo, hi, write):
                        latest[q] = max(latest.get(q, 0), seq)
        for q, seq in latest.items():
            self._order(op, q, p, ctx, *self.by_seq.get((q, seq), (None, None)))
            st.order(q, p)
        st.clock[p] += 1
        seq = st.clock[p]
        self.by_seq[(p, seq)] = (op, ctx)
        for write, resources in ((False, op.reads), (True, op.writes)):
            for res in resources:
                for space, lo, hi in self._ranges(res, copies, builder):
                    self._record(st, p, seq, space, lo, hi, write)
        for (src, dst) in self.sets_after.get(id(op), ()):
            self.fired[(id(op), src, dst)] = st.progress(src)

    def _order(self, op, q, p, ctx, earlier, where):
        """Records how ``op`` (on ``p``) waits for ``earlier`` (on ``q``, in ``where``)."""
        same_list = where is not None and where[0] == ctx[0] and len(ctx[1]) > 1
        step = same_list and where[1] == ctx[1]
        carried = same_list and where[1][:-1] == ctx[1][:-1] and \
            where[1][-1] == ctx[1][-1] - 1
        early = self.early.setdefault(id(op), {})
        if step or carried:
            if early.get((q, p)) is not earlier:
                early[(q, p)] = earlier
                self.sets_after.setdefault(id(earlier), set()).add((q, p))
                self.changed = True
            if carried and (q, p) in self.entry.get(id(op), ()):
                self.entry[id(op)].discard((q, p))      # its set before the loop orders it
                self.pairs[id(op)].discard((q, p))
                self.changed = True
            return
        pairs = self.pairs.setdefault(id(op), set())
        if (q, p) not in pairs:
            pairs.add((q, p))
            self.changed = True
            if len(ctx[1]) > 1 and ctx[1][-1] == 0 and (q, p) not in early:
                self.entry.setdefault(id(op), set()).add((q, p))    # a loop's first step

    @staticmethod
    def _hazards(st, p, space, lo, hi, write):
        for rec in st.records:
            s, rlo, rhi, writer, readers = rec
            if s != space or rhi <= lo or hi <= rlo:
                continue
            hazards = [writer] if writer is not None else []
            if write:
                hazards += list(readers.items())
            for q, seq in hazards:
                if q != p and st.known[p][q] < seq:
                    yield q, seq

    @staticmethod
    def _record(st, p, seq, space, lo, hi, write):
        for rec in st.records:
            if rec[0] == space and rec[1] == lo and rec[2] == hi:
                if write:
                    rec[3], rec[4] = (p, seq), {}
                else:
                    rec[4][p] = seq
                return
        st.records.append([space, lo, hi, (p, seq) if write else None,
                           {} if write else {p: seq}])


def _order_pipes(builders):
    """Set/wait pairs for every unordered conflict on each core (to a fixpoint): set right
    after the earlier access when it is in the same step, else adjacent before the later."""
    pairs, early, entry = {}, {}, {}
    buffers = builders[0].buffers
    for core in ("cube", "vector"):
        for _ in range(MAX_FIX_ROUNDS):
            sim = _Simulation(core, pairs, buffers, early, entry)
            for a in builders:
                for b in builders:
                    sim.run(a, b)
            if not sim.changed:
                break
    for b in builders:
        _early_pairs(b.items, early, pairs)
        for op, _ in _flat_ops(b.items):
            for src, dst in sorted(pairs.get(id(op), ())):
                op.before.append((op.core, Flag("set", src, dst, ADJACENT_EVENT)))
                op.before.append((op.core, Flag("wait", src, dst, ADJACENT_EVENT)))


def _early_pairs(items, early, pairs, loop=None):
    """Emits the early pairs of one statement list (and of its loops' bodies): a set after
    the earlier op, a wait before the later; a loop-carried one (the earlier op later in the
    body) also sets before the loop and waits after it. Per (src, dst), one loop-carried pair
    or non-overlapping same-step pairs (one set pending at a time); the others become
    adjacent pairs (stronger)."""
    ops = [it for it in items if isinstance(it, _Op)]
    pos = {id(o): i for i, o in enumerate(ops)}
    links = {}
    for it in items:
        if isinstance(it, _LoopItem):
            _early_pairs(it.items, early, pairs, it)
    for o in ops:
        for (src, dst), earlier in early.get(id(o), {}).items():
            if (src, dst) in pairs.get(id(o), ()):
                continue                 # an adjacent pair orders it already
            if id(earlier) not in pos or (pos[id(earlier)] > pos[id(o)] and loop is None):
                pairs.setdefault(id(o), set()).add((src, dst))
                continue
            links.setdefault((src, dst), []).append((pos[id(earlier)], pos[id(o)], earlier, o))
    for (src, dst), group in links.items():
        carried = [g for g in group if g[0] > g[1]]
        keep = carried[:1] if len(carried) == 1 and len(group) == 1 else []
        if not carried:
            busy = -1
            for start, end, earlier, later in sorted(group, key=lambda g: (g[0], g[1])):
                if busy <= start:
                    keep.append((start, end, earlier, later))
                    busy = end
        for g in group:
            start, end, earlier, later = g
            if g not in keep:
                pairs.setdefault(id(later), set()).add((src, dst))
                continue
            earlier.after.append((earlier.core, Flag("set", src, dst, EARLY_EVENT)))
            later.before.append((later.core, Flag("wait", src, dst, EARLY_EVENT)))
            if start > end:
                loop.before.append((later.core, Flag("set", src, dst, EARLY_EVENT)))
                loop.after.append((later.core, Flag("wait", src, dst, EARLY_EVENT)))


# --- cube <-> vector through workspaces --------------------------------------------------------
def _cross_core(builders, prologue, epilogue):
    """Ready/free notifications for every workspace one core stores and the other loads.
    Each store waits for a free copy and signals ready; each group of the consumer's loads
    between two stores in one scope waits for ready before its first load and frees the
    workspace after its last. A group may precede its store in a loop body (a value carried
    in its workspace across a step: stored in step j, loaded in step j + 1) or follow it in
    another scope (stored before a loop, loaded in it; stored in a loop, loaded after it)."""
    flags = {}
    for b in builders:
        events = {}
        for op, scope in _scoped_ops(b.items):
            if op.eqn.prim is T.tile_store_p and op.writes[0][0] == "gm":
                events.setdefault(op.writes[0][1], []).append(("store", op, scope))
            elif op.eqn.prim is T.tile_load_p:
                events.setdefault(op.reads[0][1], []).append(("load", op, scope))
        for name, evs in events.items():
            sts = [op for kind, op, _ in evs if kind == "store"]
            if not sts:
                continue
            producer = sts[0].core
            groups = _load_groups(evs, producer)
            if not groups:
                continue
            consumer = groups[0][0][0].core
            if name not in flags:
                flags[name] = (2 * len(flags), 2 * len(flags) + 1, producer)
                if 2 * len(flags) > MAX_CROSS_FLAGS:
                    raise TileError(f"kernel: more than {MAX_CROSS_FLAGS // 2} cube <-> "
                                    f"vector transfers; fuse some of the kernel's steps")
                # one credit per workspace, also when sequential loops share it
                prologue.append((consumer, CrossSync("set", flags[name][1], "MTE2")))
                epilogue.append((producer, CrossSync("wait", flags[name][1])))
            ready, free, first_producer = flags[name]
            assert producer == first_producer, f"workspace {name} changed direction"
            for st in sts:
                st.before.append((producer, CrossSync("wait", free)))
                st.after.append((producer, CrossSync("set", ready, st.pipe)))
            stored_in = {id(sc) for kind, _, sc in evs if kind == "store"}
            for lds, scope in groups:
                # a loop that only reads the value (a carry it passes through) waits for it
                # once, before the loop, and frees it after
                first, last = (scope, scope) if scope is not None and \
                    id(scope) not in stored_in else (lds[0], lds[-1])
                first.before.append((consumer, CrossSync("wait", ready)))
                last.after.append((consumer, CrossSync("set", free, "MTE2")))


def _load_groups(events, producer) -> list:
    """The other core's loads of one workspace, grouped, each with its loop (or None): a
    group ends at a store or where the loads leave their scope."""
    groups, scope = [], False
    for kind, op, sc in events:
        if kind == "store":
            scope = False
        elif op.core != producer:
            if groups and scope is sc:
                groups[-1][0].append(op)
            else:
                groups.append(([op], sc))
                scope = sc
    return groups


def _scoped_ops(items, loop=None):
    """(op, the loop holding it or None) for every op, in program order."""
    for it in items:
        if isinstance(it, _Op):
            yield it, loop
        elif isinstance(it, _LoopItem):
            yield from _scoped_ops(it.items, it)


# --- grouping statements by core ---------------------------------------------------------------
def _statements(items) -> list:
    """Flat statements of items (with their inserted flags), grouped into CoreBlocks."""
    tagged = []
    for it in items:
        if isinstance(it, _Op):
            tagged += it.before
            tagged += [(it.core, s) for s in it.stmts]
            tagged += it.after
        elif isinstance(it, _LoopItem):
            tagged += it.before
            tagged.append((None, Loop(it.var, it.start, it.stop, it.decls,
                                      _statements(it.items))))
            tagged += it.after
        else:
            tagged.append((None, it))
    return _blocks(tagged)


def _blocks(tagged) -> list:
    out = []
    for core, s in tagged:
        if core is None:
            out.append(s)
        elif out and isinstance(out[-1], CoreBlock) and out[-1].core == core:
            out[-1].stmts.append(s)
        else:
            out.append(CoreBlock(core, [s]))
    for b in out:
        if isinstance(b, CoreBlock) and b.core == "vector":
            b.stmts[:] = _barriers(b.stmts)
    return out


def _barriers(stmts):
    """pipe_barrier(PIPE_V) before a vector instruction reading or overwriting a buffer an
    earlier vector instruction wrote (or, first in its block, after any earlier block)."""
    out, written, first = [], set(), True
    for s in stmts:
        if isinstance(s, Instr) and s.pipe == "V":
            dst = _resource(s.dst)
            srcs = {_resource(x) for x in s.srcs} - {None}
            if first or (srcs & written) or (dst is not None and dst in written):
                out.append(Barrier("V"))
                written = set()
            first = False
            if dst is not None:
                written.add(dst)
        out.append(s)
    return out
