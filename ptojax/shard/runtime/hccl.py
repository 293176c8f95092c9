"""Collective equations as HCCL calls in the host code of a per-device program (Ascend).

On Ascend, the collectives of a per-device program are issued by the host between kernel
launches, on the program's stream, through HCCL (Huawei Collective Communication Library):

    psum / pmax / pmin   HcclAllReduce(send, recv, count, type, HCCL_REDUCE_SUM|MAX|MIN, comm, stream)
    all_gather           HcclAllGather(send, recv, sendCount, type, comm, stream)
    psum_scatter         HcclReduceScatter(send, recv, recvCount, type, HCCL_REDUCE_SUM, comm, stream)
    all_to_all           HcclAlltoAll(send, sendCount, type, recv, recvCount, type, comm, stream)
    ppermute             HcclSend / HcclRecv with the peers of this rank
    axis_index           HcclGetRankId(comm, &rank)

One HCCL communicator per group of mesh axes (``comm_<axes>``), created with its members in
member order, so a device's rank in it is its ``axis_index``. HCCL moves whole buffers as
consecutive blocks; a collective along a dimension other than the first works on the
block-major layout, noted in the emitted comment (the layout change is a transpose kernel).
UNTESTED ON HARDWARE, like the rest of the Ascend output: checked structurally.
"""
from __future__ import annotations

import math

from ptojax import dtypes

HCCL_TYPE = {"float32": "HCCL_DATA_TYPE_FP32", "float16": "HCCL_DATA_TYPE_FP16",
             "bfloat16": "HCCL_DATA_TYPE_BFP16", "float64": "HCCL_DATA_TYPE_FP64",
             "int8": "HCCL_DATA_TYPE_INT8", "int16": "HCCL_DATA_TYPE_INT16",
             "int32": "HCCL_DATA_TYPE_INT32", "int64": "HCCL_DATA_TYPE_INT64",
             "uint8": "HCCL_DATA_TYPE_UINT8", "uint16": "HCCL_DATA_TYPE_UINT16",
             "uint32": "HCCL_DATA_TYPE_UINT32", "uint64": "HCCL_DATA_TYPE_UINT64",
             "bool": "HCCL_DATA_TYPE_UINT8", "float8_e4m3fn": "HCCL_DATA_TYPE_FP8E4M3",
             "float8_e5m2": "HCCL_DATA_TYPE_FP8E5M2"}
HCCL_REDUCE = {"psum": "HCCL_REDUCE_SUM", "pmax": "HCCL_REDUCE_MAX",
               "pmin": "HCCL_REDUCE_MIN"}


def communicator(axes) -> str:
    """The C++ name of the HCCL communicator of a group over ``axes``."""
    return "comm_" + "_".join(axes)


def hccl_type(dtype) -> str:
    return HCCL_TYPE[dtypes.canonicalize(dtype).name]


def _count(t) -> int:
    return math.prod(t.shape)


def _layout_note(dim) -> str:
    return "" if dim == 0 else f"  // along dim {dim}: blocks are laid out block-major"


def hccl_call(eqn, send: str = "in0", recv: str = "out0") -> str:
    """The host C++ issuing collective equation ``eqn`` from buffer ``send`` into ``recv``
    (one or more lines)."""
    kind, p = eqn.prim.name, eqn.params
    comm = communicator(p["axes"])
    if kind == "axis_index":
        return f"uint32_t {recv}; HcclGetRankId({comm}, &{recv});"
    x, out = eqn.inputs[0].type, eqn.outputs[0].type
    t = hccl_type(x.dtype)
    if kind in HCCL_REDUCE:
        return (f"HcclAllReduce({send}, {recv}, {_count(x)}, {t}, {HCCL_REDUCE[kind]}, {comm}, "
                f"stream);")
    if kind == "all_gather":
        return (f"HcclAllGather({send}, {recv}, {_count(x)}, {t}, {comm}, stream);"
                + _layout_note(p["dim"] if p["tiled"] else 0))
    if kind == "psum_scatter":
        return (f"HcclReduceScatter({send}, {recv}, {_count(out)}, {t}, HCCL_REDUCE_SUM, "
                f"{comm}, stream);" + _layout_note(p["dim"]))
    if kind == "all_to_all":
        block = _count(x) // p["axis_size"]
        return (f"HcclAlltoAll({send}, {block}, {t}, {recv}, {block}, {t}, {comm}, stream);"
                + _layout_note(p["split_dim"]))
    if kind == "ppermute":
        return _send_recv(p, comm, send, recv, _count(x), t, x.nbytes)
    raise ValueError(f"{kind} is not a collective")


def _send_recv(p, comm, send, recv, count, t, nbytes) -> str:
    """Each rank sends to its destination and receives from its source; even ranks send
    first and odd ranks receive first, so a ring of blocking transfers cannot deadlock. A rank
    that receives nothing gets zeros."""
    n = max(max(s, d) for s, d in p["perm"]) + 1 if p["perm"] else 0
    dst = [-1] * n
    src = [-1] * n
    for s, d in p["perm"]:
        dst[s], src[d] = d, s
    pairs = " ".join(f"{s}->{d}" for s, d in p["perm"])
    send_line = f"if (r < {n} && dst[r] >= 0) HcclSend({send}, {count}, {t}, dst[r], {comm}, stream);"
    recv_line = f"if (r < {n} && src[r] >= 0) HcclRecv({recv}, {count}, {t}, src[r], {comm}, stream);"
    return "\n".join([
        f"{{  // ppermute over {tuple(p['axes'])}: {pairs}",
        f"    static const int32_t dst[{n}] = {{{', '.join(map(str, dst))}}};",
        f"    static const int32_t src[{n}] = {{{', '.join(map(str, src))}}};",
        f"    uint32_t r; HcclGetRankId({comm}, &r);",
        f"    if (r % 2 == 0) {{ {send_line} {recv_line} }}",
        f"    else {{ {recv_line} {send_line} }}",
        f"    if (r >= {n} || src[r] < 0) aclrtMemset({recv}, {nbytes}, 0, {nbytes});",
        "}"])
