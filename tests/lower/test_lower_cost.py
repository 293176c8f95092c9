"""The cost model: per-kernel bytes, flops, cycles, microseconds and bound; the program total;
rendering as a table."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from lower_cases import lowered

S = pto.ShapeDtypeStruct


def test_cost_rows_per_kernel_and_total():
    cost = lowered("layer_norm").cost()
    (row,) = list(cost)
    assert row.kind == "vector" and row.tiles >= row.blocks >= 1
    # reads x, gamma (per tile), beta (per tile); writes y
    assert row.bytes >= 2 * 64 * 512 * 4
    assert row.flops > 64 * 512 and row.cycles > 0 and row.us > 0
    # one tile per core: its load, compute and store have nothing to overlap with
    assert row.bound in ("HBM", "fixpipe", "vector", "cube", "latency")
    assert cost.total_us == pytest.approx(row.us)


def test_elementwise_add_is_memory_bound_and_big_f16_matmul_is_cube_bound():
    add = pto.jit(lambda a, b: a + b).lower(S((4096, 4096), np.float32),
                                            S((4096, 4096), np.float32)).cost()
    assert add[0].bound == "HBM"
    assert add[0].bytes == 3 * 4096 * 4096 * 4
    mm = pto.jit(lambda a, b: pnp.matmul(a, b)).lower(S((4096, 4096), np.float16),
                                                      S((4096, 4096), np.float16)).cost()
    assert mm[0].kind == "cube" and mm[0].flops == 2 * 4096 ** 3
    # the cube works while the next K step loads (separate pipes): its M pipe is busy most
    # of the kernel's time (128x128 tiles: the GM->L1 path's estimate makes MTE2 critical)
    assert mm[0].detail["pipes"]["cube.M"] >= 0.8 * mm[0].us
    peak = 24 * 4096 * 2 * 1.8e9                      # cube MAC/s x 2 flops on 24 cores
    assert mm[0].seconds >= mm[0].flops / peak        # never faster than the cube peak


def test_more_data_costs_more():
    small = pto.jit(pto.nn.softmax).lower(S((256, 1024), np.float32)).cost().total_us
    big = pto.jit(pto.nn.softmax).lower(S((8192, 1024), np.float32)).cost().total_us
    assert big > 4 * small


def test_tensor_ops_between_kernels_are_estimated():
    cost = pto.jit(lambda x: pnp.sort(pnp.exp(x), axis=-1)).lower(
        S((64, 128), np.float32)).cost()
    kinds = [r.kind for r in cost]
    assert "tensor op" in kinds and "vector" in kinds
    assert all(r.us > 0 for r in cost)


def test_cost_renders_as_a_table_and_html():
    cost = lowered("matmul_bias_gelu").cost()
    text = str(cost)
    assert "kernel" in text and "bound" in text and "total" in text and "model" in text
    html = cost._repr_html_()
    assert "<table>" in html and "k0_" in html


def test_a_loop_scalar_converted_from_the_index_is_costed():
    """A loop step's scalar ``j + 1.0`` converts the index (a Let with params): the cost
    model evaluates the Let with its params (it called convert without its dtype)."""
    R, C = 8, 16
    kernel = pto.kernel

    @kernel(out_shape=pto.ShapeDtypeStruct((2 * R, C), np.float32), grid=(2,),
            in_specs=[pto.BlockSpec((R, C), lambda i: (i, 0))],
            out_specs=pto.BlockSpec((R, C), lambda i: (i, 0)))
    def scaled(x_ref, o_ref):
        x = x_ref[...]
        o_ref[...] = kernel.fori(0, 3, lambda j, acc: acc + x * (j + 1.0),
                                 pto.numpy.zeros((R, C), np.float32))
    x = np.ones((2 * R, C), np.float32)
    np.testing.assert_array_equal(np.asarray(scaled(x)), np.full((2 * R, C), 6.0, np.float32))
    (row,) = pto.jit(scaled).lower(x).cost()
    assert row.seconds > 0


def test_a_kernel_busiest_on_the_fixpipe_is_fixpipe_bound_not_hbm_bound():
    from ptojax.lower.cost import _bound
    pipes = {("cube", "FIX"): 1.0, ("cube", "M"): 0.9, ("vec0", "MTE2"): 0.5}
    parts = {"HBM": 0.6, "vector": 0.5, "cube": 0.9}
    assert _bound(pipes, 0.2, parts, 1.05) == "fixpipe"
    assert _bound(pipes, 1.2, parts, 1.25) == "HBM"        # the HBM floor dominates
    assert _bound({("vec0", "MTE2"): 1.0}, 0.2, parts, 1.0) == "HBM"
