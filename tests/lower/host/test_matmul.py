"""Host cube kernels (TLOAD to L1, TEXTRACT to L0A/L0B, TMATMUL/TMATMUL_ACC over K steps,
accumulator stores) and their fused vector epilogues vs the numpy interpreter, in f32, f16
and bf16, with ragged M, K and N — tiled for host_cpu, which tiles every matmul; and the
default jit target, which leaves float32 matmuls to numpy's BLAS."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import (BF16, F16, F32, arrays, assert_matches, executable_of,
                        has_ragged_regions, host_jit, interpret, kernels_of)

SMALL_CUBE = pto.TileConfig(cube=(32, 32, 32))
SHAPES = [(100, 70, 50), (33, 130, 17)]


def matmul(x, w):
    return x @ w


def dense_relu(x, w, b):
    return pnp.maximum(x @ w + b, 0.0)


def matmul_transposed(x, w):
    return x @ w.T


PROGRAMS = {(name, dt): host_jit(fn, tile_config=SMALL_CUBE, target=pto.targets.host_cpu)
            for name, fn in [("matmul", matmul), ("dense_relu", dense_relu)]
            for dt in (F32, F16, BF16)}


def _inputs(data, dtype, m, k, n):
    x = data.draw(arrays(dtype, (m, k), -1.0, 1.0), label="x")
    w = data.draw(arrays(dtype, (k, n), -1.0, 1.0), label="w")
    b = data.draw(arrays(dtype, (n,), -1.0, 1.0), label="b")
    return x, w, b


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
@settings(max_examples=8)
@given(data=st.data(), mkn=st.sampled_from(SHAPES))
def test_matmul(dtype, data, mkn):
    x, w, _ = _inputs(data, dtype, *mkn)
    fn = PROGRAMS["matmul", dtype]
    assert_matches(fn(x, w), interpret(matmul, x, w), rtol_scale=1 + mkn[1] / 16)
    assert has_ragged_regions(fn, x, w)


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
@settings(max_examples=8)
@given(data=st.data(), mkn=st.sampled_from(SHAPES))
def test_matmul_with_fused_bias_relu_epilogue(dtype, data, mkn):
    x, w, b = _inputs(data, dtype, *mkn)
    fn = PROGRAMS["dense_relu", dtype]
    assert_matches(fn(x, w, b), interpret(dense_relu, x, w, b), rtol_scale=1 + mkn[1] / 16)


def test_epilogue_is_fused_into_the_matmul_kernel():
    x, w, b = (pnp.ones(s, F32) for s in [(100, 70), (70, 50), (50,)])
    fn = PROGRAMS["dense_relu", F32]
    fn(x, w, b)
    (kernel,) = kernels_of(fn, x, w, b)
    assert kernel.params["kind"] == "cube"
    assert len(kernel.params["regions"]) == 4


def test_transposed_operand_loads_through_a_column_major_window():
    fn = host_jit(matmul_transposed, tile_config=SMALL_CUBE, target=pto.targets.host_cpu)
    x = pnp.asarray(pnp.arange(70 * 45, dtype=F32).reshape(70, 45) / 1000.0)
    w = pnp.asarray(pnp.arange(50 * 45, dtype=F32).reshape(50, 45) / 1000.0)
    assert_matches(fn(x, w), interpret(matmul_transposed, x, w), rtol_scale=4)
    ir = executable_of(fn, x, w).program.executable.closed.ir
    assert {e.prim.name for e in ir.eqns} == {"tile_kernel"}


def test_default_target_runs_float32_matmuls_in_blas_and_half_matmuls_in_kernels():
    x32, w32, b32 = (pnp.ones(s, F32) for s in [(100, 70), (70, 50), (50,)])
    fn = host_jit(dense_relu)
    fn(x32, w32, b32)
    ir = executable_of(fn, x32, w32, b32).program.executable.closed.ir
    assert "dot_general" in {e.prim.name for e in ir.eqns}
    x16, w16, b16 = (a.astype(F16) for a in (x32, w32, b32))
    fn(x16, w16, b16)
    (kernel,) = kernels_of(fn, x16, w16, b16)
    assert kernel.params["kind"] == "cube"


# --- batched matmuls (attention's q @ k^T and p @ v) -----------------------------------------
def batched_matmul(x, w):
    return x @ w


def batched_matmul_transposed(x, w):
    return pnp.swapaxes(x, -1, -2) @ pnp.swapaxes(w, -1, -2)


def batched_scaled_bias(x, w, b):
    return (x @ w) * 0.5 + b


# (function, config, lhs shape, rhs shape): M = 64 rows per batch element; (32, 32, 32) cuts
# each element into two row tiles (b = r0 / M in the kernel), K = 70 and N = 50 are ragged;
# M = 40 (off the fractal): tiles of a divisor of 40 valid rows (the planner's choice)
BATCHED = {
    "plain_small_tiles": (batched_matmul, SMALL_CUBE, (2, 3, 64, 70), (2, 3, 70, 50)),
    "transposed_small_tiles": (batched_matmul_transposed, SMALL_CUBE, (3, 70, 64),
                               (3, 50, 70)),
    "plain_auto_m40": (batched_matmul, None, (4, 40, 70), (4, 70, 50)),
    "transposed_auto_m40": (batched_matmul_transposed, None, (2, 2, 70, 40), (2, 2, 50, 70)),
}


# Each layout in one 16-bit float, each float in two layouts: a layout's kernel (its batch
# index, transposed windows, row tiles) is the same code in f16 and bf16, which differ only in
# the element conversions (test_matmul runs both on every shape); each case is a compile.
BATCHED_DTYPES = {"plain_small_tiles": F16, "transposed_small_tiles": BF16,
                  "plain_auto_m40": BF16, "transposed_auto_m40": F16}


@pytest.mark.parametrize("name, dtype", list(BATCHED_DTYPES.items()),
                         ids=[f"{n}-{np.dtype(d)}" for n, d in BATCHED_DTYPES.items()])
def test_batched_matmul_kernel_matches_interpreter_with_checked_sync(name, dtype):
    fn, config, xs, ws = BATCHED[name]
    rng = np.random.default_rng(3)
    x, w = (rng.uniform(-1, 1, s).astype(dtype) for s in (xs, ws))
    host = host_jit(fn, check_sync=True, tile_config=config)
    assert_matches(host(x, w), interpret(fn, x, w), rtol_scale=1 + 70 / 16)
    (kernel,) = kernels_of(host, x, w)
    assert kernel.params["kind"] == "cube"
    rows = kernel.params["grid"].tile[0]
    assert rows == 32 if config else (40 % rows == 0 and rows % 16)
    executable = executable_of(host, x, w)
    assert executable.status == "compiled" and executable.program.check_sync


def test_batched_matmul_with_fused_epilogue_in_one_kernel():
    rng = np.random.default_rng(4)
    x, w, b = (rng.uniform(-1, 1, s).astype(F16) for s in [(3, 48, 40), (3, 40, 24), (24,)])
    host = host_jit(batched_scaled_bias, check_sync=True)
    assert_matches(host(x, w, b), interpret(batched_scaled_bias, x, w, b), rtol_scale=4)
    (kernel,) = kernels_of(host, x, w, b)
    assert kernel.params["kind"] == "cube"
