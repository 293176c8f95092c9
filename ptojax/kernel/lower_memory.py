"""Loads, stores and UB placement of ``pto.kernel`` block values, and the GM workspaces
between the cube and vector cores: ``MemoryLowering``, the part of ``kernel/lower.py``'s
``BodyLowering`` that turns a window of a GM ref into a scalar load or a lazy window (TLOAD
into UB when a vector instruction first needs it), stores tiles (or an L0C accumulator
directly) into GM windows, materializes lazy values (fills, row/column expansions, windows,
iotas, matmul results) as UB tiles of a layout in the scope that defined them, and
allocates the per-core GM workspaces (reused by sequential top-level loops) through which
an accumulator reaches UB."""
from __future__ import annotations

import math

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError, UnsupportedError
from ptojax.ir.core import Var
from ptojax.ir.types import TensorType
from ptojax.kernel.values import COL, FULL, ROW, Value, idx, layout_of, ub_shape
from ptojax.ops import arithmetic as ar
from ptojax.ops import convert as cv
from ptojax.tile import ops as T
from ptojax.tile.memory import align_up


class MemoryLowering:
    """Loads, stores, UB materialization and cube <-> vector workspaces of ``BodyLowering``
    (which provides ``k``, ``top``, ``scope``, ``workspaces``, ``_ws_loop``, ``_ws_reuse``,
    ``emit``, ``error``, ``in_scope_of``, ``new_value``, ``scalar_op``, ``as_scalar`` and
    ``block_index``)."""

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
        with self.in_scope_of(v):
            t = self._materialize(v, layout)
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
