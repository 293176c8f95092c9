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

from ptojax.ir.core import ClosedIR, Literal
from ptojax.ir.pto import Instr, Scratch, is_row_vector
from ptojax.ir.types import TileType
from ptojax.lower.cross_core import cross_core
from ptojax.lower.pipe_order import order_pipes
from ptojax.lower.pto_ops import lower_eqn
from ptojax.lower.schedule import (Barrier, CoreBlock, Flag, KernelSchedule, Let, Loop, Region,
                                   ScalarLoad, Section, TileDecl, Window, kernel_parameters,
                                   kernel_schedule)
from ptojax.lower.schedule_items import (LoopItem, Op, flat_ops, loop_slot, loop_var_name,
                                         resource, ring_offset)
from ptojax.tile import ops as T
from ptojax.tile.row_split import half_type, is_split

CUBE_PIPES = ("MTE1", "M", "FIX")


def schedule_of(eqn) -> KernelSchedule:
    """The schedule of any ``tile_kernel`` equation."""
    if eqn.params["kind"] == "kernel":
        return program_schedule(eqn)
    return kernel_schedule(eqn)



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
    order_pipes(builders)
    cross_core(builders, prologue, epilogue, p["name"], eqn.source,
               p.get("workspace_depths", ()))
    regions = [b.region() for b in builders]
    cube = any(op.core == "cube" for b in builders for op, _ in flat_ops(b.items))
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
        self.entry, self.exit = [], []  # per-program credits of multi-copy workspaces
        self.lets = []
        self.move_space = {}            # L1 tile -> the L0 space it is moved to
        self.scalar_of = {}             # a loop body's scalar operand -> the outer value

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
        outer_of = {}           # a loop body's operand -> the value entering the loop
        for e in _all_eqns(self.body):
            if e.prim is T.tile_loop_p:
                body = e.params["body"]
                body = body.ir if isinstance(body, ClosedIR) else body
                carries, invariants, _, _ = T.loop_operands(list(e.inputs), e.params)
                outer_of.update(zip(body.invars[1:], [*carries, *invariants]))
        for e in _all_eqns(self.body):
            if e.prim is T.tile_move_p:    # an L1 tile defined outside the loop extracting it
                v = e.inputs[0]            # (a query block kept in L1) takes its layout too
                while v is not None:
                    self.move_space[v] = e.params["space"]
                    v = outer_of.get(v)
        self.items = self._items(self.body, 0, self.decls)

    def _items(self, ir, level, decls):
        items = []
        for e in ir.eqns:
            if e.prim is T.tile_loop_p:
                items.append(self._loop(e, level))
            elif e.prim is T.tile_block_index_p or not _is_tile_op(e):
                self.names[e.outputs[0]] = self.fresh("s")
                items.append(Let(e.outputs[0], e.prim, tuple(map(self._scalar, e.inputs)),
                                 e.params))
            elif e.prim is T.tile_scalar_load_p:
                self.names[e.outputs[0]] = self.fresh("s")
                items.append(ScalarLoad(e.outputs[0], self.param_of[e.inputs[0]]))
            else:
                items.append(self._op(e, level, decls))
        return items

    def _loop(self, e, level):
        """A loop at depth ``level + 1`` (loops nest: its body's loops are items of it)."""
        depth = level + 1
        ring_offset(depth, self.buffers, e.source)      # its ring events exist
        body = e.params["body"]
        body = body.ir if isinstance(body, ClosedIR) else body
        carries, invariants, start, stop = T.loop_operands(list(e.inputs), e.params)
        start, stop = self._scalar(start), self._scalar(stop)
        kv = body.invars[0]
        self.names[kv] = loop_var_name(depth)
        for inner, outer in zip(body.invars[1:], [*carries, *invariants]):
            self._alias(inner, outer)
        decls = []
        items = self._items(body, depth, decls)
        for res, inner_out, inner_in in zip(e.outputs, body.outvars, body.invars[1:]):
            self._alias(res, inner_in)
            if inner_out is not inner_in and inner_out in self.decl_of \
                    and isinstance(inner_in.type, TileType):
                self.decl_of[inner_out].carries = self.names[inner_in]
        return LoopItem(kv, start, stop, decls, items, depth=depth, source=e.source)

    def _alias(self, inner, outer):
        if isinstance(inner.type, TileType):
            self.decl_of[inner] = self.decl_of[outer]
            self.names[inner] = self.names[outer]
        elif outer in self.param_of:
            self.param_of[inner] = self.param_of[outer]
        elif type(outer) is Literal:
            self.names[inner] = None
            self.scalar_of[inner] = outer
        else:
            self.names[inner] = self.names.get(outer, str(outer))
            self.scalar_of[inner] = self._scalar(outer)

    def _scalar(self, a):
        """The scalar a loop body's operand stands for (a value of an enclosing scope passed
        into the loop), so the schedule's lets and bounds name one variable per value."""
        return self.scalar_of.get(a, a) if type(a) is not Literal else a

    def _op(self, e, level, decls):
        if e.prim is T.tile_load_p:
            core = "cube" if e.params["space"] == "L1" else "vector"
            self.decl(e.outputs[0], core, level, decls)
            g = self._window(e.inputs[0], e.inputs[1], e.inputs[2], e.params,
                             e.outputs[0].type)
            return Op(core, "MTE2", [Instr("TLOAD", e.outputs[0], (g,))],
                       [("gm", g.param.name)], [("tile", e.outputs[0])], e)
        if e.prim is T.tile_store_p:
            tile = e.inputs[1]
            cube = tile.type.space == "L0C"
            g = self._window(e.inputs[0], e.inputs[2], e.inputs[3], e.params, tile.type)
            self.param_of[e.outputs[0]] = g.param      # the stored tensor is the parameter
            return Op("cube" if cube else "vector", "FIX" if cube else "MTE3",
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
                r = resource(op)
                if r is not None:
                    reads.append(r)
                if isinstance(op, Scratch):
                    self.scratch(op.eqn, level, decls)
                    writes.append(r)
            w = resource(ins.dst)
            if w is not None:
                writes.append(w)
        pipe = {T.tile_move_p: "MTE1", T.tile_matmul_p: "M",
                T.tile_matmul_acc_p: "M"}.get(e.prim, "V")
        return Op(core, pipe, instrs, reads, writes, e)

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
        self._loop_rings(self.items)

    def _loop_rings(self, items):
        """The rings of every loop's steps, at every nesting depth."""
        for item in items:
            if isinstance(item, LoopItem):
                self._rings(item.items, item.depth, item.before, item.after)
                self._loop_rings(item.items)

    def _rings(self, items, level, before, after):
        """A ring per (reader pipe, writer pipe, core) over the level's double-buffered
        staging tiles, its copy the step's parity: the first writer waits for the copy, the
        last reader frees it. The K steps of a matmul split along K (``Slot.k_copy``) have a
        ring of their own on the same events, its copy the K step's parity (static): the
        first writer of that parity's buffers waits, their last reader frees them -- unless
        the level's step ring takes that pipe pair's events (then ``order_pipes`` orders
        those buffers)."""
        flat = list(flat_ops(items))
        steps = _ring_groups(flat, lambda v: self._staging(v, level), self.plan)
        kcopies = _ring_groups(flat, lambda v: self._k_copy(v, level), self.plan,
                               lambda v: self.plan.slots[v].k_copy)
        offset = ring_offset(level, self.buffers)
        slot = loop_slot(level)
        for (rpipe, wpipe, core), (first, last) in steps.items():
            self._ring(before, after, core, rpipe, wpipe, offset)
            first.before.append((core, Flag("wait", rpipe, wpipe, (slot, offset))))
            last.after.append((core, Flag("set", rpipe, wpipe, (slot, offset))))
        pairs = {key[:3] for key in kcopies} - set(steps)
        for rpipe, wpipe, core in pairs:
            self._ring(before, after, core, rpipe, wpipe, offset)
        for (rpipe, wpipe, core, copy), (first, last) in kcopies.items():
            if (rpipe, wpipe, core) in pairs:
                first.before.append((core, Flag("wait", rpipe, wpipe, offset + copy)))
                last.after.append((core, Flag("set", rpipe, wpipe, offset + copy)))

    def _ring(self, before, after, core, rpipe, wpipe, offset):
        """A ring's events, each set once before the level's loop and waited for after it."""
        for c in range(self.buffers):
            before.append((core, Flag("set", rpipe, wpipe, c + offset)))
            after.append((core, Flag("wait", rpipe, wpipe, c + offset)))

    def _staging(self, var, level):
        slot = self.plan.slots.get(var)
        return slot is not None and slot.staging and slot.copies > 1 and slot.level == level

    def _k_copy(self, var, level):
        slot = self.plan.slots.get(var)
        return slot is not None and slot.staging and slot.k_copy is not None and \
            slot.level == level and self.buffers >= 2

    # --- statements --------------------------------------------------------------------------
    def region(self) -> Region:
        stmts = _blocks(self.entry) + _statements(self.items) + _blocks(self.exit)
        return Region(self.index, self.grid.region_conditions(self.index), self.decls, stmts,
                      self.names)


def _ring_groups(flat, ringed, plan, copy_of=lambda v: None) -> dict:
    """(reader pipe, writer pipe, core[, copy]) -> [first writer, last reader] (top-level
    items) over the tiles ``ringed`` selects, read and written on different pipes."""
    groups = {}
    for op, top in flat:
        for kind, var in op.writes:
            if kind == "tile" and ringed(var):
                for rpipe in _reader_pipes(plan, var, flat):
                    if rpipe != op.pipe:
                        key = (rpipe, op.pipe, op.core) + _copy_key(copy_of(var))
                        g = groups.setdefault(key, [None, None])
                        g[0] = top if g[0] is None else g[0]
        for kind, var in op.reads:
            if kind == "tile" and ringed(var):
                wpipe = _writer_pipe(plan, var, flat)
                if wpipe is not None and wpipe != op.pipe:
                    key = (op.pipe, wpipe, op.core) + _copy_key(copy_of(var))
                    groups.setdefault(key, [None, None])[1] = top
    return {k: g for k, g in groups.items() if g[0] is not None and g[1] is not None}


def _copy_key(copy):
    return () if copy is None else (copy,)


def _reader_pipes(plan, var, flat):
    slot = plan.slots[var]
    return {op.pipe for op, _ in flat for k, v in op.reads
            if k == "tile" and plan.slots.get(v) is slot}


def _writer_pipe(plan, var, flat):
    slot = plan.slots[var]
    for op, _ in flat:
        for k, v in op.writes:
            if k == "tile" and plan.slots.get(v) is slot:
                return op.pipe
    return None


def _is_tile_op(e) -> bool:
    return any(isinstance(v.type, TileType) for v in (*e.inputs, *e.outputs)) or \
        e.prim in (T.tile_store_p, T.tile_load_p, T.tile_scalar_load_p)


def _all_eqns(ir):
    for e in ir.eqns:
        yield e
        if e.prim is T.tile_loop_p:
            body = e.params["body"]
            yield from _all_eqns(body.ir if isinstance(body, ClosedIR) else body)



# --- grouping statements by core ---------------------------------------------------------------
def _statements(items) -> list:
    """Flat statements of items (with their inserted flags), grouped into CoreBlocks."""
    tagged = []
    for it in items:
        if isinstance(it, Op):
            tagged += it.before
            tagged += [(it.core, s) for s in it.stmts]
            tagged += it.after
        elif isinstance(it, LoopItem):
            tagged += it.before
            tagged.append((None, Loop(it.var, it.start, it.stop, it.decls,
                                      _statements(it.items), it.depth, it.source)))
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
            dst = resource(s.dst)
            srcs = {resource(x) for x in s.srcs} - {None}
            if first or (srcs & written) or (dst is not None and dst in written):
                out.append(Barrier("V"))
                written = set()
            first = False
            if dst is not None:
                written.add(dst)
        out.append(s)
    return out
