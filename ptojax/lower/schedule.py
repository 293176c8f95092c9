"""A tile kernel as an instruction schedule: the shared input of the PTO-AS and C++ printers
and of the cost model.

For each kernel: its GM parameters, its sections (``vector``; for matmuls ``cube`` and, when
there is an epilogue, ``vector``), and per section the code of each grid region: tile
declarations at planned addresses, GM windows, PTO instructions, and the pipe flags that order
them. The synchronization protocol (the same in both printers):

vector, per tile (slot ``s`` = the tile's pipeline buffer, ``s`` = local tile index mod copies)::

    wait(V->MTE2, s)  TLOAD...  set/wait(MTE2->V, s)  wait(MTE3->V, s)  compute (pipe_barrier
    between dependent vector instructions)  set(V->MTE2, s)  set/wait(V->MTE3, s)  TSTORE...
    set(MTE3->V, s)

with ``set(V->MTE2)`` and ``set(MTE3->V)`` for every slot before the tile loop and the
matching waits after it, so every flag set is waited exactly once.

cube, per K step (``k`` = step index, slot ``k mod 2``)::

    wait(MTE1->MTE2, k)  TLOAD A, B -> L1  set/wait(MTE2->MTE1, k)  wait(M->MTE1, k)
    TEXTRACT -> L0A, L0B  set(MTE1->MTE2, k)  set/wait(MTE1->M, k)  [first step: wait(FIX->M)]
    TMATMUL[_ACC]  set(M->MTE1, k)

then per tile ``set/wait(M->FIX)  TSTORE acc  set(FIX->M)`` and, when a vector epilogue follows,
a cross-core notification that the vector sub-blocks wait for before loading the workspace.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional

from ptojax.ir.core import ClosedIR, Literal, Var
from ptojax.ir.types import TensorType, TileType
from ptojax.ir.pto import Instr, RowView, Scratch, is_row_vector
from ptojax.lower.pto_ops import lower_eqn
from ptojax.targets import get_target
from ptojax.trace import Primitive
from ptojax.tile import ops as T
from ptojax.tile.build import FMAP
from ptojax.tile.img2col import fmatrix_config, tile_img2col_p
from ptojax.tile.interpreter import check_plan_fits

ACC_READY = 0        # cross-core flag: an accumulator tile is in the GM workspace


class GmParam(NamedTuple):
    name: str
    type: TensorType
    role: str              # in | out | ws


@dataclass
class TileDecl:
    name: str
    type: TileType
    slot: object           # tile_memory.Slot
    kind: str              # vec | vec_col | mat_a | mat_b | left | right | acc | scratch
    level: int             # 0: tile loop slot, 1: K-step slot
    row_view: Optional[str] = None
    core: Optional[str] = None    # a pto.kernel's tile: the core declaring it
    carries: Optional[str] = None  # a loop body's new value of this carry tile (its buffer)


class Window(NamedTuple):
    """A (valid rows x valid cols) window of a GM parameter's 2-D view at (r0, c0); a vector
    sub-block's half of a split tile (``sub_rows`` = R/2) starts ``sub * sub_rows`` rows on."""
    name: str
    param: GmParam
    view: tuple
    transpose: bool
    r0: object
    c0: object
    rows: int
    cols: int
    sub_rows: int = 0


class Flag(NamedTuple):
    action: str            # set | wait
    src: str
    dst: str
    event: object          # int; "slot"/"kslot" (the slot of the tile / K step); or
    level: int = 0         #   ("slot" | "kslot", offset): that slot plus offset


class Barrier(NamedTuple):
    pipe: str


class Let(NamedTuple):
    """``var = prim(*args)`` on the scalar unit: index arithmetic and scalar math (add, sub,
    mul, div, rem, max, min, neg from ``ptojax.ops.arithmetic``; convert_element_type)."""
    var: Var
    prim: Primitive
    args: tuple
    params: object = ()        # the equation's params (convert_element_type's new_dtype)


class ScalarLoad(NamedTuple):
    """``var = param[0]``: a scalar operand read from GM (``tile_scalar_load``)."""
    var: Var
    param: GmParam


class CrossSync(NamedTuple):
    action: str            # set (notify the other core) | wait
    flag: int
    pipe: str = "FIX"      # a set fires once this pipe's earlier instructions are done


class CoreBlock(NamedTuple):
    """Statements one core runs (a pto.kernel body interleaves both cores' code: each core's
    build keeps its own blocks)."""
    core: str              # cube | vector
    stmts: list


class Loop(NamedTuple):
    """A counted loop of a pto.kernel body (``tile_loop``): bounds are ints or scalar atoms
    (run-time values: a program id's arithmetic, a scalar operand, an enclosing loop's
    index); its tiles (``decls``) take their buffer copy from the iteration
    (``schedule_items.loop_slot(depth)``: ``kslot`` at depth 1). Loops nest: ``depth`` is 1
    for a loop at the top of the body, 2 for a loop in its body, ..."""
    var: Var
    start: object
    stop: object
    decls: list
    stmts: list
    depth: int = 1
    source: object = None  # where the user's pto.kernel.fori is (for errors)


class KLoop(NamedTuple):
    var: Var
    start: int
    stop: int
    decls: list
    stmts: list


class StaticK(NamedTuple):
    """A peeled K step whose index is known statically (its slot is ``index mod copies``)."""
    index: int
    decls: list
    stmts: list


@dataclass
class Region:
    valid: tuple                  # the region's key (a vector/cube kernel: its valid shape)
    conditions: tuple             # tile_ops.Condition's selecting its tiles
    decls: list
    stmts: list
    names: dict = field(default_factory=dict)


@dataclass
class Section:
    core: str                     # vector | cube | kernel (a pto.kernel: both, in blocks)
    regions: list
    prologue: list
    epilogue: list
    split_subblocks: bool = False
    one_subblock: bool = False    # vector code runs on sub-block 0 only (a mixed pto.kernel)
    row_split: int = 0            # a mixed pto.kernel whose vector sub-blocks each take half
                                  # of every R-row vector tile: R (tile/row_split.py)
    tile_slots: bool = False      # a cube section whose tiles rotate a staging buffer (a
                                  # convolution's feature map): ``slot`` per tile, as vector


class KernelSchedule(NamedTuple):
    name: str
    kind: str
    target: object
    grid: object
    buffers: int
    params: list
    sections: list
    accumulate: tuple
    source: object = None
    cube: Optional[tuple] = None    # a cube kernel's (m, k, n) tile

    @property
    def block_dim(self) -> int:
        return self.grid.blocks

    @property
    def mixed(self) -> bool:
        return len(self.sections) > 1


def kernel_parameters(eqn):
    """(target, GM parameters, the checked memory plan of each body) of a tile_kernel
    equation: what every schedule of it starts from."""
    p = eqn.params
    target = get_target(p["target"])
    ins, outs, ws = T.kernel_signature(p["bodies"][0], len(eqn.inputs))
    params = ([GmParam(f"in{i}", v.type, "in") for i, v in enumerate(ins)]
              + [GmParam(f"out{i}", v.type, "out") for i, v in enumerate(outs)]
              + [GmParam(f"ws{i}", v.type, "ws") for i, v in enumerate(ws)])
    # a pto.kernel's flags are derived from the planned bytes, so its staging tiles may be
    # single-buffered to fit; the fixed event rings of pto.tile's schedules need two copies
    plans = [check_plan_fits(p["name"], b, p["buffers"], target, p["kind"] == "kernel",
                             p.get("row_split", 0))
             for b in p["bodies"]]
    return target, params, plans


def kernel_schedule(eqn) -> KernelSchedule:
    p = eqn.params
    bodies = p["bodies"]
    n_in = len(eqn.inputs)
    target, params, plans = kernel_parameters(eqn)
    cores = ["cube", "vector"] if p["kind"] == "cube" else ["vector"]
    sections = []
    for core in cores:
        regions = [_Region(body, plan, core, params, n_in, p["grid"], valid, i).build()
                   for i, (body, plan, valid) in enumerate(zip(bodies, plans, p["regions"]))]
        if core == "vector" and p["kind"] == "cube" and not any(r.stmts for r in regions):
            continue
        fmap = core == "cube" and any(d.kind == "fmap" for r in regions for d in r.decls)
        sections.append(_section(core, regions, p["buffers"], p["kind"] == "cube", fmap))
    if p["kind"] == "cube" and len(sections) == 2:
        sections[1].split_subblocks = target.vector_cores_per_cube > 1
    return KernelSchedule(p["name"], p["kind"], target, p["grid"], p["buffers"], params,
                          sections, tuple(p.get("accumulate", ())), eqn.source, p.get("cube"))


def _section(core, regions, buffers, in_cube_kernel, fmap=False):
    if core == "vector":
        pairs = [("V", "MTE2"), ("MTE3", "V")]
        slots = range(buffers)
    else:
        pairs = [("MTE1", "MTE2"), ("M", "MTE1")]
        slots = range(min(buffers, 2))
    pro = [Flag("set", s, d, e) for s, d in pairs for e in slots]
    epi = [Flag("wait", s, d, e) for s, d in pairs for e in slots]
    if core == "cube":
        pro.append(Flag("set", "FIX", "M", 0))
        epi.append(Flag("wait", "FIX", "M", 0))
    if fmap:      # a feature-map copy is free once the TIMG2COLs of its last tile are done
        pro += [Flag("set", "MTE1", "MTE2", FMAP_EVENT + e) for e in range(buffers)]
        epi += [Flag("wait", "MTE1", "MTE2", FMAP_EVENT + e) for e in range(buffers)]
    return Section(core, regions, pro, epi, tile_slots=fmap)


# the events of a convolution's feature-map buffer copies: FMAP_EVENT + slot (the K steps use
# events 1..2, the accumulator 0)
FMAP_EVENT = 3


def _core_of(eqn) -> Optional[str]:
    """Which core runs a body equation (None: scalar index arithmetic, run where needed)."""
    prim = eqn.prim
    if prim in (T.tile_loop_p, T.tile_move_p, tile_img2col_p, T.tile_matmul_p,
                T.tile_matmul_acc_p):
        return "cube"
    if prim is T.tile_load_p:
        return "cube" if eqn.params["space"] == "L1" else "vector"
    if prim is T.tile_store_p:
        return "cube" if eqn.inputs[1].type.space == "L0C" else "vector"
    if any(isinstance(v.type, TileType) for v in (*eqn.inputs, *eqn.outputs)) or \
            prim is T.tile_scalar_load_p:
        return "vector"
    return None


class _Region:
    def __init__(self, body, plan, core, params, n_in, grid, valid, index):
        self.body, self.plan, self.core = body, plan, core
        self.grid, self.valid, self.index = grid, valid, index
        gm_vars = body.invars[2:]
        self.param_of = dict(zip(gm_vars, params))
        for e in body.eqns:                # a store's result is its destination's parameter
            if e.prim is T.tile_store_p:
                self.param_of[e.outputs[0]] = self.param_of[e.inputs[0]]
        self.names: dict = {self.body.invars[0]: "ti", self.body.invars[1]: "tj"}
        self.decls, self.decl_of = [], {}
        self.counter = {"t": 0, "g": 0, "s": 0}

    # --- naming ------------------------------------------------------------------------------
    def fresh(self, prefix):
        n = self.counter[prefix]
        self.counter[prefix] += 1
        return f"{prefix}{n}"

    def decl(self, var, kind=None, level=0, into=None):
        if var in self.decl_of:
            return self.decl_of[var]
        slot = self.plan.slots[var]
        kind = kind or ("vec_col" if is_row_vector(var.type) else "vec")
        d = TileDecl(self.fresh("t"), var.type, slot, kind, level)
        if kind == "vec_col":
            d.row_view = d.name + "_r"
        self.names[var] = d.name
        self.decl_of[var] = d
        (self.decls if into is None else into).append(d)
        return d

    def scratch(self, eqn, level=0, into=None):
        key = ("scratch", eqn)
        if key not in self.decl_of:
            src = eqn.inputs[0].type
            d = TileDecl(self.fresh("t"), TileType(src.shape, src.dtype, src.space, src.valid),
                         self.plan.scratch[eqn], "scratch" if not is_row_vector(src) else
                         "vec_col", level)
            self.decl_of[key] = d
            self.names[key] = d.name
            if d.kind == "vec_col":
                d.row_view = d.name + "_r"
            (self.decls if into is None else into).append(d)
        return self.decl_of[key]

    # --- building ----------------------------------------------------------------------------
    def build(self) -> Region:
        eqns = [e for e in self.body.eqns if _core_of(e) == self.core]
        stmts = self._lets(eqns) + (self._vector(eqns) if self.core == "vector"
                                    else self._cube(eqns))
        if self.core == "vector" and not any(isinstance(s, Instr) for s in stmts):
            stmts = []
        return Region(self.valid, self.grid.region_conditions(self.index), self.decls, stmts,
                      self.names)

    def _lets(self, section_eqns):
        """Scalar index arithmetic the section needs, in body order."""
        need = {a for e in section_eqns for a in e.inputs if type(a) is Var}
        for e in section_eqns:
            if e.prim is T.tile_loop_p:
                need.update(a for a in e.inputs if type(a) is Var)
        lets = []
        scalar_eqns = [e for e in self.body.eqns if _core_of(e) is None]
        for e in reversed(scalar_eqns):
            if any(v in need for v in e.outputs):
                need.update(a for a in e.inputs if type(a) is Var)
        for e in scalar_eqns:
            if any(v in need for v in e.outputs):
                lets.append(self._let(e))
        return lets

    def _let(self, e):
        out = e.outputs[0]
        self.names[out] = self.fresh("s")
        return Let(out, e.prim, tuple(e.inputs), e.params)

    def window(self, gm, r0, c0, params, tile_type):
        param = self.param_of[gm]
        vr, vc = T.valid_shape(tile_type)
        return Window(self.fresh("g"), param, params["view"], params.get("transpose", False),
                      r0, c0, vr, vc)

    def _alias_gm(self, eqn):
        """A tile_store's result is the same GM parameter as its destination."""
        self.param_of[eqn.outputs[0]] = self.param_of[eqn.inputs[0]]

    def _slot_key(self, op):
        """The buffer an operand occupies (in-place results share their operand's buffer)."""
        if isinstance(op, RowView):
            op = op.var
        if isinstance(op, Scratch):
            return id(self.plan.scratch[op.eqn])
        if isinstance(op, Var) and isinstance(op.type, TileType):
            return id(self.plan.slots[op])
        return None

    # --- vector sections ---------------------------------------------------------------------
    def _vector(self, eqns):
        loads, compute, stores, scalars = [], [], [], []
        for e in eqns:
            if e.prim is T.tile_load_p:
                self.decl(e.outputs[0])
                g = self.window(e.inputs[0], e.inputs[1], e.inputs[2], e.params,
                                e.outputs[0].type)
                loads.append(Instr("TLOAD", e.outputs[0], (g,)))
            elif e.prim is T.tile_scalar_load_p:
                self.names[e.outputs[0]] = self.fresh("s")
                scalars.append(ScalarLoad(e.outputs[0], self.param_of[e.inputs[0]]))
            elif e.prim is T.tile_store_p:
                g = self.window(e.inputs[0], e.inputs[2], e.inputs[3], e.params,
                                e.inputs[1].type)
                self._alias_gm(e)
                stores.append(Instr("TSTORE", None, (g, e.inputs[1]),
                                    {"atomic": e.params.get("atomic", False)}))
            else:
                for v in e.outputs:
                    self.decl(v)
                for ins in lower_eqn(e):
                    for op in ins.operands():
                        if isinstance(op, Scratch):
                            self.scratch(op.eqn)
                    compute.append(ins)
        slot = "slot"
        out = []
        if any(self.param_of[e.inputs[0]].role == "ws" for e in eqns
               if e.prim is T.tile_load_p):
            out.append(CrossSync("wait", ACC_READY))    # the cube stored this tile's acc
        out += scalars
        out.append(Flag("wait", "V", "MTE2", slot))
        out += loads
        out += [Flag("set", "MTE2", "V", slot), Flag("wait", "MTE2", "V", slot),
                Flag("wait", "MTE3", "V", slot)]
        out += _with_barriers(compute, self._slot_key)
        out += [Flag("set", "V", "MTE2", slot), Flag("set", "V", "MTE3", slot),
                Flag("wait", "V", "MTE3", slot)]
        out += stores
        out.append(Flag("set", "MTE3", "V", slot))
        return out

    # --- cube sections -----------------------------------------------------------------------
    def _cube(self, eqns):
        out = []
        first = True
        step = []
        fmap = None
        for e in eqns:
            if e.prim is T.tile_load_p and e.params.get("stage") == FMAP:
                fmap = self._fmap(e, eqns)
                out += fmap
            elif e.prim is T.tile_store_p and fmap:    # the tile's last TIMG2COL issued
                out.append(Flag("set", "MTE1", "MTE2", ("slot", FMAP_EVENT)))
                fmap = None
                out += self._cube_store(e)
            elif e.prim is T.tile_store_p:
                out += self._cube_store(e)
            elif e.prim is T.tile_loop_p:
                out.append(self._k_loop(e))
            else:
                step.append(e)
                if e.prim in (T.tile_matmul_p, T.tile_matmul_acc_p):
                    decls = []
                    stmts = self._k_step(step, first, into=decls)
                    out.append(StaticK(_static_k(step), decls, stmts))
                    first = False
                    step = []
        return out

    def _cube_store(self, e):
        g = self.window(e.inputs[0], e.inputs[2], e.inputs[3], e.params, e.inputs[1].type)
        self._alias_gm(e)
        out = [Flag("set", "M", "FIX", 0), Flag("wait", "M", "FIX", 0),
               Instr("TSTORE", None, (g, e.inputs[1]), {"atomic": False}),
               Flag("set", "FIX", "M", 0)]
        if self.param_of[e.inputs[0]].role == "ws":
            out.append(CrossSync("set", ACC_READY))
        return out

    def _fmap(self, load, eqns):
        """A convolution's feature map: once per tile, into the tile's copy of its L1 buffer
        (after the TIMG2COLs that read that copy last are done), then the fmatrix
        configuration its TIMG2COLs read."""
        self.decl(load.outputs[0], "fmap")
        g = self.window(load.inputs[0], load.inputs[1], load.inputs[2], load.params,
                        load.outputs[0].type)
        img2col = next(e for e in eqns if e.prim is tile_img2col_p)
        return [Flag("wait", "MTE1", "MTE2", ("slot", FMAP_EVENT)),
                Instr("TLOAD", load.outputs[0], (g,)),
                *fmatrix_config(img2col.params["config"], img2col.inputs[3])]

    def _k_loop(self, loop) -> KLoop:
        body = loop.params["body"]
        body = body.ir if isinstance(body, ClosedIR) else body
        kv = body.invars[0]
        self.names[kv] = "k"
        for inner, outer in zip(body.invars[1:], loop.inputs):
            if isinstance(inner.type, TileType):
                self.decl_of[inner] = self.decl_of[outer]
                self.names[inner] = self.names[outer]
            elif outer in self.param_of:
                self.param_of[inner] = self.param_of[outer]
            else:
                self.names[inner] = self.names.get(outer, str(outer))
        for res, inner_out in zip(loop.outputs, body.outvars):
            self.names[res] = self.names[body.invars[1]]
            self.decl_of[res] = self.decl_of[body.invars[1]]
        decls = []
        lets = [self._let(e) for e in body.eqns if _core_of(e) is None]
        step = [e for e in body.eqns if _core_of(e) == "cube"]
        stmts = lets + self._k_step(step, False, into=decls)
        for inner_out in body.outvars:
            self.names[inner_out] = self.names[body.invars[1]]
        return KLoop(kv, loop.params["start"], loop.params["stop"], decls, stmts)

    def _k_step(self, step, first, into):
        lvl = 1
        loads, moves, mm = [], [], None
        for e in step:
            if e.prim is T.tile_load_p:
                kind = "mat_a" if e.params.get("stage") == "a" else "mat_b"
                self.decl(e.outputs[0], kind, lvl, into)
                g = self.window(e.inputs[0], e.inputs[1], e.inputs[2], e.params,
                                e.outputs[0].type)
                loads.append(Instr("TLOAD", e.outputs[0], (g,)))
            elif e.prim in (T.tile_move_p, tile_img2col_p):
                kind = "left" if e.outputs[0].type.space == "L0A" else "right"
                self.decl(e.outputs[0], kind, lvl, into)
                moves.extend(lower_eqn(e))
            else:
                if e.prim is T.tile_matmul_p:
                    self.decl(e.outputs[0], "acc", 0)
                else:
                    acc = self.decl_of[e.inputs[0]]
                    self.decl_of[e.outputs[0]] = acc
                    self.names[e.outputs[0]] = acc.name
                mm = lower_eqn(e)
        s = "kslot"
        out = [Flag("wait", "MTE1", "MTE2", s, 1)] + loads + [
            Flag("set", "MTE2", "MTE1", s, 1), Flag("wait", "MTE2", "MTE1", s, 1),
            Flag("wait", "M", "MTE1", s, 1)] + moves + [
            Flag("set", "MTE1", "MTE2", s, 1), Flag("set", "MTE1", "M", s, 1),
            Flag("wait", "MTE1", "M", s, 1)]
        if first:
            out.append(Flag("wait", "FIX", "M", 0))
        return out + mm + [Flag("set", "M", "MTE1", s, 1)]


def _static_k(step) -> int:
    for e in step:
        if (e.prim is T.tile_load_p and e.params.get("stage") == "a") or \
                e.prim is tile_img2col_p:          # the left operand's K offset
            k0 = e.inputs[2]
            if isinstance(k0, Literal):
                return int(k0.value) // max(1, e.params["shape"][1])
    return 0


def _with_barriers(instrs, key):
    """Insert pipe_barrier(PIPE_V) where a vector instruction depends on an earlier one since
    the last barrier (read-after-write, write-after-read or write-after-write on a buffer)."""
    out, written, read = [], set(), set()
    for ins in instrs:
        dst = key(ins.dst)
        srcs = {key(s) for s in ins.srcs} - {None}
        if (srcs & written) or (dst is not None and (dst in written or dst in read)):
            out.append(Barrier("V"))
            written, read = set(), set()
        out.append(ins)
        if dst is not None:
            written.add(dst)
        read |= srcs
    return out
