"""Host kernels vs the numpy interpreter for row/column reductions and the broadcasts that
feed or consume them (row and column expansions), in f32, f16 and bf16, on arrays whose rows
span several ragged tiles."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptojax.numpy as pnp
from host_cases import (BF16, F16, F32, arrays, assert_matches, executable_of,
                        has_ragged_regions, host_jit, interpret)

SHAPES = [(300, 70), (7, 40, 33)]
# Each shape of the row ops is a library of its own (the shape is in the kernels). The rank-3
# array (leading dims flattened into rows, one ragged column tile) is the same kernel code in
# every dtype and runs in f32; f16 and bf16 run (300, 70), rows over several ragged tiles.
ROW_SHAPES = {F32: SHAPES, F16: SHAPES[:1], BF16: SHAPES[:1]}


def row_ops(x, col, row):
    """x: (..., N); col: (N,) one value per column; row: x.shape[:-1], one value per row."""
    m = pnp.max(x, axis=-1, keepdims=True)
    e = pnp.exp(x - m)
    return (pnp.sum(x, axis=-1), pnp.max(x, axis=-1), pnp.min(x, axis=-1),
            e / pnp.sum(e, axis=-1, keepdims=True), x * row[..., None] + col,
            pnp.maximum(x, row[..., None]), x - col * 2.0, pnp.mean(x * x, axis=-1))


def col_sums(x):
    return pnp.sum(x.reshape(-1, x.shape[-1]), axis=0)


ROW_OPS = {dt: host_jit(row_ops) for dt in (F32, F16, BF16)}
COL_SUMS = {dt: host_jit(col_sums) for dt in (F32, F16, BF16)}


def _tol_scale(n):
    return 1.0 + n / 64          # reassociated sums of n terms


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
@settings(max_examples=10)
@given(data=st.data())
def test_row_reductions_and_expansions(dtype, data):
    shape = data.draw(st.sampled_from(ROW_SHAPES[dtype]), label="shape")
    x = data.draw(arrays(dtype, shape, -3.0, 3.0), label="x")
    col = data.draw(arrays(dtype, shape[-1:], -2.0, 2.0), label="col")
    row = data.draw(arrays(dtype, shape[:-1], -2.0, 2.0), label="row")
    fn = ROW_OPS[dtype]
    assert_matches(fn(x, col, row), interpret(row_ops, x, col, row), _tol_scale(shape[-1]))
    assert has_ragged_regions(fn, x, col, row)


@pytest.mark.parametrize("dtype", [F32, F16, BF16], ids=str)
@settings(max_examples=10)
@given(data=st.data(), shape=st.sampled_from(SHAPES))
def test_column_sums(dtype, data, shape):
    x = data.draw(arrays(dtype, shape, -3.0, 3.0), label="x")
    fn = COL_SUMS[dtype]
    rows = int(np.prod(shape[:-1]))
    assert_matches(fn(x), interpret(col_sums, x), _tol_scale(rows))


@pytest.mark.parametrize("fn", [ROW_OPS[F32], COL_SUMS[F32]], ids=["rows", "cols"])
def test_reductions_run_in_kernels(fn):
    args = [np.ones((300, 70), np.float32)]
    if fn is ROW_OPS[F32]:
        args += [np.ones(70, np.float32), np.ones(300, np.float32)]
    fn(*args)
    ir = executable_of(fn, *args).program.executable.closed.ir
    assert {e.prim.name for e in ir.eqns} <= {"tile_kernel", "reshape"}
