"""A mixed pto.kernel whose whole vector tiles overflow one UB splits its rows over the two
vector sub-blocks of the 910B (tile/row_split.py): each computes half of every R-row vector
tile, with its windows and row iota offset by sub * R/2; the emitted PTO runs in the host
build with each sub-block on its own UB and pipes (check_sync), and the cost model walks both
vector units. Flash attention's forward at 128x64 blocks splits; its 64x64 dK/dV kernel, which
takes delta = rowsum(do * o) computed once instead of reducing o's rows per step, fits one."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import host_jit
from ptojax.errors import KernelCheckError
from ptojax.kernel import flash as kf
from ptojax.lower import pto_cpp
from ptojax.tile.memory import plan_memory
from ptojax.tile.row_split import half_type, split_rows

T910 = pto.targets.ascend910b
S, D = 256, 64


def _qkv():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((1, S, D)).astype(np.float32) for _ in range(3)]


def _forward(causal, bq=128, bk=64):
    return kf.forward_kernel(kf.FlashShape(1, S, S, D, 1 / 8, causal, bq, bk), T910)


def _kernel_eqn(kernel, *args):
    (eqn,) = [e for e in pto.jit(kernel).lower(*args).tile_ir.ir.eqns
              if e.params.get("kind") == "kernel"]
    return eqn


@pytest.mark.parametrize("causal", [True, False])
def test_128x64_forward_splits_its_rows_and_the_tile_interpreter_agrees(causal):
    q, k, v = _qkv()
    kernel = _forward(causal)
    eqn = _kernel_eqn(kernel, q, k, v)
    assert eqn.params["row_split"] == 128
    body = eqn.params["bodies"][0]
    whole = plan_memory(body, 2, T910, single_fallback=True, shorten=False)
    assert whole.overflow(T910) is not None
    assert plan_memory(body, 2, T910, True, split_rows=128).overflow(T910) is None
    expected = kernel(q, k, v)                        # the reference semantics
    assert_close(pto.tile(kernel)(q, k, v), expected, scale=8)


def test_kernels_whose_whole_tiles_fit_keep_the_vector_work_on_sub_block_0():
    q, k, v = _qkv()
    assert "row_split" not in _kernel_eqn(_forward(True, 64, 64), q, k, v).params


def test_host_pto_build_runs_both_sub_blocks_with_check_sync():
    q, k, v = _qkv()
    kernel = _forward(True)
    expected = kernel(q, k, v)
    assert_close(host_jit(kernel, check_sync=True, kernels="pto")(q, k, v), expected, scale=8)


def test_check_sync_needs_sub_block_1s_cross_core_sets(monkeypatch):
    """A kernel whose second sub-block skipped its sets would hang the cube on hardware."""
    original = pto_cpp._Printer.cross_sync
    in_vector = []

    def core_block(self, x, _original=pto_cpp._Printer.core_block):
        in_vector.append(x.core == "vector")
        _original(self, x)
        in_vector.pop()

    def cross_sync(self, x):
        if x.action == "set" and in_vector and in_vector[-1]:
            self.w("if (sub == 0)")
        original(self, x)
    monkeypatch.setattr(pto_cpp._Printer, "core_block", core_block)
    monkeypatch.setattr(pto_cpp._Printer, "cross_sync", cross_sync)
    q, k, v = _qkv()
    with pytest.raises(KernelCheckError, match="cube core has no pending .* from vector "
                       "sub-block 1"):
        host_jit(_forward(False), check_sync=True, kernels="pto")(q, k, v)


def test_emitted_windows_and_row_iota_start_at_the_sub_blocks_half():
    q, k, v = _qkv()
    lowered = pto.jit(_forward(True)).lower(q, k, v)
    cpp = lowered.as_text("pto-cpp")
    assert "get_subblockid() == 0" not in cpp          # both sub-blocks compute
    assert "sub * 64) * 64 + 0)" in cpp                 # a [64, 64] half of a workspace window
    assert "int32_t, 0>(" in cpp and ", 0 + sub * 64);" in cpp     # the row iota
    assert "pto::host::VectorSubblocks" in cpp and "pto::host::CubeCore" in cpp
    pto_as = lowered.as_text("pto")
    assert "pto.get_subblock_idx" in pto_as and "offsets = [%subo" in pto_as
    assert "rows=128" not in pto_as.split("pto.section.vector", 1)[1].split(
        "pto.section.cube", 1)[0]


def test_cost_walks_both_vector_units_on_halves():
    x = pto.ShapeDtypeStruct((1, S, D), np.float32)
    (row,) = pto.jit(_forward(False)).lower(x, x, x).cost()
    pipes = row.detail["pipes"]
    assert pipes["vec0.V"] == pytest.approx(pipes["vec1.V"]) and pipes["vec0.V"] > 0
    assert pipes["vec0.MTE2"] == pytest.approx(pipes["vec1.MTE2"])


def test_dkdv_64x64_taking_delta_fits_one_ub_and_the_host_build_agrees():
    f = kf.FlashShape(1, 128, 128, D, 1 / 8, True, 64, 64)
    kernel = kf.dkdv_kernel(f, T910)
    rng = np.random.default_rng(1)
    q, k, v, o, do = (rng.standard_normal((1, 128, D)).astype(np.float32) for _ in range(5))
    lse = rng.standard_normal((1, 128)).astype(np.float32) + 4
    args = (q, k, v, (do * o).sum(-1), do, lse)
    assert "row_split" not in _kernel_eqn(kernel, *args).params
    expected = kernel(*args)
    for backend in (pto.tile(kernel), host_jit(kernel, check_sync=True, kernels="pto")):
        assert_close(backend(*args), expected, scale=8)


def _exp_of_product(column_sum):
    """exp(a @ b) on a [128, 64] block, or its column sum (a [1, 64] row)."""
    out = (1, 64) if column_sum else (128, 64)

    @pto.kernel(out_shape=pto.ShapeDtypeStruct(out, np.float32), grid=(1,),
                in_specs=[pto.BlockSpec((128, 64), lambda i: (0, 0)),
                          pto.BlockSpec((64, 64), lambda i: (0, 0))],
                out_specs=pto.BlockSpec(out, lambda i: (0, 0)))
    def kernel(a_ref, b_ref, o_ref):
        s = pnp.exp(pto.kernel.dot(a_ref[...], b_ref[...]))
        o_ref[...] = pnp.sum(s, axis=0, keepdims=True) if column_sum else s
    return kernel


def test_split_rows_refuses_row_mixing_work_and_one_vector_unit():
    a = np.full((128, 64), 0.01, np.float32)
    b = np.full((64, 64), 0.01, np.float32)
    rows = _kernel_eqn(_exp_of_product(False), a, b).params["bodies"]
    assert split_rows(rows, T910) == 128
    assert split_rows(rows, pto.targets.host_jit) == 0        # one vector unit per cube
    mixed = _kernel_eqn(_exp_of_product(True), a, b).params["bodies"]
    assert split_rows(mixed, T910) == 0                        # tile_col_sum adds up rows
    t = pto.ShapeDtypeStruct((128, 64), np.float32)
    assert half_type(t, 128) is t                              # only UB tiles are halved
