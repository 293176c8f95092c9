"""The tiled IR: tile_kernel equations with grids, tile-typed bodies and valid regions; what
fuses into one kernel; what stays tensor-level and why."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.ir import TileType, verify
from ptojax.tile.kernel import tile_kernel_p
from ptojax.tile.ops import TileGrid
from ptojax.tile.api import tile_ir


def kernels(closed):
    return [e for e in closed.ir.eqns if e.prim is tile_kernel_p]


def tiled(fn, *args, config=None):
    closed = pto.make_ir(pto.tile(fn, config))(*args)
    verify(closed)
    return closed


X = np.zeros((64, 200), np.float32)
G = np.zeros(200, np.float32)


@pytest.mark.parametrize("fn,args", [
    (pto.nn.softmax, (X,)),
    (pto.nn.log_softmax, (X,)),
    (lambda x, g, b: pto.nn.layer_norm(x, g, b), (X, G, G)),
    (lambda x, g: pto.nn.rms_norm(x, g), (X, G)),
    (lambda x: pto.nn.gelu(x) * 2 + 1, (X,)),
], ids=["softmax", "log_softmax", "layer_norm", "rms_norm", "elementwise_chain"])
def test_each_pattern_is_one_kernel(fn, args):
    closed = tiled(fn, *args)
    assert [e.prim for e in closed.ir.eqns] == [tile_kernel_p]


def test_matmul_bias_activation_is_one_cube_kernel():
    w, b = np.zeros((200, 48), np.float32), np.zeros(48, np.float32)
    (k,) = kernels(tiled(lambda x, w, b: pto.nn.gelu(pnp.matmul(x, w) + b), X, w, b))
    assert k.params["kind"] == "cube" and k.params["cube"] is not None
    body = k.params["bodies"][0]
    names = [e.prim.name for e in body.eqns]
    assert {"tile_matmul", "tile_move", "tile_tanh", "tile_add"} <= set(names)
    # the accumulator reaches the vector epilogue through a GM workspace (910B: no L0C->UB)
    assert len(body.invars) == 2 + 3 + 1 + 1


def test_kernel_body_holds_tiles_in_on_chip_buffers():
    (k,) = kernels(tiled(pto.nn.softmax, X))
    body = k.params["bodies"][0]
    spaces = {v.type.space for e in body.eqns for v in e.outputs if isinstance(v.type, TileType)}
    assert spaces == {"UB"}
    names = [e.prim.name for e in body.eqns]
    assert names[0:2] == ["mul", "mul"] or "tile_load" in names
    assert "tile_row_max" in names and "tile_row_sum" in names and names[-1] == "tile_store"
    grid = k.params["grid"]
    assert isinstance(grid, TileGrid) and grid.space == (64, 200)
    assert grid.tile[1] >= 200 and grid.tile[1] * 4 % 32 == 0     # whole, aligned rows


def test_ragged_edges_use_valid_regions_not_padding():
    closed = tiled(pto.nn.softmax, np.zeros((37, 100), np.float32),
                   config=pto.TileConfig(vec=(16, 128)))
    (k,) = kernels(closed)
    assert k.params["regions"] == ((16, 100), (5, 100))
    edge = k.params["bodies"][1]
    load = next(e for e in edge.eqns if e.prim.name == "tile_load")
    assert load.outputs[0].type.shape == (16, 104) and load.outputs[0].type.valid == (5, 100)
    # no padded copies: the kernel reads the caller's 37x100 tensor directly
    assert k.inputs[0].type.shape == (37, 100)
    assert "valid=5x100" in str(closed)


def test_grid_splits_tiles_over_blocks():
    grid = TileGrid((1000, 64), (16, 64), 48)
    owned = [t for b in range(grid.blocks) for t in grid.block_range(b)]
    assert owned == list(range(grid.num_tiles)) == list(range(63))
    sizes = {len(grid.block_range(b)) for b in range(grid.blocks)}
    assert sizes == {1, 2}
    assert grid.valid(*grid.coords(62)) == (8, 64)


def test_ops_without_tile_rules_stay_tensor_level_with_reasons():
    def f(x):
        y = pnp.exp(x)
        z = pnp.sort(y, axis=-1)
        return pnp.tanh(z) + 1.0
    result = tile_ir(pto.make_ir(f)(X))
    prims = [e.prim.name for e in result.ir.ir.eqns]
    assert prims.count("tile_kernel") == 2 and "sort" in prims
    (u,) = result.unfused
    assert u.eqn.prim.name == "sort" and "sort" in u.reason
    assert "sort" in str(u)
    np.testing.assert_allclose(np.asarray(pto.tile(f)(X + 0.5)), np.asarray(f(X + 0.5)))


def test_float64_and_non_last_axis_reductions_are_left_unfused_with_reasons():
    with pto.enable_x64(True):   # float64 exists in x64 mode
        result = tile_ir(pto.make_ir(lambda x: (x * 2.0, (x * 3.0).max(axis=0)))(
            np.zeros((8, 16))))
    reasons = " | ".join(u.reason for u in result.unfused)
    assert "f64" in reasons
    result = tile_ir(pto.make_ir(lambda x: pnp.max(x, axis=0))(X))
    assert "last axis" in result.unfused[0].reason


def test_row_too_long_for_ub_is_left_unfused():
    result = tile_ir(pto.make_ir(pto.nn.softmax)(np.zeros((16, 100_000), np.float32)))
    assert not result.kernels
    assert all("does not fit" in u.reason for u in result.unfused)


def test_independent_ops_on_one_input_share_a_kernel():
    closed = tiled(lambda x: (pnp.exp(x), pnp.max(x, axis=-1), x * 2), X)
    assert len(kernels(closed)) == 1


def test_matmul_gradient_transposes_fold_into_cube_kernels():
    w = np.zeros((200, 48), np.float32)
    f = lambda w, x: pnp.sum(pnp.tanh(pnp.matmul(x, w)) ** 2)
    closed = tiled(pto.grad(f, argnums=(0, 1)), w, X)
    assert all(e.prim is tile_kernel_p for e in closed.ir.eqns)
    assert sum(e.params["kind"] == "cube" for e in kernels(closed)) == 3


def test_tiled_ir_prints_and_has_html():
    closed = tiled(pto.nn.softmax, X)
    text = str(closed)
    assert "tile_kernel[" in text and "f32<UB>[" in text and "tile_row_max" in text
    assert "tile_kernel" in closed._repr_html_()


def test_tiling_an_already_tiled_ir_keeps_its_kernels():
    closed = tiled(pto.nn.softmax, X)
    again = tile_ir(closed)
    assert [e.prim for e in again.ir.ir.eqns] == [tile_kernel_p]
