"""Tile kernels over a runtime row count (issue 19): ``jit(f, dynamic={"x": {0: pto.Dim(...)}})``
lowers to kernels whose grid has ``ceil(rows / tile_rows)`` rows of tiles at run time and
whose last grid row has a dynamic valid row count (PTO-AS ``v_row=?``, C++ ``DYNAMIC``);
tile shapes are planned at the dimension's upper bound. Two symbolic dimensions of one kernel
are errors naming them (a symbolic last dimension alone: tests/tile/test_tile_symbolic_cols.py). (Host execution: tests/lower/host/test_symbolic_rows.py.)"""
import re

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import UnsupportedError
from ptojax.tile.api import tile_ir
from ptojax.tile.planner import TileConfig

ROWS = pto.Dim("rows", 1, 4096)
C = 256


def softmax(x):
    e = pnp.exp(x - pnp.max(x, axis=-1, keepdims=True))
    return e / pnp.sum(e, axis=-1, keepdims=True)


def chain(x):
    return pnp.tanh(x) * 2.0 + pnp.exp(-x)


def _lowered(fn, cols=C, dim=ROWS, axis=0, rows=100):
    x = np.zeros((rows, cols), np.float32)
    return pto.jit(fn, dynamic={"x": {axis: dim}}).lower(x)


def _kernel(lowered):
    (eqn,) = [e for e in lowered.tile_ir.ir.eqns if e.prim.name == "tile_kernel"]
    return eqn


def test_the_grid_has_a_runtime_row_count_and_a_dynamic_last_row():
    eqn = _kernel(_lowered(softmax))
    grid = eqn.params["grid"]
    r = grid.tile[0]
    assert grid.dynamic_rows and str(grid.space[0]) == "rows" and grid.tile[1] == C
    assert grid.max_num_tiles() == -(-4096 // r) and grid.num_tiles_at(r + 1) == 2
    full, last = eqn.params["regions"]
    assert full == (r, C) and str(last[0]) == "valid_rows" and last[1] == C
    assert "valid=valid_rowsx256" in str(eqn.params["bodies"][1])
    with pytest.raises(UnsupportedError, match="known only when the kernel runs"):
        grid.num_tiles


def test_pto_as_takes_the_rows_and_sets_the_last_tiles_valid_rows():
    text = _lowered(softmax).as_text("pto")
    r = _kernel(_lowered(softmax)).params["grid"].tile[0]
    assert "%num_tiles: i32, %grid_cols: i32, %rows: i32)" in text
    assert re.search(r"make_tensor_view %in0, shape = \[%nrows, %c256\]", text)
    assert "%last_row = arith.subi %grid_rows, %c1 : index" in text
    assert re.search(r"arith.cmpi ult, %ti_\d+, %last_row : index", text)
    assert re.search(rf"%row0_\d+ = arith.muli %ti_\d+, %c{r} : index", text)
    assert re.search(r"%valid_rows_\d+ = arith.subi %nrows, %row0_\d+", text)
    # every tile of the last grid row: dynamic valid rows from pto.alloc_tile
    assert re.search(rf"pto.alloc_tile addr = %a\d+ valid_row = %valid_rows_\d+ valid_col = "
                     rf"%c256 : !pto.tile_buf<loc=vec, dtype=f32, rows={r}, cols=256, "
                     rf"v_row=\?, v_col=\?", text)
    assert re.search(r"valid_row = %c1 valid_col = %valid_rows_\d+ : !pto.tile_buf<[^>]*"
                     r"rows=1, cols=\d+, v_row=\?", text)          # row views of row vectors
    # TLOAD / TSTORE of the valid rows only
    assert re.search(r"sizes = \[%valid_rows_\d+, %c256\] : !pto.tensor_view<\?x\?xf32> -> "
                     r"!pto.partition_tensor_view<\?x256xf32>", text)
    assert "pto.tload ins(%g0_" in text and "pto.tstore" in text
    assert f"v_row={r}, v_col=256" in text                          # the full tiles stay static


def test_pto_cpp_declares_dynamic_tiles_and_windows():
    low = _lowered(softmax)
    r = _kernel(low).params["grid"].tile[0]
    text = low.as_text("pto-cpp")
    assert "int32_t rows;        // rows of the rowsx256 view, known at run time" in text
    assert "if (ti < (tiling.num_tiles / tiling.grid_cols - 1)) {" in text
    assert f"const int32_t valid_rows = tiling.rows - ti * {r};" in text
    assert re.search(rf"Tile<TileType::Vec, float, {r}, 256, BLayout::RowMajor, DYNAMIC, 256> "
                     rf"t0\(valid_rows, 256\);", text)
    assert re.search(r"BLayout::ColMajor, DYNAMIC, 1> t\d+\(valid_rows, 1\);", text)
    assert re.search(r"BLayout::RowMajor, 1, DYNAMIC> t\d+_r\(1, valid_rows\);", text)
    assert ("GlobalTensor<float, Shape<1, 1, 1, DYNAMIC, 256>, Stride<1, 1, 1, 256, 1>> "
            "g0(in0 + (s0 * 256 + s1), Shape<1, 1, 1, DYNAMIC, 256>(valid_rows));") in text
    assert re.search(rf"Tile<TileType::Vec, float, {r}, 256, BLayout::RowMajor, {r}, 256> t0;",
                     text)
    # the launcher computes the trip count from the rows of the call
    assert "void launch_k0_rmax_div(void *stream, uint8_t *in0, uint8_t *out0, int32_t rows)" \
        in text
    assert f"tiling{{(rows + {r - 1}) / {r} * 1, 1, rows}};" in text
    assert "k0_rmax_div<<<blocks, nullptr, stream>>>" in text    # at most one block a tile


def test_static_programs_print_as_before():
    x = np.zeros((100, C), np.float32)
    text = pto.jit(softmax).lower(x).as_text("pto-cpp")
    assert "DYNAMIC" not in text and "rows;" not in text and "valid_rows" not in text
    assert "%rows" not in pto.jit(softmax).lower(x).as_text("pto")


def test_row_vector_outputs_use_the_runtime_rows_as_their_stride():
    text = _lowered(lambda x: pnp.sum(x * x, axis=-1)).as_text("pto-cpp")
    assert ("Shape<1, 1, 1, DYNAMIC, 1>, Stride<1, 1, 1, 1, DYNAMIC>, Layout::DN> "
            "g1(out0 + (s0), Shape<1, 1, 1, DYNAMIC, 1>(valid_rows), "
            "Stride<1, 1, 1, 1, DYNAMIC>(tiling.rows));") in text


def test_column_edges_stay_static_regions():
    x = np.zeros((100, 200), np.float32)
    closed = pto.jit(chain, dynamic={"x": {0: ROWS}}).lower(x).ir
    (eqn,) = [e for e in tile_ir(closed, TileConfig(vec=(16, 64))).ir.ir.eqns
              if e.prim.name == "tile_kernel"]
    grid = eqn.params["grid"]
    regions = [(str(vr), vc) for vr, vc in eqn.params["regions"]]
    assert regions == [("16", 64), ("16", 8), ("valid_rows", 64), ("valid_rows", 8)]
    conditions = [[(c.index, c.op, c.k) for c in grid.region_conditions(i)] for i in range(4)]
    assert conditions == [[("ti", "lt", "last_grid_row"), ("tj", "lt", 3)],
                          [("ti", "lt", "last_grid_row"), ("tj", "eq", 3)],
                          [("tj", "lt", 3)], [("tj", "eq", 3)]]


def test_a_range_within_one_tile_has_only_the_dynamic_region():
    eqn = _kernel(_lowered(chain, dim=pto.Dim("rows", 1, 3), rows=2))
    ((vr, vc),) = eqn.params["regions"]
    assert str(vr) == "valid_rows" and eqn.params["grid"].tile[0] == 3


def test_leading_dims_times_a_symbol_are_the_runtime_rows():
    x = np.zeros((5, 4, 64), np.float32)
    low = pto.jit(chain, dynamic={"x": {0: pto.Dim("b", 1, 64)}}).lower(x)
    grid = _kernel(low).params["grid"]
    assert str(grid.space[0]) == "4*b" and grid.rows_at({"b": 5}) == 20
    assert "%rows: i32" in low.as_text("pto")


@pytest.mark.parametrize("dynamic, match", [
    ({0: pto.Dim("rows", 1, 128), 1: pto.Dim("cols", 1, 512)},
     r"both its row count `rows` and its row length `cols` are symbolic"),
    ({0: pto.Dim("rows", 1)}, r"`rows` has no upper bound"),
])
def test_symbolic_dims_kernels_cannot_take_are_errors(dynamic, match):
    x = np.zeros((100, C), np.float32)
    low = pto.jit(chain, dynamic={"x": dynamic}).lower(x)
    for dialect in ("pto", "pto-cpp"):
        with pytest.raises(UnsupportedError, match=match):
            low.as_text(dialect)
    assert "symbolic dimension" in str(low.unfused())


def test_matmul_rows_must_be_static():
    w = np.ones((C, 64), np.float32)
    with pytest.raises(UnsupportedError, match=r"matmul over `rows` rows; cube kernels need "
                                               r"static shapes"):
        _lowered(lambda x: x @ w).as_text("pto")


def test_an_explicit_config_for_two_symbolic_dims_is_an_error():
    x = np.zeros((100, C), np.float32)
    closed = pto.jit(chain, dynamic={"x": {0: pto.Dim("rows", 1, 128),
                                           1: pto.Dim("cols", 1, 512)}}).lower(x).ir
    with pytest.raises(UnsupportedError, match="tile kernels take one runtime extent"):
        tile_ir(closed, TileConfig(vec=(8, 64)))


def test_cost_is_estimated_at_the_upper_bound():
    cost = _lowered(softmax).cost()
    static = pto.jit(softmax).lower(np.zeros((4096, C), np.float32)).cost()
    assert cost.sizes == {"rows": 4096}
    assert "at the upper bound of the symbolic sizes: rows=4096" in str(cost)
    assert [(r.tiles, r.bytes, r.flops) for r in cost] == \
        [(r.tiles, r.bytes, r.flops) for r in static]
    assert cost.total_us == pytest.approx(static.total_us)


def test_pto_tile_of_symbolic_rows_is_an_error():
    x = np.zeros((50, 64), np.float32)
    jitted = pto.jit(pto.tile(chain), dynamic={"x": {0: ROWS}})
    with pytest.raises(UnsupportedError, match="leave out pto.tile"):
        jitted(x)
