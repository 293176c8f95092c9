"""Hand-written kernels in the emitter's style (see ptojax/lower/pto_cpp.py), built directly
with host_build: for tests of the flag checker, the cache and compiler errors.

``scale`` doubles a float vector of N elements, TILE per tile, double buffered with the
emitter's flag protocol; the other kernels break that protocol in one place each. ``notify``
is a mixed kernel: the cube core writes a workspace and notifies the vector core, which reads
it back (``notify_nowait`` forgets the wait)."""
from ptojax.lower.host.build import EntryPoint
from ptojax.lower.host.loader import build_and_load
from ptojax.targets import host_cpu
from ptojax.lower.host.program import CUBE_COPY, VECTOR_COPY

N, TILE = 1000, 64
PREAMBLE = """\
#if defined(PTO_HOST)
#include "pto_host.h"
#else
#include <pto/pto-inst.hpp>
#endif
using namespace pto;
using VecT = Tile<TileType::Vec, float, 1, 64, BLayout::RowMajor, 1, DYNAMIC>;
using MaskT = Tile<TileType::Vec, uint8_t, 1, 64, BLayout::RowMajor, 1, DYNAMIC>;
using Win = GlobalTensor<float, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 64, 1>>;
"""

# {wait_load}: the wait ordering TLOAD before the vector op; {compute}: y from x;
# {final_waits}: the epilogue
SCALE = """
__global__ AICORE void {name}(__gm__ float *in0, __gm__ float *out0) {{
    const int32_t tiles = ({n} + 63) / 64;
    set_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);
    set_flag(PIPE_V, PIPE_MTE2, EVENT_ID1);
    set_flag(PIPE_MTE3, PIPE_V, EVENT_ID0);
    set_flag(PIPE_MTE3, PIPE_V, EVENT_ID1);
    int32_t local = 0;
    for (int32_t t = static_cast<int32_t>(get_block_idx()); t < tiles;
         t += static_cast<int32_t>(block_num), ++local) {{
        const uint32_t slot = static_cast<uint32_t>(local) % 2;
        const event_t ev = static_cast<event_t>(slot);
        const int32_t valid = {n} - t * 64 < 64 ? {n} - t * 64 : 64;
        VecT x(valid), y(valid);
        TASSIGN(x, 0x0u + slot * 0x100u);
        TASSIGN(y, 0x200u + slot * 0x100u);
        wait_flag(PIPE_V, PIPE_MTE2, ev);
        Win gin(in0 + t * 64, Shape<1, 1, 1, 1, DYNAMIC>(valid));
        TLOAD(x, gin);
        set_flag(PIPE_MTE2, PIPE_V, ev);
        {wait_load}
        wait_flag(PIPE_MTE3, PIPE_V, ev);
        {compute}
        set_flag(PIPE_V, PIPE_MTE2, ev);
        set_flag(PIPE_V, PIPE_MTE3, ev);
        wait_flag(PIPE_V, PIPE_MTE3, ev);
        Win gout(out0 + t * 64, Shape<1, 1, 1, 1, DYNAMIC>(valid));
        TSTORE(gout, y);
        set_flag(PIPE_MTE3, PIPE_V, ev);
    }}
    {final_waits}
}}
"""
WAIT_LOAD = "wait_flag(PIPE_MTE2, PIPE_V, ev);"
DOUBLE = "TMULS(y, x, 2.0f);"
# y = (x > 0) as float, the mask placed where y is: the float results overwrite mask bytes
WIDEN_IN_PLACE = """MaskT m(valid);
        TASSIGN(m, 0x200u + slot * 0x100u);
        TCMPS(m, x, 0.0f, CmpMode::GT);
        TCVT(y, m, RoundMode::CAST_RINT);"""
FINAL_WAITS = """wait_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE2, EVENT_ID1);
    wait_flag(PIPE_MTE3, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE3, PIPE_V, EVENT_ID1);"""

# a mixed kernel: the cube core's FIX pipe stores an accumulator into the workspace (in0),
# the vector core loads it back ({vector_wait}: the notification it waits for first)
NOTIFY = """
__global__ AICORE void {name}(__gm__ float *in0, __gm__ float *out0) {{
#if defined(__DAV_CUBE__)
    {{
        TileAcc<float, 16, 64, 1, 64> acc;
        TASSIGN(acc, 0x0u);
        Win ws(in0, Shape<1, 1, 1, 1, DYNAMIC>(64));
        TSTORE(ws, acc);
        ffts_cross_core_sync(PIPE_FIX, getFFTSMsg(0x2, 0));
    }}
#endif
#if defined(__DAV_VEC__)
    {{
        VecT x(64);
        TASSIGN(x, 0x400u);
        {vector_wait}
        Win ws(in0, Shape<1, 1, 1, 1, DYNAMIC>(64));
        TLOAD(x, ws);
        set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
        Win dst(out0, Shape<1, 1, 1, 1, DYNAMIC>(64));
        TSTORE(dst, x);
    }}
#endif
}}
"""


def _scale(name, wait_load=WAIT_LOAD, compute=DOUBLE, final_waits=FINAL_WAITS):
    return SCALE.format(name=name, n=N, wait_load=wait_load, compute=compute,
                        final_waits=final_waits)


KERNELS = {
    "scale": _scale("scale"),
    "scale_no_wait": _scale("scale_no_wait", wait_load=""),
    "scale_unwaited_sets": _scale("scale_unwaited_sets", final_waits=""),
    "scale_extra_wait": _scale("scale_extra_wait", final_waits=FINAL_WAITS + "\n    "
                               "wait_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);"),
    "widen_in_place": _scale("widen_in_place", compute=WIDEN_IN_PLACE),
    "notify": NOTIFY.format(name="notify", vector_wait="wait_flag_dev(0);"),
    "notify_nowait": NOTIFY.format(name="notify_nowait", vector_wait=""),
}
MIXED = {"notify", "notify_nowait"}
SOURCE = PREAMBLE + "".join(KERNELS.values())


def entries():
    out = []
    for i, name in enumerate(KERNELS):
        cores = [("kCubeCore", CUBE_COPY)] if name in MIXED else []
        cores.append(("kFirstVectorCore", VECTOR_COPY))
        body = "\n".join(f"    pto::host::on_core(pto::host::{core}, [&] {{ {copy.namespace}::"
                         f"{name}(static_cast<float*>(args[0]), static_cast<float*>(args[1])); }});"
                         for core, copy in cores)
        out.append(EntryPoint(f"ptojax_launch_{i}", name, body))
    return out


BUILD_OPTIONS = dict(copies=(CUBE_COPY, VECTOR_COPY), name="handwritten")


def load(check_sync: bool, source: str = SOURCE):
    """(KernelLibrary, BuildResult) of the hand-written kernels."""
    return build_and_load(source, entries(), host_cpu, check_sync=check_sync, **BUILD_OPTIONS)


def index_of(name: str) -> int:
    return list(KERNELS).index(name)


# one small kernel (``scale``, launcher 0) that builds in about a second: for cache tests
SMALL_SOURCE = PREAMBLE + KERNELS["scale"]


def small_entries(symbol: str = "ptojax_launch_0"):
    return [EntryPoint(symbol, "scale", "    pto::host::on_core(pto::host::kFirstVectorCore, "
                       "[&] { scale(static_cast<float*>(args[0]), "
                       "static_cast<float*>(args[1])); });")]

