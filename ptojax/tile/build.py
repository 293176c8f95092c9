"""Building the body of one tile kernel (one region of its grid) from a fused group.

``BodyBuilder`` walks the group's equations in program order and asks each one's tile rule to
emit tile operations. Tensor values are represented lazily (``Value``): a tile, a scalar, a row
or column tile standing for its broadcast, or a cube accumulator; ``tile`` materializes one as
a tile of the needed layout when an operation needs it. Inputs from outside the kernel are
loaded on first use, and outputs are stored at the end.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.ir.builder import IRBuilder
from ptojax.ir.core import Literal, Var
from ptojax.ir.types import TensorType
from ptojax.ops import arithmetic as ar, convert as cv
from ptojax.tile import ops as T
from ptojax.tile.img2col import Img2colConfig, tile_img2col_p
from ptojax.tile.rules import (COL, COLSUM, FULL, ROW, SCALAR, broadcast_kind, form_of,
                               matmul_shape, rule_of)

I32 = TensorType((), dtypes.int32)


def index(value: int) -> Literal:
    return Literal(np.int32(value), I32)


class Value:
    """A tensor value inside a kernel body: kind is tile | scalar | rowb | colb | acc."""
    __slots__ = ("kind", "atom")

    def __init__(self, kind, atom):
        self.kind = kind
        self.atom = atom


class BodyBuilder:
    """Emits one kernel body: tiles of ``tile`` shape, valid region ``valid``."""

    def __init__(self, group, tile, valid, target, cube=None):
        self.group = group
        self.space = group.space
        self.tile_shape = tuple(tile)
        self.valid = tuple(valid)
        self.target = target
        self.cube = cube
        self.b = IRBuilder()
        self.ti, self.tj = Var(I32), Var(I32)
        self.gm_in: dict = {}          # outer var -> body GM var
        self.workspaces: list = []
        self.env: dict = {}            # outer var -> Value
        self.loaded: dict = {}         # (outer var, layout) -> Value
        self.made: dict = {}           # (id(value), layout) -> tile var
        self.offsets: dict = {}

    # --- emission helpers --------------------------------------------------------------------
    def emit(self, prim, inputs, **params):
        return self.b.emit(prim, list(inputs), params)

    def row0(self):
        return self._offset("r", self.ti, self.tile_shape[0])

    def col0(self):
        return self._offset("c", self.tj, self.tile_shape[1])

    def _offset(self, key, idx, size):
        if key not in self.offsets:
            self.offsets[key] = self.emit(ar.mul_p, [idx, index(size)])
        return self.offsets[key]

    def shape_of(self, layout):
        r, c = self.tile_shape
        return {FULL: (r, c), ROW: (T.row_vector_rows(r), 1), COL: (1, c),
                COLSUM: (1, c)}[layout]

    def valid_of(self, layout):
        vr, vc = self.valid
        return {FULL: (vr, vc), ROW: (vr, 1), COL: (1, vc), COLSUM: (1, vc)}[layout]

    def convert(self, atom, dtype):
        if atom.type.dtype == dtype:
            return atom
        if isinstance(atom, Literal):
            return Literal(np.asarray(atom.value).astype(dtype), TensorType((), dtype))
        prim = T.ELEMENTWISE_TILE_PRIMS[cv.convert_element_type_p] \
            if isinstance(atom.type, T.TileType) else cv.convert_element_type_p
        return self.emit(prim, [atom], new_dtype=dtype, weak_type=False)

    # --- values ------------------------------------------------------------------------------
    def gm(self, var):
        if var not in self.gm_in:
            self.gm_in[var] = Var(var.type)
        return self.gm_in[var]

    def get(self, atom, layout) -> Value:
        """The Value of an operand, loading it (or building its pulled producer) if needed."""
        if isinstance(atom, Literal):
            return Value("scalar", atom)
        if atom in self.env:
            return self.env[atom]
        pulled = self.group.pulled.get(atom)
        if pulled is not None and pulled[1] == layout:
            self.build_eqn(pulled[0], pulled[2])
            return self.env[atom]
        key = (atom, layout)
        if key not in self.loaded:
            self.loaded[key] = self._load(atom, layout)
        return self.loaded[key]

    def _load(self, var, layout) -> Value:
        gm = self.gm(var)
        m, n = self.space
        if layout == SCALAR:
            return Value("scalar", self.emit(T.tile_scalar_load_p, [gm]))
        view = {FULL: (m, n), ROW: (m, 1), COL: (1, n)}[layout]
        r0 = self.row0() if layout in (FULL, ROW) else index(0)
        c0 = self.col0() if layout in (FULL, COL) else index(0)
        tile = self.emit(T.tile_load_p, [gm, r0, c0], space="UB", shape=self.shape_of(layout),
                         valid=self.valid_of(layout), view=view, transpose=False)
        return Value("tile", tile)

    def tile(self, value: Value, layout):
        """``value`` as a UB tile of ``layout`` (materializing broadcasts and accumulators)."""
        if value.kind == "tile":
            return value.atom
        key = (id(value), layout)
        if key in self.made:
            return self.made[key]
        shape, valid = self.shape_of(layout), self.valid_of(layout)
        if value.kind == "scalar":
            t = self.emit(T.tile_fill_p, [value.atom], shape=shape, valid=valid)
        elif value.kind == "rowb":
            t = self.emit(T.tile_row_expand_p, [value.atom], shape=shape, valid=valid)
        elif value.kind == "colb":
            t = self.emit(T.tile_col_expand_p, [value.atom], shape=shape, valid=valid)
        else:
            t = self._acc_to_ub(value.atom)
        self.made[key] = t
        return t

    def _acc_to_ub(self, acc):
        """Move a cube accumulator to UB through a GM workspace (no L0C->UB path on A2/A3)."""
        dot_out = self.group.dot.outputs[0].type
        ws = Var(TensorType(dot_out.shape, dot_out.dtype))
        self.workspaces.append(ws)
        view = self.space
        stored = self.emit(T.tile_store_p, [ws, acc, self.row0(), self.col0()], view=view)
        return self.emit(T.tile_load_p, [stored, self.row0(), self.col0()], space="UB",
                         shape=self.shape_of(FULL), valid=self.valid_of(FULL), view=view,
                         transpose=False)

    # --- equations ---------------------------------------------------------------------------
    def build_eqn(self, eqn, in_layouts):
        rule_of(eqn).build(self, eqn, in_layouts)

    def set(self, var, value):
        self.env[var] = value

    def elementwise(self, eqn, in_layouts):
        form = form_of(eqn)
        out = eqn.outputs[0]
        layout = self.group.layout[out]
        vals = [self.get(a, l) for a, l in zip(eqn.inputs, in_layouts)]
        if form.identity:                                # no instruction
            self.set(out, vals[0])
            return
        if all(v.kind == "scalar" for v in vals) and form.scalar_unit:
            self.set(out, Value("scalar", self.emit(eqn.prim, [v.atom for v in vals],
                                                     **eqn.params)))
            return
        order = list(range(len(vals)))
        if form.commutative and len(vals) == 2 and vals[0].kind != "tile" and \
                vals[1].kind == "tile":
            order = [1, 0]
        dtype = eqn.inputs[0].type.dtype
        wide = form.arith and dtype.name not in self.target.vector_dtypes
        operands = []
        for pos, i in enumerate(order):
            v = vals[i]
            if v.kind == "scalar" and form.scalar_operand:
                atom = v.atom
            elif v.kind in ("rowb", "colb") and form.broadcast_operand and pos == 1:
                atom = v.atom
            else:
                atom = self.tile(v, layout)
            operands.append(self.convert(atom, dtypes.float32) if wide else atom)
        prim = T.ELEMENTWISE_TILE_PRIMS[eqn.prim]
        result = self.emit(prim, operands, **eqn.params)
        if wide and result.type.dtype != out.type.dtype:
            result = self.convert(result, out.type.dtype)
        self.set(out, Value("tile", result))

    def reduce(self, eqn):
        x = self.tile(self.get(eqn.inputs[0], FULL), FULL)
        out = eqn.outputs[0]
        if self.group.layout[out] == COLSUM:
            self.set(out, Value("tile", self.emit(T.tile_col_sum_p, [x])))
            return
        dtype = x.type.dtype
        exact = not form_of(eqn).accumulate_f32 and dtype.name in self.target.vector_dtypes
        if dtype != dtypes.float32 and not exact:      # accumulate in f32, as the hardware
            x = self.convert(x, dtypes.float32)
        r = self.emit(T.ROW_REDUCTIONS[eqn.prim], [x])
        self.set(out, Value("tile", self.convert(r, dtype)))

    def broadcast(self, eqn, in_layouts):
        kind = broadcast_kind(eqn)
        v = self.get(eqn.inputs[0], in_layouts[0])
        out = eqn.outputs[0]
        if kind == "identity" or v.kind == "scalar":
            self.set(out, v)
        elif kind == "row" or (kind == "scalar" and in_layouts[0] == ROW):
            self.set(out, Value("rowb", self.tile(v, ROW)))
        elif kind == "col":
            self.set(out, Value("colb", v.atom))
        else:
            self.set(out, v)

    def alias(self, eqn, in_layouts):
        self.set(eqn.outputs[0], self.get(eqn.inputs[0], in_layouts[0]))

    # --- the cube ------------------------------------------------------------------------------
    def matmul(self, eqn):
        """A (batched) matmul tile: K steps of L1 loads, L0 moves and cube multiplies.

        A batched matmul's rows are its batch elements' rows stacked (``view2d`` of the
        output), and a tile's rows never straddle two batch elements (the planner makes the
        tile rows divide M), so tile row offset r0 lies in batch element ``b = r0 // M``:
        each operand is read through a 2-D view of all its batch elements stacked, at rows
        (or, transposed, columns) offset by ``b`` times its per-element extent.
        """
        lhs, rhs = eqn.inputs
        s = matmul_shape(eqn)
        m, k, n = self.cube
        (vm, vn) = self.valid
        a_view = (s.batch * s.k, s.m) if s.lt else (s.batch * s.m, s.k)
        b_view = (s.batch * s.n, s.k) if s.rt else (s.batch * s.k, s.n)
        full, tail = divmod(s.k, k)
        A, B = self.gm(lhs), self.gm(rhs)
        geometry = dict(m=m, k=k, n=n, vm=vm, vn=vn, a_view=a_view, b_view=b_view, lt=s.lt,
                        rt=s.rt)
        offsets = self._operand_offsets(s)
        first_k = k if full else tail
        acc = _k_step(self.b, index(0), first_k, None, A, B, offsets, geometry)
        if full > 1:
            acc = self._k_loop(acc, full, A, B, offsets, geometry)
        if tail and full:
            acc = _k_step(self.b, index(full * k), tail, acc, A, B, offsets, geometry)
        self.set(eqn.outputs[0], Value("acc", acc))

    def _operand_offsets(self, s):
        """(lhs row, rhs column, K base or None) of this tile's operand windows."""
        r0, c0 = self.row0(), self.col0()
        if s.batch == 1:
            return r0, c0, None
        rows = self.tile_shape[0]
        assert s.m % rows == 0, f"tile rows {rows} straddle batch elements of {s.m} rows"
        # r0 = ti * rows, so for whole-element tiles the batch index is ti itself
        b = self.ti if rows == s.m else self.emit(ar.div_p, [r0, index(s.m)])
        a_row = r0
        if s.lt:
            a_row = index(0) if rows == s.m else self.emit(ar.rem_p, [r0, index(s.m)])
        b_col = c0
        if s.rt:
            b_col = self.emit(ar.add_p, [self.emit(ar.mul_p, [b, index(s.n)]), c0])
        k_base = self.emit(ar.mul_p, [b, index(s.k)]) if s.lt or not s.rt else None
        return a_row, b_col, k_base

    def _k_loop(self, acc, steps, A, B, offsets, geometry):
        inner = IRBuilder()
        kv, acc_in = Var(I32), Var(acc.type)
        a_in, b_in = Var(A.type), Var(B.type)
        off_in = tuple(None if o is None else Var(o.type) for o in offsets)
        k0 = inner.emit(ar.mul_p, [kv, index(geometry["k"])], {})
        acc_out = _k_step(inner, k0, geometry["k"], acc_in, a_in, b_in, off_in, geometry)
        body = inner.build([kv, acc_in, a_in, b_in, *_present(off_in)], [acc_out])
        return self.emit(T.tile_loop_p, [acc, A, B, *_present(offsets)], start=1, stop=steps,
                         body=body, num_carry=1)[0]

    def conv(self, eqn):
        """A convolution tile: the image's feature map TLOADed into L1 once, then K steps of
        a filter block (L1 -> L0B), the matching im2col block expanded on chip (L1 -> L0A,
        ``tile_img2col``) and a cube multiply accumulating in L0C.

        The canonical convolution is a batched matmul (``rules.conv_matmul_shape``): batch
        element b is image b, its rows the image's output positions; a tile's rows stay in
        one image (the planner makes them divide OH*OW), so tile row offset r0 is output
        position ``r0 % (OH*OW)`` of image ``r0 // (OH*OW)``.
        """
        lhs, rhs = eqn.inputs
        n, h, w, c = lhs.type.shape
        kh, kw, _, o = rhs.type.shape
        _, oh, ow, _ = eqn.outputs[0].type.shape
        p = eqn.params
        pads = tuple(map(tuple, p["padding"]))
        strides, dilation = tuple(p["window_strides"]), tuple(p["rhs_dilation"])
        rows, per_image = self.tile_shape[0], oh * ow
        hb = conv_band_rows(rows, (oh, ow), h, kh, strides[0], dilation[0])
        config = Img2colConfig((hb, w, c), (kh, kw), strides, dilation, pads, (oh, ow))
        m, k, nn = self.cube
        vm, vn = self.valid
        r0, c0 = self.row0(), self.col0()
        image = self.ti if rows == per_image else self.emit(ar.div_p, [r0, index(per_image)])
        pos_m = index(0) if rows == per_image else self.emit(ar.rem_p, [r0, index(per_image)])
        first_row, pos_m, top = (index(0), pos_m, index(pads[0][0])) if hb == h else \
            self._conv_band(pos_m, hb, h, ow, strides[0], pads[0][0])
        fmap_row = self.emit(ar.mul_p, [self.emit(ar.add_p, [
            self.emit(ar.mul_p, [image, index(h)]), first_row]), index(w)])
        fmap = self.emit(T.tile_load_p, [self.gm(lhs), fmap_row, index(0)], space="L1",
                         shape=(hb * w, c), valid=(hb * w, c), view=(n * h * w, c),
                         transpose=False, stage=FMAP)
        g = dict(m=m, k=k, n=nn, vm=vm, vn=vn, config=config, b_view=(config.k, o))
        W = self.gm(rhs)
        full, tail = divmod(config.k, k)
        where = (pos_m, c0, top)
        acc = _conv_k_step(self.b, index(0), k if full else tail, None, fmap, W, where, g)
        if full > 1:
            acc = self._conv_k_loop(acc, full, fmap, W, where, g)
        if tail and full:
            acc = _conv_k_step(self.b, index(full * k), tail, acc, fmap, W, where, g)
        self.set(eqn.outputs[0], Value("acc", acc))

    def _conv_band(self, pos_m, hb, h, ow, sh, pt):
        """(first image row, position in the band's im2col matrix, top pad) of a tile whose
        feature map is a band of ``hb`` of the image's rows: the band starts at the first
        row the tile's first output row reads (clamped into the image), and where it had to
        start higher than that (at the image's bottom) the band's output rows are counted
        from ``e`` rows earlier so that its top pad stays >= 0. Every value stays >= 0."""
        e_ = self.emit
        oh_a = e_(ar.div_p, [pos_m, index(ow)])
        a = e_(ar.mul_p, [oh_a, index(sh)])                     # oh_a*sh
        first = e_(ar.min_p, [e_(ar.sub_p, [e_(ar.max_p, [a, index(pt)]), index(pt)]),
                              index(h - hb)])                   # clamp(oh_a*sh - pt)
        base = e_(ar.add_p, [first, index(pt)])
        d = e_(ar.sub_p, [e_(ar.max_p, [a, base]), base])        # rows started too high
        e = e_(ar.div_p, [e_(ar.add_p, [d, index(sh - 1)]), index(sh)])
        top = e_(ar.sub_p, [e_(ar.add_p, [base, e_(ar.mul_p, [e, index(sh)])]), a])
        pos = e_(ar.add_p, [e_(ar.sub_p, [pos_m, e_(ar.mul_p, [oh_a, index(ow)])]),
                            e_(ar.mul_p, [e, index(ow)])])
        return first, pos, top

    def _conv_k_loop(self, acc, steps, fmap, W, where, g):
        inner = IRBuilder()
        kv, acc_in, fmap_in, w_in = Var(I32), Var(acc.type), Var(fmap.type), Var(W.type)
        outer = list(where)
        scalars = [Var(I32) if type(a) is Var else a for a in outer]
        k0 = inner.emit(ar.mul_p, [kv, index(g["k"])], {})
        acc_out = _conv_k_step(inner, k0, g["k"], acc_in, fmap_in, w_in, scalars, g)
        invars = [kv, acc_in, fmap_in, w_in] + [v for v in scalars if type(v) is Var]
        body = inner.build(invars, [acc_out])
        return self.emit(T.tile_loop_p, [acc, fmap, W, *(a for a in outer if type(a) is Var)],
                         start=1, stop=steps, body=body, num_carry=1)[0]

    # --- the kernel --------------------------------------------------------------------------
    def finish(self):
        """Build every equation, store the outputs; returns (body IR, outer input vars)."""
        for eqn in self.group.eqns:
            if eqn.outputs[0] not in self.env:
                self.build_eqn(eqn, self.group.in_layouts[eqn])
        m, n = self.space
        outs = []
        for var in self.group.outputs:
            layout = self.group.layout[var]
            gm_out = Var(var.type)
            value = self.env[var]
            view = {FULL: (m, n), ROW: (m, 1), COLSUM: (1, n)}[layout]
            r0 = index(0) if layout == COLSUM else self.row0()
            c0 = index(0) if layout == ROW else self.col0()
            tile = value.atom if value.kind == "acc" else self.tile(value, layout)
            if tile.type.space == "UB" and tile.type.dtype != var.type.dtype:
                tile = self.convert(tile, var.type.dtype)
            store = self.emit(T.tile_store_p, [gm_out, tile, r0, c0], view=view,
                              atomic=layout == COLSUM)
            outs.append((gm_out, store))
        outer_inputs = list(self.gm_in)
        invars = [self.ti, self.tj, *self.gm_in.values(), *(o for o, _ in outs),
                  *self.workspaces]
        return self.b.build(invars, [s for _, s in outs]), outer_inputs


def _present(values) -> list:
    return [v for v in values if v is not None]


def _k_step(b, k0, vk, acc, A, B, offsets, g):
    a_row, b_col, k_base = offsets
    k = k0
    if k_base is not None:
        k = k_base if isinstance(k0, Literal) and int(k0.value) == 0 else \
            b.emit(ar.add_p, [k_base, k0], {})
    a1 = b.emit(T.tile_load_p, [A, a_row, k if g["lt"] else k0],
                dict(space="L1", shape=(g["m"], g["k"]), valid=(g["vm"], vk), view=g["a_view"],
                     transpose=g["lt"], stage="a"))
    b1 = b.emit(T.tile_load_p, [B, k0 if g["rt"] else k, b_col],
                dict(space="L1", shape=(g["k"], g["n"]), valid=(vk, g["vn"]), view=g["b_view"],
                     transpose=g["rt"], stage="b"))
    a0 = b.emit(T.tile_move_p, [a1], dict(space="L0A", stage="a"))
    b0 = b.emit(T.tile_move_p, [b1], dict(space="L0B", stage="b"))
    if acc is None:
        return b.emit(T.tile_matmul_p, [a0, b0])
    return b.emit(T.tile_matmul_acc_p, [acc, a0, b0])


FMAP = "fmap"     # the stage of a convolution's feature-map tile (one per output tile)


def conv_band_rows(rows, out, h, kh, sh, dh) -> int:
    """The image rows a tile of ``rows`` output positions reads at most (``h``: all)."""
    oh, ow = out
    spans = [(p0 + rows - 1) // ow - p0 // ow + 1 for p0 in range(0, oh * ow, rows)]
    return min(h, (max(spans) - 1) * sh + (kh - 1) * dh + 1)


def _conv_k_step(b, k0, vk, acc, fmap, W, where, g):
    """One K step of a convolution: filter rows [k0, k0 + vk) and the im2col columns."""
    pos_m, c0, top = where
    b1 = b.emit(T.tile_load_p, [W, k0, c0],
                dict(space="L1", shape=(g["k"], g["n"]), valid=(vk, g["vn"]), view=g["b_view"],
                     transpose=False, stage="b"))
    a0 = b.emit(tile_img2col_p, [fmap, pos_m, k0, top],
                dict(config=g["config"], shape=(g["m"], g["k"]), valid=(g["vm"], vk),
                     stage="a"))
    b0 = b.emit(T.tile_move_p, [b1], dict(space="L0B", stage="b"))
    if acc is None:
        return b.emit(T.tile_matmul_p, [a0, b0])
    return b.emit(T.tile_matmul_acc_p, [acc, a0, b0])
