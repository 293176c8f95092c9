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
    T: float, half, bfloat16_t, int32_t, int16_t, int8_t, uint8_t (bool masks: one byte each)
    A tile's valid region (VR x VC) is where instructions read and write; its values are the
    logical (row, col) matrix whatever the layout parameters say.

Placement and data movement
    TASSIGN(tile, byte_offset)            place a tile in its buffer (UB, L1, L0A/B/C)
    TLOAD(tile, global)                   GM window -> UB or L1 tile (valid region)
    TSTORE(global, tile)                  UB or L0C tile -> GM window (L0C: converts to T)
    TSTORE<TileT, GlobalT, AtomicType::AtomicAdd>(global, tile)   adds into GM (float)
    TEXTRACT(dst, src, 0, 0)              L1 tile -> L0A (TileLeft) / L0B (TileRight)
Cube
    TMATMUL(acc, left, right)             acc = left x right (float accumulation)
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
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.ir.core import Literal
from ptojax.ir.pto import Instr, RowView, Scratch
from ptojax.lower.schedule import (Barrier, CrossSync, Flag, KLoop, Let, StaticK, Window,
                                   kernel_schedule)
from ptojax.tile.kernel import tile_kernel_p
from ptojax.ir.core import print_eqn
from ptojax.shard.runtime.hccl import hccl_call

CPP_TYPE = {"float32": "float", "float16": "half", "bfloat16": "bfloat16_t",
            "int32": "int32_t", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t",
            "bool": "uint8_t", "int64": "int64_t"}
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
    if row_view:
        return f"Tile<TileType::Vec, {T_}, 1, {r}, BLayout::RowMajor, 1, {vr}>"
    kind = decl.kind
    if kind == "vec_col":
        return f"Tile<TileType::Vec, {T_}, {r}, 1, BLayout::ColMajor, {vr}, 1>"
    if kind in ("vec", "scratch"):
        return f"Tile<TileType::Vec, {T_}, {r}, {c}, BLayout::RowMajor, {vr}, {vc}>"
    if kind == "mat_a":
        return (f"Tile<TileType::Mat, {T_}, {r}, {c}, BLayout::ColMajor, {vr}, {vc}, "
                f"SLayout::RowMajor>")
    if kind == "mat_b":
        return (f"Tile<TileType::Mat, {T_}, {r}, {c}, BLayout::RowMajor, {vr}, {vc}, "
                f"SLayout::ColMajor>")
    alias = {"left": "TileLeft", "right": "TileRight", "acc": "TileAcc"}[kind]
    return f"{alias}<{T_}, {r}, {c}, {vr}, {vc}>"


def _camel(name):
    return "".join(p.capitalize() for p in name.split("_"))


class _Printer:
    def __init__(self, sched):
        self.s = sched
        self.lines = []
        self.depth = 0
        self.names = {}

    def w(self, text=""):
        self.lines.append(("    " * self.depth + text) if text else "")

    def open(self, text):
        self.w(text + " {")
        self.depth += 1

    def close(self, suffix=""):
        self.depth -= 1
        self.w("}" + suffix)

    # --- operands ----------------------------------------------------------------------------
    def atom(self, a):
        if isinstance(a, Literal):
            return cpp_literal(a.value, a.type.dtype)
        if isinstance(a, RowView):
            return self.names[a.var] + "_r"
        if isinstance(a, Scratch):
            return self.names[("scratch", a.eqn)]
        if isinstance(a, Window):
            return a.name
        return self.names[a]

    # --- the kernel --------------------------------------------------------------------------
    def kernel(self):
        s = self.s
        g = s.grid
        tiling = f"{_camel(s.name)}Tiling"
        (m, n), (r, c) = g.space, g.tile
        self.w(f"// {'-' * 88}")
        self.w(f"// kernel {s.name} ({s.kind}): {m}x{n} in {r}x{c} tiles"
               + (f", cube tile (m, k, n) = {s_cube(s)}" if s.kind == "cube" else "")
               + f"; {g.num_tiles} tiles on {g.blocks} blocks; {s.buffers} staging buffers")
        self.open(f"struct {tiling}")
        self.w("int32_t num_tiles;   // tiles in the grid, numbered row-major")
        self.w("int32_t grid_cols;   // tiles per grid row")
        self.close(";")
        self.w()
        args = [f"__gm__ {cpp_type(p.type.dtype)} *{p.name}" for p in s.params]
        self.open(f"__global__ AICORE void {s.name}({', '.join(args + [tiling + ' tiling'])})")
        self.w("const int32_t block = static_cast<int32_t>(get_block_idx());")
        self.w("const int32_t blocks = static_cast<int32_t>(block_num);")
        self.w("const int32_t per_block = tiling.num_tiles / blocks;")
        self.w("const int32_t extra = tiling.num_tiles % blocks;")
        self.w("const int32_t t_begin = block * per_block + (block < extra ? block : extra);")
        self.w("const int32_t t_end = t_begin + per_block + (block < extra ? 1 : 0);")
        for sec in s.sections:
            self.section(sec)
        self.close()
        self.w()
        self.launcher(tiling)

    def section(self, sec):
        guard = {"cube": "__DAV_CUBE__", "vector": "__DAV_VEC__"}[sec.core] \
            if self.s.mixed or self.s.kind == "cube" else None
        if guard:
            self.lines.append(f"#if defined({guard})")
        self.open(f"/* {sec.core} core */")
        for f in sec.prologue:
            self.stmt(f)
        if sec.split_subblocks:
            self.w("const int32_t sub = static_cast<int32_t>(get_subblockid());")
            self.w("int32_t handled = 0;   // tiles this vector sub-block processed")
        self.open("for (int32_t t = t_begin; t < t_end; ++t)")
        self.w("const int32_t ti = t / tiling.grid_cols;")
        self.w("const int32_t tj = t % tiling.grid_cols;")
        if sec.core == "vector" and not sec.split_subblocks:
            self._slot("static_cast<uint32_t>(t - t_begin)")
        self.regions(sec)
        self.close()
        for f in sec.epilogue:
            self.stmt(f)
        self.close()
        if guard:
            self.lines.append("#endif")

    def _slot(self, counter):
        self.w(f"const uint32_t slot = {counter} % {self.s.buffers};")
        self.w("const event_t ev = static_cast<event_t>(slot);")

    def regions(self, sec):
        regions = sec.regions
        for i, reg in enumerate(regions):
            conds = [f"{v} {'<' if op == 'lt' else '=='} {k}"
                     for v, cond in (("ti", reg.row_cond), ("tj", reg.col_cond)) if cond
                     for op, k in [cond]]
            if len(regions) == 1:
                self.w("{")
                self.depth += 1
            elif i == 0:
                self.open(f"if ({' && '.join(conds)})")
            elif i < len(regions) - 1:
                self.depth -= 1
                self.w(f"}} else if ({' && '.join(conds)}) {{")
                self.depth += 1
            else:
                self.depth -= 1
                self.w("} else {")
                self.depth += 1
            self.w(f"// region {i}: valid {reg.valid[0]}x{reg.valid[1]}")
            self.region(sec, reg)
        self.close()

    def region(self, sec, reg):
        self.names = dict(reg.names)
        stmts = list(reg.stmts)
        lets = [x for x in stmts if isinstance(x, Let) and x.op != "scalar_load"]
        waits = [x for x in stmts if isinstance(x, CrossSync) and x.action == "wait"]
        rest = [x for x in stmts if x not in lets and x not in waits]
        for x in lets:
            self.stmt(x)
        for x in waits:
            self.stmt(x)
        if sec.split_subblocks:
            self.w("if ((t - t_begin) % 2 != sub) continue;   // the other sub-block's tile")
            self._slot("static_cast<uint32_t>(handled++)")
        for d in reg.decls:
            self.decl(d, "slot")
        for x in rest:
            self.stmt(x)

    def decl(self, d, slot_var):
        self.w(f"{tile_cpp_type(d)} {d.name};")
        addr = self.address(d, slot_var)
        self.w(f"TASSIGN({d.name}, {addr});")
        if d.row_view:
            self.w(f"{tile_cpp_type(d, row_view=True)} {d.row_view};")
            self.w(f"TASSIGN({d.row_view}, {addr});")

    @staticmethod
    def address(d, slot_var):
        slot = d.slot
        if slot.copies == 1:
            return f"0x{slot.offset:x}u"
        return f"0x{slot.offset:x}u + ({slot_var} % {slot.copies}u) * 0x{slot.stride:x}u"

    # --- statements --------------------------------------------------------------------------
    def stmt(self, x):
        if isinstance(x, Flag):
            ev = {"slot": "ev", "kslot": "kev"}.get(x.event, None)
            ev = ev or f"EVENT_ID{x.event}"
            self.w(f"{x.action}_flag(PIPE_{x.src}, PIPE_{x.dst}, {ev});")
        elif isinstance(x, Barrier):
            self.w(f"pipe_barrier(PIPE_{x.pipe});")
        elif isinstance(x, Let):
            self.let(x)
        elif isinstance(x, CrossSync):
            self.w(f"ffts_cross_core_sync(PIPE_FIX, getFFTSMsg(0x2, {x.flag}));" if
                   x.action == "set" else f"wait_flag_dev({x.flag});")
        elif isinstance(x, Instr):
            self.instr(x)
        elif isinstance(x, StaticK):
            self.open(f"/* K step {x.index} */")
            self.w(f"const uint32_t kslot = {x.index % 2}u;")
            self.w("const event_t kev = static_cast<event_t>(kslot);")
            self._k_body(x.decls, x.stmts)
            self.close()
        elif isinstance(x, KLoop):
            self.open(f"for (int32_t k = {x.start}; k < {x.stop}; ++k)")
            self.w("const uint32_t kslot = static_cast<uint32_t>(k) % 2u;")
            self.w("const event_t kev = static_cast<event_t>(kslot);")
            self._k_body(x.decls, x.stmts)
            self.close()

    def _k_body(self, decls, stmts):
        for x in stmts:
            if isinstance(x, Let):
                self.stmt(x)
        for d in decls:
            self.decl(d, "kslot")
        for x in stmts:
            if not isinstance(x, Let):
                self.stmt(x)

    def let(self, x):
        name = self.names[x.var]
        T_ = cpp_type(x.var.type.dtype)
        if x.op == "scalar_load":
            self.w(f"const {T_} {name} = {x.args[0].name}[0];")
            return
        a = [self.atom(v) for v in x.args]
        if x.op == "convert":
            expr = f"static_cast<{T_}>({a[0]})"
        elif x.op == "neg":
            expr = f"-{a[0]}"
        elif x.op in ("max", "min"):
            expr = f"({a[0]} {'>' if x.op == 'max' else '<'} {a[1]} ? {a[0]} : {a[1]})"
        else:
            expr = f"{a[0]} {dict(mul='*', add='+', sub='-', div='/', rem='%')[x.op]} {a[1]}"
        self.w(f"const {T_} {name} = {expr};")

    def window(self, g):
        T_ = cpp_type(g.param.type.dtype)
        rows, cols = g.view
        r0, c0 = self.atom(g.r0), self.atom(g.c0)
        if g.transpose:
            stride, layout = f"Stride<1, 1, 1, 1, {cols}>", ", Layout::DN"
            offset = f"{c0} * {cols} + {r0}"
        elif cols == 1:
            stride, layout = f"Stride<1, 1, 1, 1, {rows}>", ", Layout::DN"
            offset = f"{r0}"
        else:
            stride, layout = f"Stride<1, 1, 1, {cols}, 1>", ""
            offset = f"{r0} * {cols} + {c0}"
        self.w(f"GlobalTensor<{T_}, Shape<1, 1, 1, {g.rows}, {g.cols}>, {stride}{layout}> "
               f"{g.name}({g.param.name} + ({offset}));")

    def instr(self, x):
        for op in x.srcs:
            if isinstance(op, Window):
                self.window(op)
        if x.op == "TSTORE":
            g, src = x.srcs
            s = self.atom(src)
            if x.attrs.get("atomic"):
                self.w(f"TSTORE<decltype({s}), decltype({g.name}), AtomicType::AtomicAdd>"
                       f"({g.name}, {s});")
            else:
                self.w(f"TSTORE({g.name}, {s});")
            return
        args = [self.atom(x.dst)] + [self.atom(a) for a in x.srcs]
        if x.op == "TEXTRACT":
            args += [str(i) for i in x.attrs["index"]]
        if "cmp" in x.attrs:
            args.append(f"CmpMode::{x.attrs['cmp']}")
        if "round" in x.attrs:
            args.append(f"RoundMode::{x.attrs['round']}")
        if x.op == "TCOLSUM":
            args.append("false")                 # isBinary: sequential accumulation
        self.w(f"{x.op}({', '.join(args)});")

    # --- host --------------------------------------------------------------------------------
    def launcher(self, tiling):
        s = self.s
        args = ", ".join(["void *stream"] + [f"uint8_t *{p.name}" for p in s.params])
        self.w(f"// host launcher: {s.name} on {s.block_dim} blocks"
               + (" (mixed: 1 cube + "
                  f"{s.target.vector_cores_per_cube} vector cores each)" if s.mixed else ""))
        for p in s.params:
            if p.role == "ws":
                self.w(f"// {p.name}: GM workspace of {p.type.nbytes} bytes "
                       f"({p.type}), allocated by the caller")
        self.w("#if !defined(PTO_HOST)   // the host build launches blocks itself")
        self.open(f"void launch_{s.name}({args})")
        g = s.grid
        self.w(f"const {tiling} tiling{{{g.num_tiles}, {g.counts[1]}}};")
        outs = [p for p in s.params if p.role == "out"]
        for i in s.accumulate:
            p = outs[i]
            self.w(f"aclrtMemsetAsync({p.name}, {p.type.nbytes}, 0, {p.type.nbytes}, stream);"
                   f"   // atomically accumulated")
        cast = ", ".join(f"reinterpret_cast<__gm__ {cpp_type(p.type.dtype)} *>({p.name})"
                         for p in s.params)
        self.w(f"{s.name}<<<{s.block_dim}, nullptr, stream>>>({cast}, tiling);")
        self.close()
        self.w("#endif")


def s_cube(s):
    return s.cube if hasattr(s, "cube") else None


def kernel_cpp(eqn) -> str:
    sched = kernel_schedule(eqn)
    sched.cube = eqn.params.get("cube")
    p = _Printer(sched)
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
