"""Collectives in the Ascend host code: each collective equation becomes its HCCL call, and
lowering a sharded program lowers its per-device program with those calls in order."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.eval.axis_env import bound_axes
from ptojax.shard.runtime.hccl import hccl_call
from ptojax.trace import trace_flat
from ptojax.ir.types import TensorType

P = pto.P
F32 = np.dtype(np.float32)


def _eqn(fn, shape=(8, 4), dtype=F32):
    with bound_axes({"x": 4, "y": 2}):
        closed = trace_flat(lambda a: [fn(a)], [TensorType(shape, dtype)])
    return closed.eqns[-1]


@pytest.mark.parametrize("fn,expected", [
    (lambda a: pto.lax.psum(a, "x"),
     "HcclAllReduce(in0, out0, 32, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm_x, stream);"),
    (lambda a: pto.lax.pmax(a, ("x", "y")),
     "HcclAllReduce(in0, out0, 32, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_MAX, comm_x_y, stream);"),
    (lambda a: pto.lax.all_gather(a, "x", tiled=True),
     "HcclAllGather(in0, out0, 32, HCCL_DATA_TYPE_FP32, comm_x, stream);"),
    (lambda a: pto.lax.psum_scatter(a, "y", scatter_dimension=1, tiled=True),
     "HcclReduceScatter(in0, out0, 16, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm_y, stream);"
     "  // along dim 1: blocks are laid out block-major"),
    (lambda a: pto.lax.all_to_all(a, "x", 0, 1, tiled=True),
     "HcclAlltoAll(in0, 8, HCCL_DATA_TYPE_FP32, out0, 8, HCCL_DATA_TYPE_FP32, comm_x, stream);"),
])
def test_collective_calls(fn, expected):
    assert hccl_call(_eqn(fn)) == expected


def test_ppermute_sends_and_receives_per_rank():
    text = hccl_call(_eqn(lambda a: pto.lax.ppermute(a, "x", [(0, 1), (1, 2), (2, 3)])))
    assert "static const int32_t dst[4] = {1, 2, 3, -1};" in text
    assert "static const int32_t src[4] = {-1, 0, 1, 2};" in text
    assert "HcclSend(in0, 32, HCCL_DATA_TYPE_FP32, dst[r], comm_x, stream);" in text
    assert "HcclRecv(out0, 32, HCCL_DATA_TYPE_FP32, src[r], comm_x, stream);" in text
    assert "aclrtMemset(out0, 128, 0, 128);" in text  # rank 0 receives nothing: zeros


def test_axis_index_and_types():
    with bound_axes({"x": 4}):
        closed = trace_flat(lambda: [pto.lax.axis_index("x")], [])
    assert hccl_call(closed.eqns[0]) == "uint32_t out0; HcclGetRankId(comm_x, &out0);"
    assert "HCCL_DATA_TYPE_BFP16" in hccl_call(_eqn(lambda a: pto.lax.psum(a, "x"),
                                                    dtype=np.dtype(pnp.bfloat16)))


def test_lowering_a_sharded_program_issues_hccl_between_kernels():
    mesh = pto.make_mesh((4,), ("model",))
    mlp = lambda w1, w2, x: pnp.maximum(x @ w1, 0) @ w2  # noqa: E731
    sharded = pto.shard(mlp, mesh=mesh, in_specs=(P(None, "model"), P("model"), P()),
                        out_specs=P())
    w1, w2, x = (np.ones(s, np.float32) for s in ((64, 128), (128, 64), (32, 64)))
    text = str(pto.jit(sharded).lower(w1, w2, x).as_text("pto-cpp"))
    order = text[text.index("// program order:"):]
    assert "launch_k0" in order
    assert ("HcclAllReduce(in0, out0, 2048, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm_model, "
            "stream);") in order
    assert order.index("launch_k1") < order.index("HcclAllReduce")
