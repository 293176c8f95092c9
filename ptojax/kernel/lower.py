"""Lowering a kernel's block program to tile IR: the ``tile_kernel`` equation ``pto.tile`` and
the host build run.

Each region's block program becomes one tile body ``(ti, tj, *GM inputs, *GM outputs,
*workspaces) -> outputs``: program ids are computed from the tile indices (scalar lets), and
every block value is placed where its consumers need it:

    vector values     UB tiles: full [R, C] (columns padded to 32 bytes), row vectors
                      [R', 1] (a last-axis reduction; R' padded to 32 rows), column vectors
                      [1, C]; scalars stay scalars; broadcasts, fills and iotas stay lazy until
                      an instruction needs them (TROWEXPAND<op> reads a row vector directly)
    loads             lazy too: a window of a GM ref becomes a TLOAD into UB for the vector
                      unit, or into L1 (transposed if the matmul reads it transposed) for the
                      cube — a window used both ways is loaded twice
    matmuls           L1 -> L0A/L0B (TEXTRACT) -> TMATMUL into L0C, split along K into steps
                      that fit L0 (TMATMUL_ACC)
    cube <-> vector   on a2/a3 the cube (L1/L0) and vector (UB) cores share no buffer: an
                      accumulator reaches UB, and a UB tile reaches L1, through a per-core GM
                      workspace (TSTORE then TLOAD), which the schedule synchronizes

Values defined outside a ``fori`` and used inside it are materialized before the loop (once)
and passed to the ``tile_loop`` as invariants. Anything the hardware cannot do — an op
without a tile form, a dtype a unit lacks, a buffer that overflows — raises an error naming
the user's line and a fix.

This module holds ``BodyLowering``'s body walk, equations, scalars, elementwise ops,
reductions, broadcasts, reshapes and iotas, and the kernel as a whole (``lower_kernel``,
``check_fits``); the rest of ``BodyLowering`` comes from its bases: loads, stores, UB
placement and workspaces (``kernel/lower_memory.py``), matmuls (``kernel/lower_matmul.py``),
loops (``kernel/lower_loops.py``) and two-copy c2v carries (``kernel/c2v_lowering.py``); the
block values, layouts and scopes are in ``kernel/values.py``.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError, TileError, UnsupportedError
from ptojax.ir.core import IR, ClosedIR, Eqn, Literal, Var
from ptojax.ir.types import TensorType, TileType
from ptojax.kernel.c2v_lowering import C2vCarryLowering
from ptojax.kernel.hoist import hoist_invariants
from ptojax.kernel.lower_loops import LoopLowering
from ptojax.kernel.lower_matmul import MatmulLowering
from ptojax.kernel.lower_memory import MemoryLowering
from ptojax.kernel.primitives import kernel_fori_p, kernel_load_p, kernel_store_p, loop_body
from ptojax.kernel.values import COL, FULL, I32, ROW, Scope, Value, _is_lit, idx, layout_of
from ptojax.ops import arithmetic as ar
from ptojax.ops import convert as cv
from ptojax.ops.broadcast import broadcast_in_dim_p, reduce_sum_p
from ptojax.ops.linalg import dot_general_p
from ptojax.ops.reductions import reduce_max_p, reduce_min_p
from ptojax.ops.shape import expand_dims_p, reshape_p, squeeze_p, transpose_p
from ptojax.ops.slicing import iota_p
from ptojax.optimize import optimize
from ptojax.targets import get_target
from ptojax.tile import ops as T
from ptojax.tile.interpreter import cached_plan
from ptojax.tile.row_split import split_rows
from ptojax.tile.kernel import tile_kernel_p
from ptojax.tile.prepare import expand, fold_transposes

# operations the scalar unit runs (index arithmetic and its comparisons)
SCALAR_OPS = frozenset({"add", "sub", "mul", "div", "rem", "max", "min", "neg",
                        "convert_element_type", "lt", "le", "gt", "ge", "eq", "ne", "select",
                        "and", "or", "not"})


# --- the lowering of one region ----------------------------------------------------------------
class BodyLowering(MemoryLowering, MatmulLowering, LoopLowering, C2vCarryLowering):
    """Lowers one region's block program (a ClosedIR over program ids, input and output refs)
    to a tile body. ``kernel`` carries the kernel-wide facts (grid, target, blocks)."""

    def __init__(self, kernel, body: ClosedIR):
        self.k = kernel
        self.target = kernel.target
        self.block = body
        self.top = Scope(None)
        self.scope = self.top
        self.ti, self.tj = Var(I32), Var(I32)
        self.top.defined.update((self.ti, self.tj))
        self.workspaces: list = []
        self.matmuls = 0
        self.acc_into: dict = {}       # dot output var -> the L0C carry Value it adds into
        self.acc_adds: dict = {}       # carry + dot eqn -> the index of its dot operand
        self.source = None
        self._block_index = None
        self._ws_loop: list = []       # (workspace index, key, scope of the value) allocated
                                       # by the current top-level loop (nested loops too)
        self._ws_reuse: list = []      # the previous top-level loop's, still to be reused
        self._uses: dict = {}          # var -> the equations of the running body using it
        self._carried: dict = {}       # workspace atom holding a carried value -> its form
        self._c2v: dict = {}           # loop result atom -> the C2vCarry it is in
        self._early_c2v: dict = {}     # loop body output var -> (carry var, form, step, lo)
        self._early_store: dict = {}   # loop body output var -> (carry var, form)
        self._ub_carry_outs: set = set()   # loop body outputs carried in UB (vector-loaded)

    # --- helpers -----------------------------------------------------------------------------
    def emit(self, prim, inputs, **params):
        return self.scope.emit(prim, inputs, self.source, **params)

    def error(self, cls, message):
        return cls(message, self.source)

    @contextlib.contextmanager
    def in_scope_of(self, v):
        """Emit into the scope where ``v`` was defined: a form of ``v`` made once there serves
        every later use (in loops too)."""
        saved, self.scope = self.scope, v.scope
        try:
            yield
        finally:
            self.scope = saved

    def new_value(self, kind, shape, dtype, **fields) -> Value:
        return Value(kind, tuple(shape), dtype, self.scope, **fields)

    def scalar_op(self, prim, a, b):
        """``a <prim> b`` on int32 scalars, folding literals."""
        if type(a) is Literal and type(b) is Literal:
            return idx(int(prim.impl(np.int32(a.value), np.int32(b.value))))
        if prim is ar.mul_p and (_is_lit(a, 1) or _is_lit(b, 1)):
            return b if _is_lit(a, 1) else a
        if prim is ar.add_p and (_is_lit(a, 0) or _is_lit(b, 0)):
            return b if _is_lit(a, 0) else a
        if prim is ar.mul_p and (_is_lit(a, 0) or _is_lit(b, 0)):
            return idx(0)
        return self.emit(prim, [a, b])

    def block_index(self):
        if self._block_index is None:
            self._block_index = self.top.emit(T.tile_block_index_p, [], self.source)
        return self._block_index

    # --- the body ----------------------------------------------------------------------------
    def lower(self) -> tuple:
        ir = self.block.ir
        env = {}
        pids = self._program_ids()
        k = len(self.k.grid)
        for v, p in zip(ir.invars[:k], pids):
            env[v] = Value("scalar", (), dtypes.int32, self.top, atom=p)
        gm_vars = []
        for v in ir.invars[k:]:
            g = Var(v.type)
            self.top.defined.add(g)
            gm_vars.append(g)
            env[v] = Value("gm", v.type.shape, v.type.dtype, self.top, atom=g)
        for v, c in zip(ir.constvars, self.block.consts):
            env[v] = self._const(v, c)
        self.run(ir.eqns, env)
        outs = [env[v].atom for v in ir.outvars]
        invars = [self.ti, self.tj, *gm_vars, *self.workspaces]
        return self.top.b.build(invars, outs)

    def _program_ids(self):
        grid = self.k.grid
        ids = []
        for a in range(len(grid)):
            if a == len(grid) - 1:
                ids.append(self.tj)
                continue
            div = math.prod(grid[a + 1:-1])
            v = self.ti if div == 1 else self.emit(ar.div_p, [self.ti, idx(div)])
            ids.append(v if a == 0 else self.emit(ar.rem_p, [v, idx(grid[a])]))
        return ids

    def _const(self, var, value):
        value = np.asarray(value)
        flat = value.reshape(-1)
        if flat.size and not (flat == flat[0]).all() and not (np.isnan(flat).all()
                                                              if flat.dtype.kind == "f" else False):
            raise UnsupportedError(
                f"a kernel body uses a constant array of shape {value.shape} that is not one "
                f"repeated value; pass it to the kernel as an input instead",
                self.block.ir.eqns[0].source if self.block.ir.eqns else None)
        lit = Literal(flat[0] if flat.size else 0, TensorType((), var.type.dtype))
        s = Value("scalar", (), var.type.dtype, self.top, atom=lit)
        if var.type.shape == ():
            return s
        return Value("bcast", var.type.shape, var.type.dtype, self.top, src=s, layout="scalar")

    def run(self, eqns, env):
        saved = self._uses
        self._uses = {}
        for eqn in eqns:
            for a in eqn.inputs:
                if type(a) is Var:
                    self._uses.setdefault(a, []).append(eqn)
        try:
            self._run(eqns, env)
        finally:
            self._uses = saved

    def _run(self, eqns, env):
        for eqn in eqns:
            self.source = eqn.source
            outs = self.eqn(eqn, [env[a] if type(a) is Var else self._literal(a)
                                  for a in eqn.inputs])
            env.update(zip(eqn.outputs, outs if isinstance(outs, list) else [outs]))
            for o in eqn.outputs:
                if o in self._early_store:
                    self._store_carry(env[o], *self._early_store[o])
                if o in self._early_c2v:
                    carry, form, step, first = self._early_c2v[o]
                    env[o].made[("c2v carry", carry)] = self._c2v_out(env[o], carry, form,
                                                                      step, first)

    def _literal(self, lit):
        return Value("scalar", (), lit.type.dtype, self.top, atom=lit)

    # --- equations ---------------------------------------------------------------------------
    def eqn(self, eqn, vals):
        prim = eqn.prim
        if eqn in self.acc_adds:                      # carry + dot: accumulated in L0C
            return vals[self.acc_adds[eqn]]
        out = eqn.outputs[0].type if eqn.outputs else None
        if prim is kernel_load_p:
            return self.load(eqn, vals)
        if prim is kernel_store_p:
            return self.store(eqn, vals)
        if prim is kernel_fori_p:
            return self.fori(eqn, vals)
        self._check_dtypes(eqn)
        if all(v.kind == "scalar" for v in vals) and out.shape == ():
            return self.scalar(eqn, vals)
        if prim is dot_general_p:
            return self.matmul(eqn, vals)
        if prim in (reduce_sum_p, reduce_max_p, reduce_min_p):
            return self.reduce(eqn, vals)
        if prim is broadcast_in_dim_p:
            return self.broadcast(eqn, vals[0])
        if prim in (reshape_p, expand_dims_p, squeeze_p):
            return self.reshape(eqn, vals[0])
        if prim is transpose_p:
            return self.new_value("trans", out.shape, out.dtype, src=vals[0])
        if prim is iota_p:
            return self.iota(eqn)
        if prim is cv.convert_element_type_p and vals[0].kind == "acc":
            v = vals[0]
            return self.new_value("acc", v.shape, out.dtype, atom=v.atom)
        form = prim.fact("tile")
        if form is not None and form.kind == "elementwise" and prim in T.ELEMENTWISE_TILE_PRIMS:
            return self.elementwise(eqn, vals, form)
        raise self.error(UnsupportedError, (
            f"`{prim.name}` has no tile form in a kernel body: tiles support elementwise "
            f"math, last-axis reductions (and column sums), broadcasts of rows, columns and "
            f"scalars, matmuls (pto.kernel.dot) and loads/stores of windows"))

    def _check_dtypes(self, eqn):
        for a in (*eqn.inputs, *eqn.outputs):
            t = a.type
            if t.shape == () and dtypes.is_integer(t.dtype):
                continue
            if t.dtype.name not in self.target.tile_dtypes:
                raise self.error(DtypeError, (
                    f"`{eqn.prim.name}` on {dtypes.short_name(t.dtype)} values: "
                    f"{self.target.name} tiles hold "
                    f"{', '.join(sorted(self.target.tile_dtypes))}. Fix: convert with "
                    f".astype(float32) (or int32) before the kernel or in it"))

    # --- scalars -----------------------------------------------------------------------------
    def scalar(self, eqn, vals):
        out = eqn.outputs[0].type
        atoms = [v.atom for v in vals]
        if all(type(a) is Literal for a in atoms):
            value = eqn.prim.impl(*[a.value for a in atoms], **eqn.params)
            return self.new_value("scalar", (), out.dtype,
                                  atom=Literal(np.asarray(value, out.dtype), out.strip_weak()))
        if eqn.prim.name not in SCALAR_OPS:
            raise self.error(UnsupportedError, (
                f"`{eqn.prim.name}` on scalars has no form on the scalar unit; compute it "
                f"as a tile, or with +, -, *, //, %, min, max and comparisons"))
        return self.new_value("scalar", (), out.dtype,
                              atom=self.emit(eqn.prim, atoms, **eqn.params))

    def as_scalar(self, v):
        if v.kind != "scalar":
            raise self.error(ShapeError, "a tile is used where the kernel needs a scalar")
        return v.atom

    # --- elementwise -------------------------------------------------------------------------
    def elementwise(self, eqn, vals, form):
        out = eqn.outputs[0].type
        if form.identity:
            return vals[0]
        layout = self._ew_layout(out.shape, vals)
        order = list(range(len(vals)))
        tiles = [v for v in vals if v.kind != "scalar"]
        if form.commutative and len(vals) == 2 and vals[0].kind in ("scalar", "bcast") and \
                vals[1].kind not in ("scalar", "bcast"):
            order = [1, 0]
        dtype = eqn.inputs[0].type.dtype
        wide = form.arith and dtype.name not in self.target.vector_dtypes
        if wide and not dtypes.is_float(dtype):
            raise self.error(DtypeError, (
                f"`{eqn.prim.name}` on {dtypes.short_name(dtype)} tiles: the "
                f"{self.target.name} vector unit computes on "
                f"{', '.join(sorted(self.target.vector_dtypes))}. Fix: "
                f".astype(int32) or .astype(float32) first"))
        operands = []
        for pos, i in enumerate(order):
            v = vals[i]
            if v.kind == "scalar" and form.scalar_operand and tiles:
                atom = v.atom
            elif v.kind == "bcast" and v.layout in (ROW, COL) and form.broadcast_operand and \
                    pos == 1 and layout == FULL and vals[order[0]].kind != "scalar":
                # TROWEXPAND<op> needs a full first operand (scalar * row vector: expand)
                atom = self.ub(v.src, v.layout)
            else:
                atom = self.ub(v, layout, out.shape)
            operands.append(self._convert(atom, dtypes.float32) if wide else atom)
        result = self.emit(T.ELEMENTWISE_TILE_PRIMS[eqn.prim], operands, **eqn.params)
        if wide and result.type.dtype != out.dtype:
            result = self._convert(result, out.dtype)
        return self.new_value("tile", out.shape, out.dtype, atom=result, layout=layout)

    def _ew_layout(self, shape, vals):
        if len(shape) == 1:
            hints = {v.layout for v in vals if v.kind == "tile"}
            if len(hints) > 1:
                raise self.error(UnsupportedError, (
                    "an operation mixes a row vector and a column vector of the same length; "
                    "reshape one of them (x[:, None] / x[None, :])"))
            return hints.pop() if hints else COL
        return layout_of(shape)

    def _convert(self, atom, dtype):
        if atom.type.dtype == dtype:
            return atom
        if type(atom) is Literal:
            return Literal(np.asarray(atom.value).astype(dtype), TensorType((), dtype))
        prim = T.ELEMENTWISE_TILE_PRIMS[cv.convert_element_type_p] \
            if isinstance(atom.type, TileType) else cv.convert_element_type_p
        return self.emit(prim, [atom], new_dtype=dtype, weak_type=False)

    # --- reductions, broadcasts, reshapes ---------------------------------------------------
    def reduce(self, eqn, vals):
        (x,) = vals
        axes = tuple(sorted(eqn.params["axes"]))
        out = eqn.outputs[0].type
        xt = eqn.inputs[0].type
        if xt.ndim == 2 and axes == (1,):
            t = self.ub(x, FULL)
            prim = T.ROW_REDUCTIONS[eqn.prim]
            layout = ROW
        elif xt.ndim == 2 and axes == (0,) and eqn.prim is reduce_sum_p:
            t = self.ub(x, FULL)
            prim = T.tile_col_sum_p
            layout = COL
        else:
            raise self.error(UnsupportedError, (
                f"{eqn.prim.name} over axes {axes} of a {xt.shape} tile: kernels reduce "
                f"2-d tiles over their last axis (rows), or sum over the first (columns)"))
        dtype = t.type.dtype
        if dtype != dtypes.float32 and not dtypes.is_float(dtype):
            raise self.error(DtypeError, f"{eqn.prim.name} of {dtypes.short_name(dtype)} "
                                         f"tiles: reductions are tiled for floats only")
        if dtype != dtypes.float32 and (eqn.prim is reduce_sum_p or
                                        dtype.name not in self.target.vector_dtypes):
            t = self._convert(t, dtypes.float32)
        r = self.emit(prim, [t])
        r = self._convert(r, out.dtype)
        return self.new_value("tile", out.shape, out.dtype, atom=r, layout=layout)

    def broadcast(self, eqn, x):
        out = eqn.outputs[0].type
        dims = tuple(eqn.params["broadcast_dimensions"])
        src = eqn.inputs[0].type
        if src.shape == out.shape:
            return x
        if x.kind == "scalar" or src.size == 1 and x.kind in ("bcast",) and x.layout == "scalar":
            s = x if x.kind == "scalar" else x.src
            return self.new_value("bcast", out.shape, out.dtype, src=s, layout="scalar")
        if len(out.shape) == 2:
            r, c = out.shape
            expanded = [1, 1]
            for i, d in enumerate(dims):
                expanded[d] = src.shape[i]
            if tuple(expanded) == (r, 1) and c > 1:
                return self.new_value("bcast", out.shape, out.dtype, src=self._as_vec(x, ROW),
                                      layout=ROW)
            if tuple(expanded) == (1, c) and r > 1:
                return self.new_value("bcast", out.shape, out.dtype, src=self._as_vec(x, COL),
                                      layout=COL)
            if tuple(expanded) == out.shape:                # (n,) -> (n, 1) / (1, n)
                return self.reshape(eqn, x)
        raise self.error(UnsupportedError, (
            f"broadcast of a {src.shape} tile to {out.shape}: kernels broadcast scalars, row "
            f"vectors ([R, 1]) along columns and column vectors ([1, C]) along rows"))

    def _as_vec(self, x, layout):
        """``x`` (an (n,), (n, 1) or (1, n) value) broadcast as a vector of ``layout``."""
        if x.kind == "tile" and x.layout != layout:
            raise self.error(UnsupportedError, (
                f"a {x.layout} vector broadcast as a {layout} vector: transposing vectors is "
                f"not supported in tiles"))
        return x

    def reshape(self, eqn, x):
        src, out = eqn.inputs[0].type, eqn.outputs[0].type
        if x.kind == "scalar":
            return self.new_value("bcast", out.shape, out.dtype, src=x, layout="scalar") \
                if out.shape != () else x
        s_in = [d for d in src.shape if d != 1]
        s_out = [d for d in out.shape if d != 1]
        if s_in != s_out or len(s_in) > 1 and src.shape != out.shape:
            raise self.error(UnsupportedError, (
                f"reshape of a {src.shape} tile to {out.shape}: kernels only add or drop "
                f"unit dimensions of tiles"))
        if x.kind == "tile":
            layout = x.layout if len(out.shape) == 1 else layout_of(out.shape)
            if layout != x.layout:
                raise self.error(UnsupportedError, (
                    f"a {x.layout} vector reshaped to {out.shape}: kernels keep row vectors "
                    f"(reductions over the last axis) as [R, 1] and columns as [1, C]"))
            return Value("tile", out.shape, out.dtype, x.scope, atom=x.atom, layout=layout,
                         made=x.made)
        v = Value(x.kind, out.shape, out.dtype, x.scope, atom=x.atom, layout=x.layout,
                  src=x.src, ref=x.ref, starts=x.starts, sizes=x.sizes, dim=x.dim)
        if x.kind == "iota" and len(out.shape) == 2:
            v.dim = [i for i, d in enumerate(out.shape) if d != 1][0] if s_out else 0
        return v

    def iota(self, eqn):
        p = eqn.params
        shape = tuple(p["shape"])
        if len(shape) > 2:
            raise self.error(UnsupportedError, "iota tiles are at most 2-d")
        return self.new_value("iota", shape, p["dtype"], dim=p["dimension"])


# --- the kernel --------------------------------------------------------------------------------
@dataclass
class KernelFacts:
    name: str
    grid: tuple
    target: object
    blocks: int
    cube: bool
    workspaces: list = field(default_factory=list)   # (rows, cols, dtype) per workspace
    depths: list = field(default_factory=list)       # copies per core of each workspace
    bodies: int = 1                                  # ragged-edge regions


def uses_cube(ir: IR) -> bool:
    for e in ir.eqns:
        if e.prim is dot_general_p:
            return True
        if e.prim is kernel_fori_p and uses_cube(loop_body(e.params)):
            return True
    return False


def prepare_body(body: ClosedIR, hoist=True) -> ClosedIR:
    """Optimize (fold, CSE, DCE), substitute the expansions of primitives without a PTO
    instruction and fold transposes into matmuls, as pto.tile does (in loop bodies too), and
    with ``hoist`` move loop-invariant work out of loops (``kernel/hoist.py``)."""
    body = optimize(body)
    ir = _prepared(body.ir)
    return ClosedIR(hoist_invariants(ir) if hoist else ir, body.consts)


def _prepared(ir: IR) -> IR:
    eqns = []
    for e in ir.eqns:
        if e.prim is kernel_fori_p:
            e = e.replace(params=e.params.replace(body=_prepared(loop_body(e.params))))
        eqns.append(e)
    return fold_transposes(expand(IR(ir.constvars, ir.invars, eqns, ir.outvars)))


def lower_kernel(params, inputs, outputs, source=None) -> Eqn:
    """The ``tile_kernel`` equation of a ``kernel_call`` (same inputs and outputs). Hoisted
    loop invariants stay live across their loops: a kernel that does not fit so, or fits
    with fewer double-buffered staging tiles than with its loops as written, is lowered as
    written (the flash forward at 128x64 hoists its causal mask grid at the cost of 7 of its
    UB staging tiles' second copies: 1.086 -> 1.130 ms at S8192 in the 910B model)."""
    try:
        hoisted = _lower_kernel(params, inputs, outputs, source, hoist=True)
    except TileError:
        return _lower_kernel(params, inputs, outputs, source, hoist=False)
    if not _single_buffered(hoisted):
        return hoisted
    plain = _lower_kernel(params, inputs, outputs, source, hoist=False)
    return plain if _single_buffered(plain) < _single_buffered(hoisted) else hoisted


def _single_buffered(eqn) -> int:
    """How many of a lowered kernel's staging tiles its memory plan keeps in one copy."""
    split = eqn.params.get("row_split", 0)
    target = get_target(eqn.params["target"])
    return sum(slot.staging != "" and slot.copies == 1 for body in eqn.params["bodies"]
               for slot in cached_plan(body, 2, target, single_fallback=True,
                                       split_rows=split).ordered)


def _lower_kernel(params, inputs, outputs, source, hoist) -> Eqn:
    p = params
    target = get_target(p["target"])
    bodies = [prepare_body(b, hoist) for b in p["bodies"]]
    cube = any(uses_cube(b.ir) for b in bodies)
    n_programs = math.prod(p["grid"])
    cores = target.cube_cores if cube else target.vector_cores
    blocks = max(1, min(n_programs, cores))
    facts = KernelFacts(p["name"], tuple(p["grid"]), target, blocks, cube,
                        bodies=len(bodies))
    tile_bodies = [BodyLowering(facts, b).lower() for b in bodies]
    if len(bodies) > 1 and facts.workspaces:    # again, with every region's largest workspaces
        tile_bodies = [BodyLowering(facts, b).lower() for b in bodies]
        if len({tuple(v.type for v in T.kernel_signature(b, len(inputs))[2])
                for b in tile_bodies}) > 1:
            raise TileError(f"kernel {p['name']}: its ragged-edge regions move different "
                            f"values between the cube and vector units; use block shapes "
                            f"that divide the arrays", source)
    grid = T.ProgramGrid(tuple(p["grid"]), blocks,
                         tuple(r.conditions for r in p["regions"]))
    row_split = _row_split(tile_bodies, target)
    for body, block_body in zip(tile_bodies, bodies):
        check_fits(p["name"], body, target, block_body, row_split)
    kparams = dict(name=p["name"], kind="kernel", grid=grid,
                   regions=tuple(range(len(tile_bodies))), bodies=tuple(tile_bodies),
                   buffers=2, target=target.name, cube=None,
                   accumulate=tuple(p["accumulate"]))
    if any(d > 1 for d in facts.depths):
        kparams["workspace_depths"] = tuple(facts.depths)
    if row_split:
        kparams["row_split"] = row_split
    return Eqn(tile_kernel_p, list(inputs), list(outputs), kparams, source)


def _row_split(bodies, target) -> int:
    """R when the kernel's vector sub-blocks take half of its R-row vector tiles each
    (``tile/row_split.py``), else 0. Only when the whole tiles do not fit one UB as first
    planned (tiles that live shorter, ``plan_memory``'s last resort, serialize the vector
    unit's work on one sub-block: the flash forward at 128x64, non-causal S8192, takes 2.58
    ms so and 2.06 ms split). In the 910B
    cost model the split gains nothing on the flash forward at 64x64 (its bound is the cube's
    round trip, not the vector unit: 1.422 -> 1.433 ms at S8192), while each sub-block pays
    every instruction's issue overhead and cross-core flag."""
    rows = split_rows(bodies, target)
    if rows and all(cached_plan(b, 2, target, single_fallback=True, shorten=False)
                    .overflow(target) is None for b in bodies):
        return 0
    return rows


def check_fits(name, body, target, block_body, split_rows=0):
    """A TileError naming the buffer, the bytes and the user's line when a tile overflows
    (with ``split_rows``, one vector sub-block's half of the rows)."""
    plan = cached_plan(body, 2, target, single_fallback=True, split_rows=split_rows)
    over = plan.overflow(target)
    if over is None:
        return
    slot, space, needed, cap = over
    owner = slot.owner
    op = owner.prim.name if owner is not None else "?"
    half = " (each vector sub-block holding half the rows)" if split_rows and space == "UB" \
        else ""
    raise TileError(
        f"kernel {name}: buffer {space} needs {needed:,} bytes{half} but "
        f"{target.name} has {cap:,} (first overflow at `{op}`, even with every staging tile "
        f"single-buffered). "
        f"Fix: smaller blocks (block_shape) or fewer tiles live at once.",
        owner.source if owner is not None else None)
