"""Where each value of a tile kernel body lives in a fused host kernel, and in which pass.

A fused kernel (``fused.py``) runs a body per tile as a loop over the tile's valid rows; per
row, one or more *passes* loop over the row's columns. A value's *level* says where it is
computed:

    scalar   once per tile, before the rows: index arithmetic, scalar loads, fills
    row      once per row, between passes: row-vector loads, row reductions and what is
             computed from them (a row reduction's result is known after its pass)
    col      per column, inside the passes: column-vector loads (re-read in every row)
    elem     per element, inside the passes
    acc      a matmul accumulator: filled by the GEMM worker before the rows; an epilogue
             reads it where the PTO build loads the GM workspace the cube stored it in
    colsum   column sums over the tile's rows, finished after the rows
    view     an operand window of a matmul (an L1 tile of the PTO build)

and its *phase* which pass first can use it: scalars and loads 0, an element or row
operation the largest phase of its operands, a row reduction one more than its operand's.
Pass p does the *work* of phase p — the row reductions, element stores and column sums whose
operand has phase p — and computes the col/elem values that work needs. A value of an earlier
pass needed again is re-read when it is a load, read back from a per-thread row buffer when
its own pass computed it (the pass then writes the buffer), and otherwise recomputed.
"""
from __future__ import annotations

from ptojax.errors import UnsupportedError
from ptojax.ir.core import Literal
from ptojax.ir.types import TileType
from ptojax.tile import ops as T
from ptojax.tile.img2col import tile_img2col_p

SCALAR, ROW, COL, ELEM, ACC, COLSUM, VIEW = ("scalar", "row", "col", "elem", "acc", "colsum",
                                             "view")
ROW_REDUCTIONS = (T.tile_row_sum_p, T.tile_row_max_p, T.tile_row_min_p)
MATMULS = (T.tile_matmul_p, T.tile_matmul_acc_p)


class FusedUnsupported(UnsupportedError):
    """A tile kernel the fused emitter has no form for (the PTO-faithful build runs it)."""


def join(levels):
    """The level of an elementwise operation on operands of ``levels``."""
    levels = set(levels) - {SCALAR}
    if not levels:
        return SCALAR
    if len(levels) == 1:
        return levels.pop()
    if levels <= {ROW, COL, ELEM}:
        return ELEM
    raise FusedUnsupported(f"an operation on {' and '.join(sorted(levels))} values")


class Load:
    """A UB tile load: its GM parameter, view and window origin — or, for an epilogue, the
    accumulator ``acc`` and the workspace dtype it was stored as."""

    def __init__(self, param, view, r0, c0, acc=None, acc_dtype=None):
        self.param, self.view, self.r0, self.c0 = param, tuple(view), r0, c0
        self.acc, self.acc_dtype = acc, acc_dtype


class Pass:
    """Pass ``index`` over a row: its work, the element values it computes (body order), the
    values it reads back from row buffers and those it writes to them."""

    def __init__(self, index, work, values, reads):
        self.index, self.work, self.values, self.reads = index, work, values, reads
        self.writes = []

    @property
    def reductions(self):
        return [e for e in self.work if e.prim in ROW_REDUCTIONS]


class BodyPlan:
    """The levels, phases and passes of one kernel body. ``space`` is the kernel's (M, N);
    ``params`` maps the body's GM variables to their parameter names (in*, out*, ws*)."""

    def __init__(self, body, space, params):
        self.body = body
        self.space = tuple(space)
        self.param = dict(params)
        self.level, self.phase, self.producer = {}, {}, {}
        self.loads = {}                  # var -> Load
        self.acc_alias = {}              # a workspace store's result -> (acc var, ws dtype)
        self.tile_eqns, self.row_eqns, self.colsum_eqns = [], [], []
        self.elem_stores, self.row_stores, self.colsum_stores = [], [], []
        for e in body.eqns:
            self._classify(e)
        self.passes = self._passes()

    def level_of(self, a):
        return SCALAR if isinstance(a, Literal) else self.level[a]

    def phase_of(self, a):
        return 0 if isinstance(a, Literal) else self.phase[a]

    # --- levels and phases -------------------------------------------------------------------
    def _set(self, var, level, phase=0):
        self.level[var], self.phase[var] = level, phase

    def _classify(self, e):
        prim = e.prim
        for v in e.outputs:
            self.producer[v] = e
        out = e.outputs[0]
        if prim is T.tile_load_p:
            self._load(e)
        elif prim is T.tile_store_p:
            self._store(e)
        elif prim in (T.tile_move_p, tile_img2col_p):
            self._tile_level(e, VIEW)
        elif prim in MATMULS or prim is T.tile_loop_p:
            self._tile_level(e, ACC)
        elif not isinstance(out.type, TileType) or prim is T.tile_fill_p:
            self._tile_level(e, SCALAR)
        elif prim in ROW_REDUCTIONS:
            self._set(out, ROW, self.phase_of(e.inputs[0]) + 1)
            self.row_eqns.append(e)
        elif prim is T.tile_col_sum_p:
            self._set(out, COLSUM)
            self.colsum_eqns.append(e)
        elif prim in (T.tile_row_expand_p, T.tile_col_expand_p) or \
                getattr(prim, "tensor_prim", None) is not None:
            self._set(out, join(map(self.level_of, e.inputs)),
                      max(map(self.phase_of, e.inputs)))
            self._place(e)
        else:
            raise FusedUnsupported(f"no fused form for the tile op `{prim.name}`")

    def _tile_level(self, e, level):
        for v in e.outputs:
            self._set(v, level)
        self.tile_eqns.append(e)

    def _place(self, e):
        """Scalar and row values are computed outside the passes; col/elem values inside
        the passes that need them."""
        level = self.level[e.outputs[0]]
        if level == SCALAR:
            self.tile_eqns.append(e)
        elif level == ROW:
            self.row_eqns.append(e)
        elif level == COLSUM:
            self.colsum_eqns.append(e)

    def _load(self, e):
        gm, r0, c0 = e.inputs
        out, p = e.outputs[0], e.params
        if p["space"] == "L1":
            self._tile_level(e, VIEW)
            return
        if gm in self.acc_alias:
            acc, dtype = self.acc_alias[gm]
            self.loads[out] = Load(None, p["view"], r0, c0, acc, dtype)
            self._set(out, ELEM)
            return
        m, n = self.space
        view = tuple(p["view"])
        level = ELEM if view == (m, n) else {(m, 1): ROW, (1, n): COL}.get(view)
        if level is None or p.get("transpose"):
            raise FusedUnsupported(f"a vector load through view {view} in a {m}x{n} kernel")
        self.loads[out] = Load(self.param[gm], view, r0, c0)
        self._set(out, level)
        if level == ROW:
            self.row_eqns.append(e)

    def _store(self, e):
        gm, tile, r0, c0 = e.inputs
        self.param[e.outputs[0]] = self.param[gm]
        level = self.level_of(tile)
        m, n = self.space
        view = tuple(e.params["view"])
        if level == ACC and self.param[gm].startswith("ws"):
            self.acc_alias[e.outputs[0]] = (tile, gm.type.dtype)
        elif level == ACC:
            self.tile_eqns.append(e)
        elif e.params.get("atomic"):
            self.colsum_stores.append(e)
        elif view == (m, n):
            self.elem_stores.append(e)
        elif view == (m, 1) and level in (ROW, SCALAR):
            self.row_stores.append(e)
        else:
            raise FusedUnsupported(f"a store of a {level} value through view {view}")

    # --- passes ------------------------------------------------------------------------------
    def _passes(self):
        work: dict = {}
        for e in self.row_eqns:
            if e.prim in ROW_REDUCTIONS:
                work.setdefault(self.phase_of(e.inputs[0]), []).append(e)
        for e in self.elem_stores:
            work.setdefault(self.phase_of(e.inputs[1]), []).append(e)
        for e in self.colsum_eqns:
            if e.prim is T.tile_col_sum_p:
                work.setdefault(self.phase_of(e.inputs[0]), []).append(e)
        order = {v: i for i, e in enumerate(self.body.eqns) for v in e.outputs}
        passes = []
        for p in range(max(work, default=-1) + 1):
            passes.append(self._pass(p, work.get(p, []), passes, order))
        return passes

    def _pass(self, p, work, earlier, order) -> Pass:
        needed, reads = set(), set()

        def visit(a):
            if isinstance(a, Literal) or a in needed or a in reads or \
                    self.level[a] not in (ELEM, COL):
                return
            q = self.phase[a]
            if q < p and a not in self.loads and a in earlier[q].values:
                reads.add(a)
                if a not in earlier[q].writes:
                    earlier[q].writes.append(a)
                return
            needed.add(a)
            if a not in self.loads:
                for b in self.producer[a].inputs:
                    visit(b)

        for e in work:
            visit(e.inputs[1] if e.prim is T.tile_store_p else e.inputs[0])
        return Pass(p, work, sorted(needed, key=order.__getitem__),
                    sorted(reads, key=order.__getitem__))

    @property
    def element_work_only(self) -> bool:
        """One pass of element work, no row or column values (the tile's rows can run as
        one long row when they are contiguous in GM)."""
        return (len(self.passes) <= 1 and not self.row_eqns and not self.colsum_eqns
                and not self.row_stores
                and all(self.level[v] == ELEM and (v not in self.loads or
                                                   self.loads[v].acc is None)
                        for ps in self.passes for v in ps.values))
