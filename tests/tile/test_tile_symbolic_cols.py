"""Tile kernels over a runtime column count (issue 19): a symbolic last dimension over static
rows (``jit(f, dynamic={"x": {1: pto.Dim(...)}})``, softmax over a growing KV cache's keys)
lowers to kernels whose tiles span the row at the dimension's upper bound with runtime valid
columns (PTO-AS ``%cols``/``v_col=?``, C++ ``Tile<..., VR, DYNAMIC>``, runtime GlobalTensor
columns and row stride). (Host execution: tests/lower/host/test_symbolic_cols.py.)"""
import re

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import nn
from ptojax.errors import TileError
from ptojax.tile.api import tile_ir
from ptojax.tile.planner import TileConfig

COLS = pto.Dim("cols", 1, 500)
R = 12


def softmax(x):
    return nn.softmax(x / 4.0, axis=-1)


def _lowered(fn, dim=COLS, cols=100, rows=R):
    x = np.zeros((rows, cols), np.float32)
    return pto.jit(fn, dynamic={"x": {1: dim}}).lower(x)


def _kernel(lowered):
    (eqn,) = [e for e in lowered.tile_ir.ir.eqns if e.prim.name == "tile_kernel"]
    return eqn


def test_one_tile_spans_the_row_at_the_upper_bound_with_runtime_valid_cols():
    eqn = _kernel(_lowered(softmax))
    grid = eqn.params["grid"]
    assert grid.dynamic_cols and not grid.dynamic_rows and grid.dynamic
    assert grid.grid_cols == 1 and grid.tile[1] >= 500 and grid.tile[1] % 8 == 0
    assert grid.num_tiles == -(-R // grid.tile[0])      # a static tile count
    assert [(vr, str(vc)) for vr, vc in eqn.params["regions"]][0][1] == "valid_cols"
    text = str(eqn)
    assert "valid=" in text and "xvalid_cols" in text and "view=(12, cols)" in text


def test_pto_as_takes_the_columns_and_allocates_dynamic_valid_columns():
    text = _lowered(softmax).as_text("pto")
    assert "%cols: i32" in text and "%ncols = arith.index_cast %cols : i32 to index" in text
    assert "strides = [%ncols, %c1]" in text
    assert "valid_col = %ncols" in text and "v_col=?" in text
    assert re.search(r"sizes = \[%c\d+, %ncols\] : !pto.tensor_view<\?x\?xf32> -> "
                     r"!pto.partition_tensor_view<\d+x\?xf32>", text)
    assert "%rows" not in text


def test_pto_cpp_has_dynamic_valid_columns_and_a_runtime_row_stride():
    text = _lowered(softmax).as_text("pto-cpp")
    assert "int32_t cols;        // columns of the 12xcols view" in text
    assert "const int32_t valid_cols = tiling.cols;" in text
    assert re.search(r"BLayout::RowMajor, (\d+), DYNAMIC> t0\(\1, valid_cols\);", text)
    assert re.search(r"Shape<1, 1, 1, \d+, DYNAMIC>\(valid_cols\), "
                     r"Stride<1, 1, 1, DYNAMIC, 1>\(tiling.cols\)\);", text)
    assert "* tiling.cols + " in text
    assert "int32_t cols) {" in text and "tiling{" in text and ", 1, cols};" in text
    assert "valid_rows" not in text and "tiling.rows" not in text


def test_column_outputs_have_the_runtime_columns():
    text = _lowered(lambda x: pnp.sum(x, axis=0)).as_text("pto-cpp")
    assert "Shape<1, 1, 1, 1, DYNAMIC>(valid_cols)" in text and "AtomicAdd" in text


@pytest.mark.parametrize("dim, match", [
    (pto.Dim("cols", 1), r"row length `cols` has no upper bound"),
    (pto.Dim("cols", 1, 10 ** 6), r"does not fit"),
])
def test_kernels_a_runtime_column_count_cannot_take_stay_tensor_ops(dim, match):
    low = _lowered(softmax, dim)
    assert re.search(match, str(low.unfused()))
    assert not [e for e in low.tile_ir.ir.eqns if e.prim.name == "tile_kernel"]


def test_an_explicit_config_must_span_the_row():
    closed = _lowered(softmax).ir
    with pytest.raises(TileError, match=r"row length `cols` is known only when it runs.*"
                                        r"Fix: cols >= 504"):
        tile_ir(closed, TileConfig(vec=(4, 64)))
    (eqn,) = [e for e in tile_ir(closed, TileConfig(vec=(4, 512))).ir.ir.eqns
              if e.prim.name == "tile_kernel"]
    assert eqn.params["grid"].tile[0] == 4 and eqn.params["grid"].tile[1] >= 500


def test_cost_is_estimated_at_the_upper_bound():
    cost = _lowered(softmax).cost()
    static = pto.jit(softmax).lower(np.zeros((R, 500), np.float32)).cost()
    assert cost.sizes == {"cols": 500}
    assert [(r.bytes, r.flops) for r in cost] == [(r.bytes, r.flops) for r in static]
    assert "at the upper bound of the symbolic sizes: cols=500" in str(cost)
