"""PTO C++ for tile kernels: one ``__global__ AICORE`` function per kernel plus a host launcher.

UNTESTED ON HARDWARE: no Ascend NPU is available to this project. The emitted C++ is checked
structurally (tests/lower) and its semantics are those of the tile IR, which the numpy tile
interpreter executes. A later issue compiles exactly this C++ for the host CPU against a small
header implementing the instructions below, so the output keeps to this subset of the PTO C++
API (``#include <pto/pto-inst.hpp>``, ``using namespace pto``):

Types
    Tile<TileType::Vec, T, R, C, BLayout::RowMajor, VR, VC>        UB tile, row-major
    Tile<TileType::Vec, T, R, 1, BLayout::ColMajor, VR, 1>         UB row-vector tile; every
        such tile ``t`` is paired with a row-major ``Tile<TileType::Vec, T, 1, R,
        BLayout::RowMajor, 1, VR> t_r`` placed at the same address (PTO vector instructions
        need row-major operands; a row vector's values are contiguous either way)
    Tile<TileType::Mat, T, M, K, BLayout::ColMajor, VM, VK, SLayout::RowMajor>   L1, left operand
    Tile<TileType::Mat, T, K, N, BLayout::RowMajor, VK, VN, SLayout::ColMajor>   L1, right operand
    TileLeft<T, M, K, VM, VK>, TileRight<T, K, N, VK, VN>, TileAcc<float, M, N, VM, VN>
    GlobalTensor<T, Shape<1,1,1,ROWS,COLS>, Stride<1,1,1,LD,1>>              row-major window
    GlobalTensor<T, Shape<1,1,1,ROWS,COLS>, Stride<1,1,1,1,LD>, Layout::DN>  column-major window
    T: float, half, bfloat16_t, int32_t, int16_t, int8_t, uint8_t (bool masks: one byte each),
       float8_e4m3_t, float8_e5m2_t (cube operands on targets with an fp8 cube: A5)
    A tile's valid region (VR x VC) is where instructions read and write; its values are the
    logical (row, col) matrix whatever the layout parameters say.
Runtime row counts (a symbolic leading dimension, ``jit(f, dynamic=...)``)
    the tiling struct gains ``rows`` (the view's rows this launch; the launcher computes
    ``num_tiles`` from it); the last grid row of tiles sets ``valid_rows = tiling.rows -
    ti * R`` and declares its tiles ``Tile<..., DYNAMIC, VC> t(valid_rows, VC)``, its windows
    ``GlobalTensor<T, Shape<1,1,1,DYNAMIC,COLS>, ...> g(ptr, Shape<...>(valid_rows))``, and
    a row-vector view of the whole tensor ``Stride<1,1,1,1,DYNAMIC>(tiling.rows)``.
Runtime row lengths (a symbolic last dimension over static rows)
    the tiling struct gains ``cols`` (the view's columns this launch); a tile spans the whole
    row and sets ``valid_cols = tiling.cols``: ``Tile<..., VR, DYNAMIC> t(VR, valid_cols)``,
    windows ``GlobalTensor<T, Shape<1,1,1,ROWS,DYNAMIC>, Stride<1,1,1,DYNAMIC,1>>
    g(ptr + r0 * tiling.cols, Shape<...>(valid_cols), Stride<...>(tiling.cols))``.

Placement and data movement
    TASSIGN(tile, byte_offset)            place a tile in its buffer (UB, L1, L0A/B/C)
    TLOAD(tile, global)                   GM window -> UB or L1 tile (valid region)
    TSTORE(global, tile)                  UB or L0C tile -> GM window (L0C: converts to T)
    TSTORE<TileT, GlobalT, AtomicType::AtomicAdd>(global, tile)   adds into GM (float)
    TEXTRACT(dst, src, 0, 0)              L1 tile -> L0A (TileLeft) / L0B (TileRight)
Convolution (a feature map in L1 -> im2col blocks in L0A, ``tile/img2col.py``)
    Img2colTileConfig<uint64_t> icfg; icfg.fmapH = H; ... (fmap, padList, filter, stride,
        dilation, channelSize), then TSETFMATRIX(icfg), TSET_IMG2COL_RPT(icfg),
        TSET_IMG2COL_PADDING(icfg) once per output tile (FMATRIX_A_MANUAL)
    TIMG2COL(left, fmap, posM, posK, icfg)   left = im2col block at (posM, posK)
Cube
    TMATMUL(acc, left, right)             acc = left x right (float accumulation; int32 for
                                          int8 operands)
    TMATMUL_ACC(acc, acc, left, right)    acc += left x right
Vector (dst, src0[, src1]); dst may equal a source
    TADD TSUB TMUL TDIV TMAX TMIN TAND TOR           tile (op) tile
    TADDS TSUBS TMULS TDIVS TMAXS TMINS(dst, src, scalar);  TDIVS(dst, scalar, src) = s / x
    TNEG TABS TEXP TLOG TSQRT TRSQRT TRECIP TNOT TMOV(dst, src)
    TCMP(dst, a, b, CmpMode::M), TCMPS(dst, a, scalar, CmpMode::M)   byte mask: 1 / 0
        M in EQ NE LT LE GT GE
    TSEL(dst, mask, a, b)                 dst = mask ? a : b
    TCVT(dst, src, RoundMode::CAST_RINT | RoundMode::CAST_TRUNC)
    TEXPANDS(dst, scalar)                 fill
    TCI<TileT, int32_t, 0>(dst, start)    dst = start, start + 1, ... (int32, ascending)
    TROWEXPAND(dst, rowvec)               dst[i, j] = rowvec[i]
    TCOLEXPAND(dst, colvec)               dst[i, j] = colvec[0, j]
    TROWEXPAND{ADD,SUB,MUL,DIV,MAX,MIN}(dst, src, rowvec)   dst[i, j] = src[i, j] op rowvec[i]
    TCOLEXPAND{ADD,SUB,MUL,DIV,MAX,MIN}(dst, src, colvec)   dst[i, j] = src[i, j] op colvec[j]
    TROWSUM TROWMAX TROWMIN(dst_rowvec, src, tmp)          tmp: scratch shaped like src
    TCOLSUM(dst_colvec, src, tmp, false)  dst[0, j] = sum over valid rows i of src[i, j]
                                          (isBinary = false: sequential accumulation)
Synchronization and runtime
    set_flag(PIPE_A, PIPE_B, event), wait_flag(PIPE_A, PIPE_B, event)
        pipes PIPE_MTE2 PIPE_MTE1 PIPE_MTE3 PIPE_V PIPE_M PIPE_FIX; events EVENT_ID0/1 or
        static_cast<event_t>(0 | 1). Every set is matched by exactly one wait.
    pipe_barrier(PIPE_V)                  order dependent vector instructions
    ffts_cross_core_sync(PIPE_FIX, getFFTSMsg(0x2, 0)) / wait_flag_dev(0)
        cube -> vector notification that an accumulator tile is in the GM workspace: each
        call notifies every vector sub-block of the block once; each wait consumes one.
    get_block_idx(), block_num, get_subblockid()
    kernel<<<block_dim, nullptr, stream>>>(args...)   host launch
Host build (ptojax/lower/host_build.py): compiled with PTO_HOST defined, the source includes
``pto_host.h`` instead of ``pto/pto-inst.hpp`` and leaves out the ``launch_*`` functions (the
host build runs the blocks itself).

The walk over a kernel schedule is ``ptojax.lower.emit``; this module is the dialect: types,
literals, the instruction and scalar syntax tables, the tiling struct and the launcher.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.ir.symbolic import is_symbolic
from ptojax.ir.core import print_eqn
from ptojax.lower.emit import Emitter, grid_conditions, subblock_runs
from ptojax.lower.program_schedule import schedule_of
from ptojax.lower.schedule_items import loop_slot
from ptojax.tile.kernel_names import tiling_struct
from ptojax.ops.arithmetic import add_p, div_p, max_p, min_p, mul_p, neg_p, rem_p, sub_p
from ptojax.ops.convert import convert_element_type_p
from ptojax.ops.logic import (and_p, eq_p, ge_p, gt_p, le_p, lt_p, ne_p, not_p, or_p,
                              select_p)
from ptojax.shard.runtime.hccl import hccl_call
from ptojax.tile.kernel import tile_kernel_p
from ptojax.tile.img2col import FMATRIX_OPS
from ptojax.tile.ops import (LAST_GRID_ROW, VALID_COLS, VALID_ROWS, is_runtime_extent,
                             tile_block_index_p)

CPP_TYPE = {"float32": "float", "float16": "half", "bfloat16": "bfloat16_t",
            "int32": "int32_t", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t",
            "uint32": "uint32_t",
            "bool": "uint8_t", "int64": "int64_t", "float8_e4m3fn": "float8_e4m3_t",
            "float8_e5m2": "float8_e5m2_t"}
HEADER = """\
// PTO C++ generated by ptojax from tile IR, target {target}.
// UNTESTED ON ASCEND HARDWARE: no NPU was available; this code is checked structurally and
// its semantics are those of the tile IR (run by ptojax's numpy tile interpreter).
#if defined(PTO_HOST)
#include "pto_host.h"   // ptojax's host (CPU) build of these kernels
#else
#include <pto/pto-inst.hpp>
#endif
using namespace pto;
"""
BLOCK_RANGE = (   # this block's tiles: [t_begin, t_end), the first `extra` blocks one more
    "const int32_t block = static_cast<int32_t>(get_block_idx());",
    "const int32_t blocks = static_cast<int32_t>(block_num);",
    "const int32_t per_block = tiling.num_tiles / blocks;",
    "const int32_t extra = tiling.num_tiles % blocks;",
    "const int32_t t_begin = block * per_block + (block < extra ? block : extra);",
    "const int32_t t_end = t_begin + per_block + (block < extra ? 1 : 0);")

# instructions: OP(<dst>, <srcs>, <extra args>, <attrs>); a store is TSTORE(<window>, <tile>)
ATTRS = {"cmp": "CmpMode::{}".format, "round": "RoundMode::{}".format}
EXTRA_ARGS = {"TEXTRACT": lambda x: [str(i) for i in x.attrs["index"]],
              "TCOLSUM": lambda x: ["false"]}        # isBinary: sequential accumulation
EVENT = {"slot": "ev", "kslot": "kev"}               # a flag's event at the current slot


def _event_var(slot: str) -> str:
    """The event variable of a slot variable: ev, kev, kev2 (a loop nested two deep), ..."""
    return EVENT.get(slot) or "kev" + slot[len("kslot"):]
GUARD = {"cube": "__DAV_CUBE__", "vector": "__DAV_VEC__"}   # a mixed kernel's per-core code

# scalar lets: ``const T name = <expr>;``
SCALAR = {add_p: "{0} + {1}", sub_p: "{0} - {1}", mul_p: "{0} * {1}", div_p: "{0} / {1}",
          rem_p: "{0} % {1}", max_p: "({0} > {1} ? {0} : {1})",
          min_p: "({0} < {1} ? {0} : {1})", neg_p: "-{0}",
          convert_element_type_p: "static_cast<{T}>({0})",
          lt_p: "({0} < {1})", le_p: "({0} <= {1})", gt_p: "({0} > {1})",
          ge_p: "({0} >= {1})", eq_p: "({0} == {1})", ne_p: "({0} != {1})",
          select_p: "({0} ? {1} : {2})", and_p: "({0} && {1})", or_p: "({0} || {1})",
          not_p: "(!{0})", tile_block_index_p: "static_cast<int32_t>(get_block_idx())"}


def cpp_type(dtype) -> str:
    return CPP_TYPE[np.dtype(dtype).name]


def cpp_literal(value, dtype) -> str:
    v = np.asarray(value).astype(dtype)[()]
    name = np.dtype(dtype).name
    if name == "bool":
        return "1" if v else "0"
    if dtypes.is_integer(np.dtype(dtype)):
        return str(int(v))
    f = float(v)
    if math.isnan(f):
        text = "__builtin_nanf(\"\")"
    elif math.isinf(f):
        text = "__builtin_inff()" if f > 0 else "-__builtin_inff()"
    else:
        text = str(np.float32(f)) if name != "float64" else repr(f)
        text = text if any(c in text for c in ".en") else text + ".0"
        text += "f"
    return text if name == "float32" else f"static_cast<{cpp_type(dtype)}>({text})"


def tile_cpp_type(decl, row_view=False) -> str:
    t = decl.type
    T_ = cpp_type(t.dtype)
    (r, c), (vr, vc) = t.shape, (t.valid or t.shape)
    vr, vc = _extent(vr), _extent(vc)
    if row_view:
        return f"Tile<TileType::Vec, {T_}, 1, {r}, BLayout::RowMajor, 1, {vr}>"
    kind = decl.kind
    if kind == "vec_col":
        return f"Tile<TileType::Vec, {T_}, {r}, 1, BLayout::ColMajor, {vr}, 1>"
    if kind in ("vec", "scratch"):
        return f"Tile<TileType::Vec, {T_}, {r}, {c}, BLayout::RowMajor, {vr}, {vc}>"
    if kind in ("mat_a", "fmap"):     # NZ; a feature map's (H*W, C): NC1HWC0 of one image
        return (f"Tile<TileType::Mat, {T_}, {r}, {c}, BLayout::ColMajor, {vr}, {vc}, "
                f"SLayout::RowMajor>")
    if kind == "mat_b":
        return (f"Tile<TileType::Mat, {T_}, {r}, {c}, BLayout::RowMajor, {vr}, {vc}, "
                f"SLayout::ColMajor>")
    alias = {"left": "TileLeft", "right": "TileRight", "acc": "TileAcc"}[kind]
    return f"{alias}<{T_}, {r}, {c}, {vr}, {vc}>"


IMG2COL_CONFIG = "icfg"      # a convolution tile's Img2colTileConfig (fmatrix contents)


def img2col_fields(cfg, top) -> list:
    """(field, value) of PTO's Img2colTileConfig for a tile_img2col geometry with top pad
    ``top`` (a feature-map band's: set per tile); padList is (left, right, top, bottom)."""
    (h, w, c), (kh, kw) = cfg.fmap, cfg.filter
    (_, pb), (pl, pr) = cfg.pads
    pt = top
    return [("fmapH", h), ("fmapW", w), ("padList[0]", pl), ("padList[1]", pr),
            ("padList[2]", pt), ("padList[3]", pb), ("filterH", kh), ("filterW", kw),
            ("strideH", cfg.strides[0]), ("strideW", cfg.strides[1]),
            ("dilationH", cfg.dilation[0]), ("dilationW", cfg.dilation[1]),
            ("channelSize", c)]


def _extent(v) -> str:
    """A static valid extent, or ``DYNAMIC`` for one set when the tile is declared."""
    return "DYNAMIC" if is_runtime_extent(v) else str(v)


def tile_valid_args(decl, row_view=False) -> str:
    """The constructor arguments ``(valid rows, valid cols)`` of a tile with a runtime valid
    row count (``valid_rows``, this tile's rows of the grid's last row of tiles) or column
    count (``valid_cols``, the row length), else ""."""
    t = decl.type
    vr, vc = t.valid or t.shape
    if is_runtime_extent(vc):
        return f"({VALID_ROWS if is_runtime_extent(vr) else vr}, {VALID_COLS})"
    if not is_runtime_extent(vr):
        return ""
    return f"(1, {VALID_ROWS})" if row_view else f"({VALID_ROWS}, {vc})"


def _condition_bound(c) -> str:
    return "(tiling.num_tiles / tiling.grid_cols - 1)" if c.k == LAST_GRID_ROW else str(c.k)


def _index_expr(c) -> str:
    """A condition's tile-index expression: ti, (ti / 4), ((ti / 4) % 8)."""
    text = c.index if c.div == 1 else f"({c.index} / {c.div})"
    return text if not c.mod else f"({text} % {c.mod})"


class _Printer(Emitter):
    """Emits one kernel, its tiling struct and its host launcher. Slots are runtime values:
    ``slot``/``ev`` per tile and ``kslot``/``kev`` per K step."""
    slot = "slot"

    def __init__(self, sched):
        super().__init__(sched)
        self.tiling = tiling_struct(sched.name)

    # --- operands ----------------------------------------------------------------------------
    def literal(self, a):
        return cpp_literal(a.value, a.type.dtype)

    # --- kernel, sections, regions -----------------------------------------------------------
    def begin_kernel(self):
        s = self.sched
        g = s.grid
        (m, n), (r, c) = g.space, g.tile
        self.w(f"// {'-' * 88}")
        tiles = f"<= {g.max_num_tiles()}" if g.dynamic_rows else g.num_tiles
        self.w(f"// kernel {s.name} ({s.kind}): {m}x{n} in {r}x{c} tiles"
               + (f", cube tile (m, k, n) = {s.cube}" if s.kind == "cube" else "")
               + f"; {tiles} tiles on {g.blocks} blocks; {s.buffers} staging buffers")
        self.open(f"struct {self.tiling}")
        self.w("int32_t num_tiles;   // tiles in the grid, numbered row-major")
        self.w("int32_t grid_cols;   // tiles per grid row")
        if g.dynamic_rows:
            self.w(f"int32_t rows;        // rows of the {m}x{n} view, known at run time")
        if g.dynamic_cols:
            self.w(f"int32_t cols;        // columns of the {m}x{n} view, known at run time")
        self.close("};")
        self.w()
        args = [f"__gm__ {cpp_type(p.type.dtype)} *{p.name}" for p in s.params]
        args.append(f"{self.tiling} tiling")
        self.open(f"__global__ AICORE void {s.name}({', '.join(args)})")
        for line in BLOCK_RANGE:
            self.w(line)

    def end_kernel(self):
        self.close()
        self.w()
        self.launcher()

    def begin_section(self, sec):
        if self.sched.mixed or self.sched.kind == "cube":
            self.lines.append(f"#if defined({GUARD[sec.core]})")
        self.open(f"/* {sec.core} core */" if sec.core != "kernel" else
                  "/* cube and vector code, each guarded by its core */")

    def end_section(self, sec):
        self.close()
        if self.sched.mixed or self.sched.kind == "cube":
            self.lines.append("#endif")

    def core_block(self, x):
        """One core's statements: only that core's build compiles them; the vector side
        computes on sub-block 0 of the cube core's pair, and both sub-blocks run its
        cross-core flags (``emit.subblock_runs``) -- unless the sub-blocks split the rows
        (``row_split``): then each computes its half, and the host build, which runs the body
        in program order on one thread, runs a cube block as the cube core and a vector block
        once per sub-block (``pto_host_launch.h``)."""
        self.lines.append(f"#if defined({GUARD[x.core]})")
        if self.sched.sections[0].row_split:
            self.lines.append("#if defined(PTO_HOST)")
            self.w("for (pto::host::CubeCore core_; core_.next();)" if x.core == "cube" else
                   "for (pto::host::VectorSubblocks core_; core_.next();)")
            self.lines.append("#endif")
            self.open("")
            if x.core == "vector":
                self.w("const int32_t sub = static_cast<int32_t>(get_subblockid());")
            for s in x.stmts:
                self.stmt(s)
            self.close()
        elif x.core == "vector" and self.sched.sections[0].one_subblock:
            for guarded, stmts in subblock_runs(x.stmts):
                if guarded:
                    self.open("if (get_subblockid() == 0)")
                for s in stmts:
                    self.stmt(s)
                if guarded:
                    self.close()
        else:
            for s in x.stmts:
                self.stmt(s)
        self.lines.append("#endif")

    def decls(self, decls, slot):
        """A pto.kernel's tiles, each in its core's build."""
        for core in (None, "cube", "vector"):
            mine = [d for d in decls if d.core == core]
            if not mine:
                continue
            if core:
                self.lines.append(f"#if defined({GUARD[core]})")
            for d in mine:
                self.decl(d, slot)
            if core:
                self.lines.append("#endif")

    def loop(self, x):
        start, stop = (str(b) if isinstance(b, int) else self.atom(b) for b in (x.start,
                                                                                  x.stop))
        k, slot = self.atom(x.var), loop_slot(x.depth)
        self.open(f"for (int32_t {k} = {start}; {k} < {stop}; ++{k})")
        self.slot_vars(slot, _event_var(slot), f"static_cast<uint32_t>({k}) % 2u")
        self.k_body(x.decls, x.stmts, slot)
        self.close()

    def tile_loop(self, sec):
        if sec.split_subblocks:
            self.w("const int32_t sub = static_cast<int32_t>(get_subblockid());")
            self.w("int32_t handled = 0;   // tiles this vector sub-block processed")
        self.open("for (int32_t t = t_begin; t < t_end; ++t)")
        self.w("const int32_t ti = t / tiling.grid_cols;")
        self.w("const int32_t tj = t % tiling.grid_cols;")
        if (sec.core in ("vector", "kernel") and not sec.split_subblocks) or sec.tile_slots:
            self.slot_vars("slot", "ev", f"static_cast<uint32_t>(t - t_begin) % "
                                         f"{self.sched.buffers}")
        self.regions(sec)
        self.close()

    def slot_vars(self, slot, ev, value):
        self.w(f"const uint32_t {slot} = {value};")
        self.w(f"const event_t {ev} = static_cast<event_t>({slot});")

    def branch(self, i, regions):
        """Flat: if (c0) {r0} else if (c1) {r1} else {r2}; one region: a plain block."""
        conds = " && ".join(f"{_index_expr(c)} {'<' if c.op == 'lt' else '=='} "
                            f"{_condition_bound(c)}"
                            for c in grid_conditions(regions[i]))
        if len(regions) == 1:
            self.open("")
        elif i == 0:
            self.open(f"if ({conds})")
        elif i < len(regions) - 1:
            self.reopen(f"}} else if ({conds}) {{")
        else:
            self.reopen("} else {")

    def end_branches(self, regions):
        self.close()

    def enter_region(self, i, reg):
        self.w(f"// region {i}" + (f": valid {reg.valid[0]}x{reg.valid[1]}"
                                   if isinstance(reg.valid, tuple) else ""))
        if isinstance(reg.valid, tuple) and is_runtime_extent(reg.valid[0]):
            r = self.sched.grid.tile[0]
            self.w(f"const int32_t {VALID_ROWS} = tiling.rows - ti * {r};   // the last grid "
                   f"row's rows")
        if isinstance(reg.valid, tuple) and is_runtime_extent(reg.valid[1]):
            self.w(f"const int32_t {VALID_COLS} = tiling.cols;   // a tile spans the row")

    def subblock_guard(self):
        self.w("if ((t - t_begin) % 2 != sub) continue;   // the other sub-block's tile")
        self.slot_vars("slot", "ev", f"static_cast<uint32_t>(handled++) % {self.sched.buffers}")

    def end_subblock_guard(self):
        pass

    # --- tiles -------------------------------------------------------------------------------
    def tile_type(self, d, row_view=False):
        return tile_cpp_type(d, row_view)

    def address(self, d, slot):
        """A tile's address in its buffer copy; a pto.kernel tile's copy is selected by the
        loop depth of its buffer (a loop carry updated in a loop body keeps the copy of the
        scope that defined the carry)."""
        s = d.slot
        if self.sched.kind == "kernel":
            slot = loop_slot(s.level)
        if s.copies == 1:
            return f"0x{s.offset:x}u"
        return f"0x{s.offset:x}u + ({slot} % {s.copies}u) * 0x{s.stride:x}u"

    def decl(self, d, slot):
        """A tile (and its row view) at its address; one with a runtime valid row count gets
        it from its constructor."""
        addr = self.address(d, slot)
        name = self.local(d.name)
        self.place(name, self.tile_type(d), addr, tile_valid_args(d))
        if d.carries:
            self.w(f"// {name}: the loop's next value of {self.local(d.carries)}, in its buffer")
        if d.row_view:
            self.place(name + "_r", self.tile_type(d, row_view=True), addr,
                       tile_valid_args(d, row_view=True))

    def place(self, name, type_, addr, valid_args=""):
        self.w(f"{type_} {name}{valid_args};")
        self.w(f"TASSIGN({name}, {addr});")

    # --- statements --------------------------------------------------------------------------
    def flag(self, x):
        if isinstance(x.event, tuple):
            slot, offset = x.event
            ev = f"static_cast<event_t>({slot} % {self.sched.buffers}u + {offset}u)"
        else:
            ev = _event_var(x.event) if isinstance(x.event, str) else f"EVENT_ID{x.event}"
        self.w(f"{x.action}_flag(PIPE_{x.src}, PIPE_{x.dst}, {ev});")

    def barrier(self, x):
        self.w(f"pipe_barrier(PIPE_{x.pipe});")

    def cross_sync(self, x):
        self.w(f"ffts_cross_core_sync(PIPE_{x.pipe}, getFFTSMsg(0x2, {x.flag}));" if
               x.action == "set" else f"wait_flag_dev({x.flag});")

    def static_k(self, x):
        self.open(f"/* K step {x.index} */")
        self.slot_vars("kslot", "kev", f"{x.index % 2}u")
        self.k_body(x.decls, x.stmts, "kslot")
        self.close()

    def k_loop(self, x):
        self.open(f"for (int32_t k = {x.start}; k < {x.stop}; ++k)")
        self.slot_vars("kslot", "kev", "static_cast<uint32_t>(k) % 2u")
        self.k_body(x.decls, x.stmts, "kslot")
        self.close()

    def let(self, x):
        T_ = cpp_type(x.var.type.dtype)
        expr = SCALAR[x.prim].format(*map(self.atom, x.args), T=T_)
        self.w(f"const {T_} {self.atom(x.var)} = {expr};")

    def scalar_load(self, x):
        self.w(f"const {cpp_type(x.var.type.dtype)} {self.atom(x.var)} = {x.param.name}[0];")

    def window(self, g):
        T_ = cpp_type(g.param.type.dtype)
        rows, cols = g.view
        r0, c0 = self.atom(g.r0), self.atom(g.c0)
        if g.sub_rows:                     # this vector sub-block's half of the rows
            r0 = f"({r0} + sub * {g.sub_rows})"
        runtime_rows = is_symbolic(rows)   # the view's rows: tiling.rows
        runtime_cols = is_symbolic(cols)   # the view's columns: tiling.cols
        if runtime_cols:
            cols = "tiling.cols"
        if g.transpose:
            stride, layout = f"Stride<1, 1, 1, 1, {cols}>", ", Layout::DN"
            offset = f"{c0} * {cols} + {r0}"
        elif cols == 1:
            stride = f"Stride<1, 1, 1, 1, {'DYNAMIC' if runtime_rows else rows}>"
            layout = ", Layout::DN"
            offset = f"{r0}"
        else:
            stride = f"Stride<1, 1, 1, {'DYNAMIC' if runtime_cols else cols}, 1>"
            layout, offset = "", f"{r0} * {cols} + {c0}"
        shape = f"Shape<1, 1, 1, {_extent(g.rows)}, {_extent(g.cols)}>"
        args = ""
        if "DYNAMIC" in shape + stride:    # the runtime extents, given at construction
            extents = [name for name, d in ((VALID_ROWS, g.rows), (VALID_COLS, g.cols))
                       if is_runtime_extent(d)]
            args = f", {shape}({', '.join(extents)})"
            if "DYNAMIC" in stride:
                args += f", {stride}({'tiling.cols' if runtime_cols else 'tiling.rows'})"
        self.w(f"GlobalTensor<{T_}, {shape}, {stride}{layout}> "
               f"{g.name}({g.param.name} + ({offset}){args});")

    def instruction(self, x):
        if x.op in FMATRIX_OPS:
            return self.fmatrix(x)
        args = [self.atom(a) for a in x.operands()]
        if x.op == "TIMG2COL":
            args.append(IMG2COL_CONFIG)
        args += EXTRA_ARGS[x.op](x) if x.op in EXTRA_ARGS else []
        args += [text(x.attrs[a]) for a, text in ATTRS.items() if a in x.attrs]
        template = ""
        if x.op == "TSTORE" and x.attrs.get("atomic"):
            window, tile = args
            template = f"<decltype({tile}), decltype({window}), AtomicType::AtomicAdd>"
        if x.op == "TCI":
            template = f"<decltype({args[0]}), int32_t, 0>"      # ascending
            if x.attrs.get("sub_start"):   # this vector sub-block's rows
                args[1] = f"{args[1]} + sub * {x.attrs['sub_start']}"
        return f"{x.op}{template}({', '.join(args)});"

    def fmatrix(self, x):
        """An fmatrix register write; the first declares the tile's Img2colTileConfig."""
        lines = []
        if x.op == FMATRIX_OPS[0]:
            lines = [f"Img2colTileConfig<uint64_t> {IMG2COL_CONFIG};"] + [
                f"{IMG2COL_CONFIG}.{field} = {value};"
                for field, value in img2col_fields(x.attrs["img2col"], self.atom(x.srcs[0]))]
        lines.append(f"{x.op}({IMG2COL_CONFIG});")
        return ("\n" + self.indent * self.depth).join(lines)

    # --- host --------------------------------------------------------------------------------
    def launcher(self):
        s = self.sched
        g = s.grid
        args = ", ".join(["void *stream"] + [f"uint8_t *{p.name}" for p in s.params]
                         + (["int32_t rows"] if g.dynamic_rows else [])
                         + (["int32_t cols"] if g.dynamic_cols else []))
        self.w(f"// host launcher: {s.name} on {'up to ' if g.dynamic_rows else ''}"
               f"{s.block_dim} blocks"
               + (" (mixed: 1 cube + "
                  f"{s.target.vector_cores_per_cube} vector cores each)" if s.mixed else ""))
        for p in s.params:
            if p.role == "ws":
                self.w(f"// {p.name}: GM workspace of {p.type.nbytes} bytes "
                       f"({p.type}), allocated by the caller")
        self.w("#if !defined(PTO_HOST)   // the host build launches blocks itself")
        self.open(f"void launch_{s.name}({args})")
        if g.dynamic_rows:   # the rows of the view this call: its number of tiles
            self.w(f"const {self.tiling} tiling{{(rows + {g.tile[0] - 1}) / {g.tile[0]} * "
                   f"{g.grid_cols}, {g.grid_cols}, rows}};")
        elif g.dynamic_cols:   # the columns of the view this call (one tile spans them)
            self.w(f"const {self.tiling} tiling{{{g.num_tiles}, 1, cols}};")
        else:
            self.w(f"const {self.tiling} tiling{{{g.num_tiles}, {g.counts[1]}}};")
        outs = [p for p in s.params if p.role == "out"]
        for i in s.accumulate:
            p = outs[i]
            self.w(f"aclrtMemsetAsync({p.name}, {p.type.nbytes}, 0, {p.type.nbytes}, stream);"
                   f"   // atomically accumulated")
        cast = ", ".join(f"reinterpret_cast<__gm__ {cpp_type(p.type.dtype)} *>({p.name})"
                         for p in s.params)
        blocks = s.block_dim
        if g.dynamic_rows:      # no more blocks than this launch has tiles
            self.w(f"const uint32_t blocks = tiling.num_tiles < {blocks} ? "
                   f"static_cast<uint32_t>(tiling.num_tiles) : {blocks}u;")
            blocks = "blocks"
        self.w(f"{s.name}<<<{blocks}, nullptr, stream>>>({cast}, tiling);")
        self.close()
        self.w("#endif")


def kernel_cpp(eqn) -> str:
    p = _Printer(schedule_of(eqn))
    p.kernel()
    return "\n".join(p.lines)


def program_cpp(closed, target_name) -> str:
    """C++ for every tile_kernel of a tiled IR, with the tensor-level ops listed in order."""
    parts = [HEADER.format(target=target_name)]
    ir = closed.ir if hasattr(closed, "ir") else closed
    order = []
    for eqn in ir.eqns:
        if eqn.prim is tile_kernel_p:
            parts.append(kernel_cpp(eqn))
            order.append(f"launch_{eqn.params['name']}")
        elif getattr(eqn.prim, "collective", False):  # issued by the host through HCCL
            order.append(hccl_call(eqn).replace("\n", "\n//      "))
        else:
            order.append("tensor op (not lowered): " + print_eqn(eqn).split("\n")[0][:100])
    parts.append("// program order:\n" + "\n".join(f"//   {i}. {o}"
                                                   for i, o in enumerate(order)))
    return "\n".join(parts) + "\n"
