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
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError, TileError, UnsupportedError
from ptojax.ir.builder import IRBuilder
from ptojax.ir.core import IR, ClosedIR, Eqn, Literal, Var
from ptojax.ir.pto import row_vector_rows
from ptojax.ir.types import TensorType, TileType
from ptojax.kernel.c2v_lowering import C2vCarry, C2vCarryLowering
from ptojax.kernel.carries import (accumulated_carries, c2v_carries, handed_on,
                                   workspace_carries)
from ptojax.kernel.hoist import hoist_invariants
from ptojax.kernel.primitives import kernel_fori_p, kernel_load_p, kernel_store_p, loop_body
from ptojax.kernel.values import I32, Value, _is_lit, idx
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
from ptojax.tile.memory import align_up
from ptojax.tile.prepare import expand, fold_transposes
from ptojax.tile.rules import CUBE_DTYPES

FULL, ROW, COL = "full", "row", "col"
# operations the scalar unit runs (index arithmetic and its comparisons)
SCALAR_OPS = frozenset({"add", "sub", "mul", "div", "rem", "max", "min", "neg",
                        "convert_element_type", "lt", "le", "gt", "ge", "eq", "ne", "select",
                        "and", "or", "not"})


def layout_of(shape, hint=COL) -> str:
    """The UB layout of a logical shape: (R, 1) a row vector, (1, C) or (C,) a column vector
    (``hint`` decides for 1-d values), (R, C) full."""
    if len(shape) == 1:
        return hint
    r, c = shape
    if c == 1 and r > 1:
        return ROW
    if r == 1:
        return COL
    return FULL


def ub_shape(shape, layout, dtype) -> tuple:
    """(physical shape, valid shape) of a UB tile: rows span 32-byte multiples."""
    align = max(1, 32 // dtype.itemsize)
    n = math.prod(shape)
    if layout == ROW:
        return (row_vector_rows(n), 1), (n, 1)
    if layout == COL:
        return (1, align_up(n, align)), (1, n)
    r, c = shape
    return (r, align_up(c, align)), (r, c)


def cube_shape(rows, cols, f=16) -> tuple:
    return (align_up(rows, f), align_up(cols, f)), (rows, cols)


# --- scopes (the kernel body and loop bodies) ----------------------------------------------------
class Scope:
    """An IR being built: the body's top level or a loop body. Atoms defined in an enclosing
    scope are imported as loop invariants on use (``atom``)."""

    def __init__(self, parent: Optional["Scope"]):
        self.parent = parent
        self.b = IRBuilder()
        self.defined: set = set()
        self.imported: dict = {}          # outer atom -> this scope's var

    def atom(self, a):
        if type(a) is Literal or a in self.defined:
            return a
        if a not in self.imported:
            if self.parent is None:
                raise AssertionError(f"kernel lowering: {a} is defined nowhere")
            self.parent.atom(a)
            self.imported[a] = Var(a.type)
            self.defined.add(self.imported[a])     # this scope's name for it
        return self.imported[a]

    def emit(self, prim, inputs, source, **params):
        out = self.b.emit(prim, [self.atom(a) for a in inputs], params, source)
        for v in (out if isinstance(out, list) else [out]):
            self.defined.add(v)
        return out

    def depth(self) -> int:
        return 0 if self.parent is None else 1 + self.parent.depth()


# --- the lowering of one region ----------------------------------------------------------------
class BodyLowering(C2vCarryLowering):
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

    # --- loads and stores --------------------------------------------------------------------
    def load(self, eqn, vals):
        ref, *starts = vals
        out = eqn.outputs[0].type
        if ref.kind != "gm":
            raise self.error(ShapeError, "kernel_load reads a ref")
        if out.shape == ():
            return self._scalar_load(ref, starts, eqn)
        if len(out.shape) > 2:
            raise self.error(ShapeError, (
                f"a {len(out.shape)}-d tile {out}: tiles are at most 2-d; index the leading "
                f"dimensions of the window (ref[0, :, :])"))
        return self.new_value("window", out.shape, out.dtype, ref=ref.atom,
                              starts=tuple(self.as_scalar(s) for s in starts),
                              sizes=tuple(eqn.params["sizes"]))

    def _scalar_load(self, ref, starts, eqn):
        shape = ref.shape
        if math.prod(shape) != 1:
            raise self.error(UnsupportedError, (
                f"loading one element of a {shape} array: scalar loads read one-element "
                f"arrays; load a tile and compute with it instead"))
        return self.new_value("scalar", (), ref.dtype,
                              atom=self.emit(T.tile_scalar_load_p, [ref.atom]))

    def geometry(self, ref_type, starts, sizes):
        """(view, r0, c0, rows, cols) of a window in the ref's 2-d view (leading dims flattened
        into rows); the window must be a rectangle there."""
        shape = ref_type.shape
        if len(shape) == 1:
            return (1, shape[0]), idx(0), starts[0], 1, sizes[0]
        if any(s != 1 for s in sizes[:-2]):
            raise self.error(ShapeError, (
                f"a window of {tuple(sizes)} elements of a {shape} array is not a rectangle "
                f"of its rows: index the leading dimensions (size 1 or None in the block)"))
        view = (math.prod(shape[:-1]), shape[-1])
        r0 = idx(0)
        stride = 1
        for d in range(len(shape) - 2, -1, -1):
            r0 = self.scalar_op(ar.add_p, r0, self.scalar_op(ar.mul_p, starts[d], idx(stride)))
            stride *= shape[d]
        return view, r0, starts[-1], sizes[-2], sizes[-1]

    def _window_tile(self, v, layout):
        """TLOAD of a window into a UB tile of ``layout``."""
        view, r0, c0, rows, cols = self.geometry(TensorType(self._ref_shape(v), v.dtype),
                                                 v.starts, v.sizes)
        phys, valid = ub_shape(v.shape, layout, v.dtype)
        if layout == ROW and rows == 1 and cols > 1:          # contiguous run -> a column
            r0 = self.scalar_op(ar.add_p, self.scalar_op(ar.mul_p, r0, idx(view[1])), c0)
            view, c0 = (view[0] * view[1], 1), idx(0)
        elif layout == COL and cols == 1 and rows > 1:
            if view[1] != 1:
                raise self.error(UnsupportedError, (
                    f"a strided column of a {view} array as a [1, {rows}] tile; load it as a "
                    f"row vector (x[:, None]) instead"))
            view, r0, c0 = (1, view[0]), idx(0), r0
        return self.emit(T.tile_load_p, [v.ref, r0, c0], space="UB", shape=phys,
                         valid=valid, view=view, transpose=False, stage=None)

    def _ref_shape(self, v):
        return v.ref.type.shape

    def store(self, eqn, vals):
        ref, value, *starts = vals
        starts = [self.as_scalar(s) for s in starts]
        p = eqn.params
        sizes, add = p["sizes"], p.get("add", False)
        ref_type = ref.atom.type
        view, r0, c0, rows, cols = self.geometry(ref_type, starts, sizes)
        shape = value.shape
        if add and ref_type.dtype.name not in ("float32", "int32"):
            raise self.error(DtypeError, (
                f"atomic adds accumulate float32 or int32 outputs, not "
                f"{dtypes.short_name(ref_type.dtype)}; accumulate into a float32 output and "
                f"convert it after the kernel"))
        if shape == ():
            raise self.error(UnsupportedError, "storing a scalar: store a [1, 1] tile")
        if value.kind == "acc" and len(shape) == 2 and rows == shape[0] and cols == shape[1]:
            tile = value.atom                                   # the cube stores L0C itself
        else:
            layout = self._store_layout(value, rows, cols)
            tile = self.ub(value, layout)
            if layout == ROW and rows == 1:                     # a contiguous run
                r0 = self.scalar_op(ar.add_p, self.scalar_op(ar.mul_p, r0, idx(view[1])), c0)
                view, c0 = (view[0] * view[1], 1), idx(0)
            elif layout == COL and rows > 1:
                raise self.error(UnsupportedError, "storing a column vector into a column")
        stored = self.emit(T.tile_store_p, [ref.atom, tile, r0, c0], view=view, atomic=add)
        return self.new_value("gm", ref.shape, ref.dtype, atom=stored)

    @staticmethod
    def _store_layout(value, rows, cols):
        """The UB layout a value is stored from: a column window takes a row vector; a run of
        a row takes the value as it is (a row vector through a flat view, or a column)."""
        if len(value.shape) == 2:
            return layout_of(value.shape)
        if cols == 1 and rows > 1:
            return ROW
        return value.layout if value.kind == "tile" else COL

    # --- materializing values in UB ----------------------------------------------------------
    def ub(self, v: Value, layout: str, shape=None):
        """``v`` as a UB tile var of ``layout``, materialized in the scope that defined it (so
        a loop reuses a value computed before it) and cached there. A scalar is filled into
        a tile of ``shape`` (its consumer's)."""
        if v.kind == "scalar":
            v = Value("bcast", tuple(shape), v.dtype, v.scope, src=v, layout="scalar",
                      made=v.made.setdefault(("fill", tuple(shape)), {}))
        if v.kind == "tile":
            if v.layout != layout:
                raise self.error(UnsupportedError, (
                    f"a {v.shape} value is a {v.layout} vector here but is needed as a "
                    f"{layout} vector; reshape it explicitly (x[:, None] or x[None, :])"))
            return v.atom
        key = ("ub", layout)
        if key in v.made:
            return v.made[key]
        saved = self.scope
        self.scope = v.scope
        try:
            t = self._materialize(v, layout)
        finally:
            self.scope = saved
        v.made[key] = t
        return t

    def _materialize(self, v, layout):
        phys, valid = ub_shape(v.shape, layout, v.dtype)
        if v.kind == "bcast":
            if v.layout == "scalar":
                return self.emit(T.tile_fill_p, [self.as_scalar(v.src)], shape=phys,
                                 valid=valid)
            assert layout == FULL, "row/column broadcasts are full tiles"
            src = self.ub(v.src, v.layout)
            prim = T.tile_row_expand_p if v.layout == ROW else T.tile_col_expand_p
            return self.emit(prim, [src], shape=phys, valid=valid)
        if v.kind == "window":
            return self._window_tile(v, layout)
        if v.kind == "acc":
            return self.acc_to_ub(v, layout)
        if v.kind == "iota":
            return self._iota_tile(v, layout)
        if v.kind == "trans":
            raise self.error(UnsupportedError, (
                "a transposed tile is used by a vector operation: tiles are transposed only "
                "as matmul operands (pto.kernel.dot(a, b, trans_b=True) or a @ b.T)"))
        raise AssertionError(v.kind)

    def _iota_tile(self, v, layout):
        shape = v.shape
        if len(shape) == 1:
            phys, valid = ub_shape(shape, layout, dtypes.int32)
            t = self.emit(T.tile_iota_p, [idx(0)], shape=phys, valid=valid)
        else:
            vec_layout = ROW if v.dim == 0 else COL
            n = shape[v.dim]
            src = self.new_value("iota", (n,), dtypes.int32, dim=0)
            src.scope = v.scope
            b = self.new_value("bcast", shape, dtypes.int32, src=src, layout=vec_layout)
            b.scope = v.scope
            t = self.ub(b, layout) if layout == FULL else self.ub(src, layout)
        if v.dtype != dtypes.int32:
            t = self.emit(T.ELEMENTWISE_TILE_PRIMS[cv.convert_element_type_p], [t],
                          new_dtype=v.dtype, weak_type=False)
        return t

    # --- cube <-> vector through GM workspaces -----------------------------------------------
    def workspace(self, rows, cols, dtype, direction, depth=1):
        """A per-core GM workspace of ``rows`` x ``cols`` carrying values ``direction`` ("c2v",
        "v2c": cube <-> vector; "c2c": L0C back to L1): (var, view, row offset of this core's
        part). A loop at the top of the body reuses the workspaces of the loop before it whose
        direction and size match, each once (the unmasked and the
        masked loops of causal attention run the same transfers), so sequential loops do not
        multiply the workspaces and cross-core flags (the schedule orders the reuse: same GM
        tensor). ``depth`` 2: each core's part holds two copies (a matmul result carried to the
        next step, ``_carry_in_c2v``), so the cube can store the next step's value while the
        vector unit still loads this one."""
        rows, cols = align_up(rows, 16), align_up(cols, max(1, 32 // dtype.itemsize))
        key = (rows, cols, dtype, direction, depth)
        same = [n for n, (_, k, _) in enumerate(self._ws_reuse) if k == key]
        if same:
            i, _, _ = self._ws_reuse.pop(same[0])
            self._ws_loop.append((i, key, self.scope))
            return self._ws_part(i, rows, depth)
        i = len(self.workspaces)
        if i < len(self.k.workspaces):          # every region shares the kernel's workspaces
            r, c, _ = self.k.workspaces[i]
            rows, cols = max(rows, r), max(cols, c)
            self.k.workspaces[i] = (rows, cols, dtype)
            self.k.depths[i] = min(self.k.depths[i], depth)
        else:
            self.k.workspaces.append((rows, cols, dtype))
            self.k.depths.append(depth)
        ws = Var(TensorType((self.k.blocks * self.k.depths[i] * rows, cols), dtype))
        self._ws_loop.append((len(self.workspaces), key, self.scope))
        self.workspaces.append(ws)
        self.top.defined.add(ws)
        return self._ws_part(i, rows, depth)

    def _ws_part(self, i, rows, depth):
        """(var, view, row offset) of this core's part of workspace ``i`` (its first copy)."""
        ws = self.workspaces[i]
        row = self.scalar_op(ar.mul_p, self.block_index(), idx(self.k.depths[i] * rows))
        return ws, ws.type.shape, row

    def acc_to_ub(self, v, layout):
        """L0C -> GM workspace (converting to the block dtype) -> UB. A result a vector
        instruction reads was stored to its workspace by its matmul already, so the cube
        does not wait for the vector unit to reach its first use."""
        if layout != FULL and layout_of(v.shape) != layout:
            raise self.error(UnsupportedError, f"a matmul result used as a {layout} vector")
        stored, view, row = v.made.get("c2v") or self._acc_to_ws(v)
        phys, valid = ub_shape(v.shape, layout, v.dtype)
        return self.emit(T.tile_load_p, [stored, row, idx(0)], space="UB", shape=phys,
                         valid=valid, view=view, transpose=False, stage=None)

    def _acc_to_ws(self, v):
        """TSTORE an L0C result to a c2v workspace, here: (stored var, view, row)."""
        m, n = v.shape
        ws, view, row = self.workspace(m, n, v.dtype, "c2v")
        stored = self.emit(T.tile_store_p, [ws, v.atom, row, idx(0)], view=view, atomic=False)
        v.made["c2v"] = (stored, view, row)
        return v.made["c2v"]

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

    # --- matmuls -----------------------------------------------------------------------------
    def matmul(self, eqn, vals):
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        a, b = vals
        at, bt = eqn.inputs[0].type, eqn.inputs[1].type
        if lb or rb or at.ndim != 2 or bt.ndim != 2:
            raise self.error(UnsupportedError, (
                f"dot_general of {at.shape} and {bt.shape} with dimension numbers "
                f"{eqn.params['dimension_numbers']}: kernels multiply 2-d tiles"))
        dt = at.dtype
        if dt != bt.dtype or dt.name not in CUBE_DTYPES or \
                dt.name not in self.target.cube_macs_per_cycle:
            raise self.error(DtypeError, (
                f"matmul of {dtypes.short_name(at.dtype)} and {dtypes.short_name(bt.dtype)} "
                f"tiles: the {self.target.name} cube multiplies "
                f"{', '.join(sorted(self.target.cube_macs_per_cycle))} tiles of one dtype. "
                f"Fix: convert both with .astype(float16) (or float32)"))
        a_t = lc[0] == 0          # the lhs is stored [K, M]
        b_t = rc[0] == 1          # the rhs is stored [N, K]
        if a.kind == "trans":
            a, a_t = a.src, not a_t
        if b.kind == "trans":
            b, b_t = b.src, not b_t
        m = at.shape[1] if lc[0] == 0 else at.shape[0]
        kk = at.shape[lc[0]]
        n = bt.shape[0] if rc[0] == 1 else bt.shape[1]
        a_src = self.cube_source(a, a_t)
        b_src = self.cube_source(b, b_t)
        into = self.acc_into.get(eqn.outputs[0])     # a loop's L0C accumulator carry
        acc = None if into is None else into.atom
        self.matmuls += 1          # each operand's K steps share one double buffer
        # an operand the other core wrote (through a workspace) is loaded last: the cube
        # loads the other while it waits for that one
        a_last = self._from_other_core(a) and not self._from_other_core(b)
        steps = self._k_steps(m, kk, n, dt)
        keep = len(steps) == 1     # later K steps overwrite a step's L0 copy: not reusable
        for k0, kc in steps:
            if a_last:
                b0 = self._operand_l0(b, b_src, (k0, 0), (kc, n), "L0B", f"mm{self.matmuls}b",
                                      keep)
            a0 = self._operand_l0(a, a_src, (0, k0), (m, kc), "L0A", f"mm{self.matmuls}a", keep)
            if not a_last:
                b0 = self._operand_l0(b, b_src, (k0, 0), (kc, n), "L0B", f"mm{self.matmuls}b",
                                      keep)
            acc = self.emit(T.tile_matmul_p, [a0, b0]) if acc is None else \
                self.emit(T.tile_matmul_acc_p, [acc, a0, b0])
        out = eqn.outputs[0].type
        value = self.new_value("acc", out.shape, out.dtype, atom=acc)
        if self._read_by_vector(eqn.outputs[0]):
            self._acc_to_ws(value)
        return value

    def _from_other_core(self, v) -> bool:
        """Whether a matmul operand reaches the cube from the vector unit (a UB value, or one
        carried in its workspace) rather than from an input."""
        return v.kind != "window" or v.ref in self._carried

    def _read_by_vector(self, var) -> bool:
        """Whether a vector instruction of this body reads the matmul result ``var`` (not
        only a matmul, a store to an output, a conversion or a loop's L0C accumulation), or
        it is the new value of a loop carry held in UB (loaded by the vector unit at the end
        of the step: stored at once, the cube does not hold it back behind later work)."""
        return var in self._ub_carry_outs or any(e.prim not in (dot_general_p, kernel_store_p, cv.convert_element_type_p,
                                  kernel_fori_p) and e not in self.acc_adds
                   for e in self._uses.get(var, ()))

    def _k_steps(self, m, k, n, dtype):
        """K steps whose double-buffered L0A/L0B operands each take at most a quarter of L0."""
        item = dtype.itemsize
        budget = min(self.target.capacity("L0A"), self.target.capacity("L0B")) // 4
        mp, np_ = align_up(m, 16), align_up(n, 16)
        if mp * 16 * item > budget or np_ * 16 * item > budget:
            raise self.error(TileError, (
                f"a matmul with {m} x {n} outputs does not fit {self.target.name}'s L0A/L0B "
                f"even 16 columns of K at a time; use blocks of at most "
                f"{budget // (16 * item)} rows/columns"))
        kc = 16
        while kc * 2 <= align_up(k, 16) and mp * kc * 2 * item <= budget and \
                kc * 2 * np_ * item <= budget:
            kc *= 2
        return [(k0, min(kc, k - k0)) for k0 in range(0, k, kc)]

    def cube_source(self, v, transposed):
        """Where the cube reads operand ``v`` (logical (rows, cols) as the matmul uses it):
        a GM window (ref or workspace) as (gm atom, view, r0, c0, transposed, rows, cols)."""
        key = ("cube", transposed)
        if key in v.made:
            return v.made[key]
        saved = self.scope
        self.scope = v.scope
        try:
            if v.kind == "window":
                view, r0, c0, rows, cols = self.geometry(v.ref.type, v.starts, v.sizes)
                if len(v.shape) != 2 or (rows, cols) != v.shape:
                    raise self.error(UnsupportedError, (
                        f"a {v.shape} window as a matmul operand: the cube reads 2-d windows"))
                src = (v.ref, view, r0, c0, transposed, rows, cols)
            else:
                if v.kind == "acc":
                    t, rows, cols = v.atom, *v.shape
                else:
                    if len(v.shape) != 2:
                        raise self.error(UnsupportedError, "matmul operands are 2-d tiles")
                    t = self.ub(v, layout_of(v.shape))
                    rows, cols = v.shape
                ws, view, row = self.workspace(rows, cols, v.dtype,
                                               "c2c" if v.kind == "acc" else "v2c")
                stored = self.emit(T.tile_store_p, [ws, t, row, idx(0)], view=view,
                                   atomic=False)
                src = (stored, view, row, idx(0), transposed, rows, cols)
        finally:
            self.scope = saved
        v.made[key] = src
        return src

    def _operand_l0(self, v, src, offset, extent, space, stage, keep=True):
        """The operand's L0 tile for one K step, loaded where ``v`` was defined: a loop
        reuses an operand it did not compute (the query block of attention) every step. The
        K steps of one matmul share one L0 buffer (``stage``), so a tile of a matmul split
        into several steps is overwritten by the next step: it is extracted where it is used
        and not kept for reuse (``keep`` False), from the whole operand, which is loaded into
        L1 once where ``v`` was defined (L1 holds what L0 cannot: a loop-invariant query block
        split along K stays in L1 across the loop, as CANN's FlashAttentionScore keeps Q)."""
        key = ("l0", src[4], offset, extent, space)
        if key in v.made:
            return v.made[key]
        if not keep:
            return self._extract(self._whole_l1(v, src), offset, extent, space, stage)
        saved = self.scope
        self.scope = v.scope
        try:
            v.made[key] = self._to_l0(src, offset, extent, space, stage)
        finally:
            self.scope = saved
        return v.made[key]

    def _whole_l1(self, v, src):
        """All of operand ``v`` in L1, loaded once where ``v`` was defined."""
        key = ("l1", src[4])
        if key not in v.made:
            gm, view, r0, c0, transposed, rows, cols = src
            if transposed:      # logical (rows, cols) = stored (cols, rows) window, transposed
                r0, c0, rows, cols = c0, r0, cols, rows
            phys, valid = cube_shape(rows, cols)
            saved = self.scope
            self.scope = v.scope
            try:
                v.made[key] = self.emit(T.tile_load_p, [gm, r0, c0], space="L1", shape=phys,
                                        valid=valid, view=view, transpose=transposed)
            finally:
                self.scope = saved
        return v.made[key]

    def _extract(self, l1, offset, extent, space, stage):
        """TEXTRACT the (rows, cols) block at ``offset`` of an L1 tile to L0A/L0B."""
        phys, valid = cube_shape(*extent)
        return self.emit(T.tile_move_p, [l1], space=space, stage=stage, index=tuple(offset),
                         shape=phys, valid=valid)

    def _to_l0(self, src, offset, extent, space, stage):
        """TLOAD the (rows, cols) block at ``offset`` of the operand into L1, TEXTRACT it to
        L0A/L0B."""
        gm, view, r0, c0, transposed, _, _ = src
        dr, dc = offset
        rows, cols = extent
        if transposed:          # logical (rows, cols) = stored (cols, rows) window, transposed
            lr = self.scalar_op(ar.add_p, c0, idx(dr))
            lc_ = self.scalar_op(ar.add_p, r0, idx(dc))
        else:
            lr = self.scalar_op(ar.add_p, r0, idx(dr))
            lc_ = self.scalar_op(ar.add_p, c0, idx(dc))
        phys, valid = cube_shape(rows, cols)
        l1 = self.emit(T.tile_load_p, [gm, lr, lc_], space="L1", shape=phys, valid=valid,
                       view=view, transpose=transposed, stage=stage)
        return self.emit(T.tile_move_p, [l1], space=space, stage=stage)

    # --- loops -------------------------------------------------------------------------------
    def fori(self, eqn, vals):
        n = eqn.params["num_carry"]
        body = loop_body(eqn.params)
        lo, hi, *args = vals
        carries, consts = args[:n], args[n:]
        accs = accumulated_carries(body, n, carries)
        steps = [self.as_scalar(b) for b in (lo, hi)]
        if accs and all(type(b) is Literal for b in steps) and \
                int(steps[1].value) > int(steps[0].value):
            return self._fori_in_l0c(eqn, body, n, int(steps[0].value), int(steps[1].value),
                                     carries, consts, accs)
        return self._fori(eqn, body, n, lo, hi, carries, consts, {})

    def _fori_in_l0c(self, eqn, body, n, lo, hi, carries, consts, accs):
        """A loop whose carries accumulate matmuls (``acc + K.dot(a, b)``, from zeros) keeps
        them in L0C: the first step runs before the loop with TMATMUL, the others
        accumulate with TMATMUL_ACC into the carried L0C tile."""
        env = {body.invars[0]: self._literal(idx(lo))}
        env.update(zip(body.invars[1:1 + n], carries))
        env.update(zip(body.invars[1 + n:], consts))
        self.acc_adds.update((add, d) for _, add, d in accs.values())
        self.run(body.eqns, env)
        self.source = eqn.source
        first = [env[o] if type(o) is Var else self._literal(o) for o in body.outvars]
        if hi == lo + 1:
            return first
        return self._fori(eqn, body, n, self._literal(idx(lo + 1)), self._literal(idx(hi)),
                          first, consts, accs)

    def _fori(self, eqn, body, n, lo, hi, carries, consts, accs):
        in_ws = {i for i in workspace_carries(body, n, carries) - set(accs)
                 if handed_on(body, i, eqn.outputs[i], self._uses)}
        in_c2v = {i for i in c2v_carries(body, n) - set(accs) - in_ws
                  if self._c2v_ok(eqn, carries[i], body, i, lo, hi)}
        top_level = self.scope is self.top
        if top_level:       # (a carry's workspace may be one the loop before used)
            self._ws_reuse, self._ws_loop = _distinct_workspaces(self._ws_loop), []
        inits = [(c.atom, "acc") if i in accs else
                 self._carry_in_workspace(c) if i in in_ws else
                 self._carry_in_c2v(c, body.invars[1 + i]) if i in in_c2v else
                 self._carry_init(c, v, body)
                 for i, (c, v) in enumerate(zip(carries, body.invars[1:1 + n]))]
        first = self.as_scalar(lo)
        through = {body.invars[1 + i] for i in in_c2v if body.outvars[i] is body.invars[1 + i]}
        outer = self.scope
        inner = Scope(outer)
        self.scope = inner
        mark = len(self._ws_loop)
        ub_outs = set()
        try:
            kvar = Var(I32)
            inner.defined.add(kvar)
            env = {body.invars[0]: Value("scalar", (), dtypes.int32, inner, atom=kvar)}
            carry_vars = []
            for v, (atom, form) in zip(body.invars[1:1 + n], inits):
                cv_ = Var(atom.type)
                inner.defined.add(cv_)
                carry_vars.append(cv_)
                env[v] = self._c2v_value(v, cv_, form, kvar, first, v in through) if \
                    isinstance(form, C2vCarry) else self._carry_value(v, cv_, form, inner)
            env.update(zip(body.invars[1 + n:], consts))
            for i, (dot, _, _) in accs.items():
                self.acc_into[dot] = env[body.invars[1 + i]]
            for i in in_ws:
                self._early_store[body.outvars[i]] = (carry_vars[i], inits[i][1])
            for i in in_c2v:      # stored as soon as the cube computes it
                if body.outvars[i] is not body.invars[1 + i]:
                    self._early_c2v[body.outvars[i]] = (carry_vars[i], inits[i][1], kvar, first)
            ub_outs = {o for o, (_, form) in zip(body.outvars, inits) if type(o) is Var
                       and isinstance(form, str) and form not in ("acc", "gm")}
            self._ub_carry_outs |= ub_outs
            self.run(body.eqns, env)
            self.source = eqn.source
            outs = [c if o in through else self.scope.atom(env[o].made[("c2v carry", c)])
                    if isinstance(form, C2vCarry)
                    else self._carry_out(env[o] if type(o) is Var else self._literal(o), atom,
                                         form, c)
                    for o, (atom, form), c in zip(body.outvars, inits, carry_vars)]
            outs = [self._copy_if_read_late(o, c, inner) for o, c in zip(outs, carry_vars)]
            outs = self._in_own_buffers(outs, carry_vars, [f for _, f in inits], inner)
            if not top_level:
                # a nested loop's own transfers (of values of its body) are done when it
                # ends: the rest of the enclosing step reuses their workspaces
                self._ws_reuse = [w for w in self._ws_loop[mark:] if w[2] is inner] + \
                    self._ws_reuse
        finally:
            self.scope = outer
            for i in in_ws:
                self._early_store.pop(body.outvars[i], None)
            for i in in_c2v:
                self._early_c2v.pop(body.outvars[i], None)
            self._ub_carry_outs -= ub_outs
            if top_level:
                self._ws_reuse = []
        imported = list(inner.imported.items())
        body_ir = inner.b.build([kvar, *carry_vars, *(v for _, v in imported)], outs)
        bounds, params = [], {}
        for name, b in (("start", lo), ("stop", hi)):
            a = self.as_scalar(b)
            if type(a) is Literal:
                params[name] = int(a.value)
            else:
                params[name] = None
                bounds.append(a)
        results = self.emit(T.tile_loop_p, [*(a for a, _ in inits),
                                            *(o for o, _ in imported), *bounds],
                            body=body_ir, num_carry=n, **params)
        return [self._c2v_result(v, r, form, first, self.as_scalar(hi), v in through)
                if isinstance(form, C2vCarry) else self._carry_value(v, r, form, self.scope)
                for v, r, (_, form) in zip(body.invars[1:1 + n], results, inits)]

    def _copy_if_read_late(self, out, carry, scope):
        """A carry's new value takes the carry's buffer; if the old value is read after the
        new one is computed (``alpha = exp(m - m_new)``), the new value is computed elsewhere
        and copied into the carry's buffer at the end of the step."""
        if out is carry or not isinstance(out.type, TileType):
            return out
        eqns = scope.b.eqns
        at = next((i for i, e in enumerate(eqns) if out in e.outputs), None)
        if at is None or not any(carry in e.inputs for e in eqns[at + 1:]):
            return out
        return self._copy(out)

    def _in_own_buffers(self, outs, carries, forms, scope):
        """The new values of a step's UB carries, each copied into a tile of its own where it
        cannot take its carry's buffer as it is (``_takes_carry_buffer``): the loop updates
        every carry in place, its buffer holding the next step's value."""
        taken = set()
        for i, (out, carry, form) in enumerate(zip(outs, carries, forms)):
            if not isinstance(form, str) or form in ("acc", "gm") or \
                    not isinstance(out.type, TileType):
                continue
            if not _takes_carry_buffer(out, carry, scope, taken):
                out = outs[i] = self._copy(out)
            taken.add(out)
        return outs

    def _carry_init(self, value, var, body):
        """(initial atom, form) of a loop carry: a GM ref, or a UB tile of a layout (a 1-d
        carry is a row vector unless the body uses it as a column)."""
        t = var.type
        if value.kind == "gm":
            return value.atom, "gm"
        if t.shape == ():
            raise self.error(UnsupportedError, (
                "a scalar loop carry: kernel loops carry tiles (and refs); compute scalars "
                "from the loop index instead"))
        if value.kind == "tile":
            layout = value.layout
        elif len(t.shape) == 2:
            layout = layout_of(t.shape)
        else:
            layout = _vector_use(body, var)
        return self._fresh_tile(value, layout), layout

    def _fresh_tile(self, value, layout):
        """A UB tile of ``value`` that nothing else reads: the loop updates a carry's buffer in
        place, so two carries (``(zeros, zeros)``) or a value used after the loop must not
        share it."""
        if value.kind == "bcast" and value.layout == "scalar":
            return self._materialize(value, layout)              # a fill of its own
        return self._copy(self.ub(value, layout))

    def _copy(self, tile):
        """A copy of a UB tile (times one: the vector unit has no plain move)."""
        dtype = tile.type.dtype
        return self.emit(T.ELEMENTWISE_TILE_PRIMS[ar.mul_p],
                         [tile, Literal(np.asarray(1, dtype), TensorType((), dtype))])

    def _carry_in_workspace(self, value):
        """(initial atom, form) of a carry only matmuls read: it lives in a v2c workspace
        (stored where the body computes it, loaded by the cube at its first use in the next
        step), so the cube need not wait for the vector unit to finish the step. A value
        carried so by the loop before keeps its workspace."""
        if value.kind == "window" and value.ref in self._carried:
            return value.ref, self._carried[value.ref]
        m, n = value.shape
        ws, view, row = self.workspace(m, n, value.dtype, "v2c")
        self._ws_loop.pop()          # no later loop reuses it for its own transfers
        form = ("ws", row, view)
        stored = self.emit(T.tile_store_p, [ws, self.ub(value, FULL), row, idx(0)], view=view,
                           atomic=False)
        self._carried[stored] = form
        return stored, form

    def _store_carry(self, value, carry, form):
        """Store a loop body's new value of a workspace carry into the carry's workspace."""
        if value.kind == "window" and value.ref is carry:
            return
        if ("ws", carry) not in value.made:
            _, row, view = form
            value.made[("ws", carry)] = self.emit(
                T.tile_store_p, [carry, self.ub(value, FULL), row, idx(0)], view=view,
                atomic=False)

    def _carry_value(self, var, atom, form, scope):
        t = var.type
        if isinstance(form, tuple):
            self._carried[atom] = form
            return Value("window", t.shape, t.dtype, scope, ref=atom, starts=(form[1], idx(0)),
                         sizes=t.shape)
        if form == "acc":
            return Value("acc", t.shape, t.dtype, scope, atom=atom)
        if form == "gm":
            return Value("gm", t.shape, t.dtype, scope, atom=atom)
        return Value("tile", t.shape, t.dtype, scope, atom=atom, layout=form)

    def _carry_out(self, value, init_atom, form, carry):
        if isinstance(form, tuple):
            if value.kind == "window" and value.ref is carry:
                return carry
            self._store_carry(value, carry, form)
            return self.scope.atom(value.made[("ws", carry)])
        if form == "acc":
            return self.scope.atom(value.atom)
        if form == "gm":
            return self.scope.atom(value.atom)
        atom = self.scope.atom(self.ub(value, form))
        if atom.type != init_atom.type:
            raise self.error(ShapeError, (
                f"a loop carry changes from {init_atom.type} to {atom.type} in the body"))
        return atom


def _takes_carry_buffer(out, carry, scope, taken) -> bool:
    """Whether a loop body's new value ``out`` of a UB carry can live in the carry's buffer
    as it is: the carry passed through, a tile the step computes (not the new value of
    another carry), or the result of a nested loop (or accumulation) updating the carry's own
    buffer. A value from outside the step or another carry has a buffer of its own, and a
    nested loop's result lives in its own carry's buffer: a copy takes the carry's."""
    if out is carry:
        return True
    if out in taken:
        return False
    defs = {o: e for e in scope.b.eqns for o in e.outputs}
    a = out
    while a in defs and defs[a].prim in (T.tile_loop_p, T.tile_matmul_acc_p):
        e = defs[a]
        a = e.inputs[e.outputs.index(a)] if e.prim is T.tile_loop_p else e.inputs[0]
    return a is carry or (a is out and out in defs)


def _vector_use(body: IR, var) -> str:
    """How a loop body uses a 1-d carry: as a column vector if it broadcasts or reshapes it
    to [1, C], else as a row vector (the statistics of online softmax)."""
    for e in body.eqns:
        if var not in e.inputs or not e.outputs:
            continue
        shape = e.outputs[0].type.shape
        if e.prim in (reshape_p, expand_dims_p) and len(shape) == 2 and shape[0] == 1:
            return COL
        if e.prim is broadcast_in_dim_p and tuple(e.params["broadcast_dimensions"]) == (1,):
            return COL
    return ROW


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


def _distinct_workspaces(used) -> list:
    """The workspaces a loop used, each once, in order of first use."""
    seen = set()
    return [w for w in used if not (w[0] in seen or seen.add(w[0]))]
