"""Host kernels vs the numpy interpreter for every elementwise primitive with a tile form, in
f32, f16, bf16 and int32, on arrays cut into small tiles with ragged edges in both dims."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptojax as pto
import ptojax.numpy as pnp
from host_cases import (BF16, F16, F32, I32, arrays, assert_matches, executable_of,
                        has_ragged_regions, host_jit, interpret, kernels_of)

SMALL_TILES = pto.TileConfig(vec=(8, 32))
SHAPES = [(37, 70), (3, 5, 40)]
# Each shape is a library of its own (the shape is in the kernels), and the 16-bit float ones
# are the slowest to compile (every operation rounded to the element type: 12-18 s each). The
# rank-3 array (its leading dims flattened into the rows) is the same kernel code whatever the
# dtype, run in f32 and int32; f16 and bf16 run the 2-D shape, ragged in both dims.
SHAPES_OF = {F32: SHAPES, F16: SHAPES[:1], BF16: SHAPES[:1], I32: SHAPES}


def float_ops(x, y):
    return (x + y, x - y, x * y, x / y, pnp.maximum(x, y), pnp.minimum(x, y), -x, pnp.abs(x),
            pnp.exp(x), pnp.log(y), pnp.log1p(x), pnp.sqrt(x), pto.lax.rsqrt(y), pnp.tanh(x),
            pto.nn.sigmoid(x), x ** 2, x ** 3, x ** -1, x ** -2, 2.0 - x, 3.0 / y,
            x * 0.5 + 1.0, pnp.maximum(x, 0.0), pnp.isfinite(x / y), x == y, x != y, x < y,
            x <= y, x > y, x >= y, pnp.where(x > y, x, y), (x * 8).astype(pnp.int32),
            x.astype(pnp.float32 if x.dtype != pnp.float32 else pnp.float16), ~(x > y),
            pnp.where(~(x > y), x, 0.5), (x > 0) & (y < 0), (x > 0) | (y < 0), x - 1.5,
            x / 2.0, pnp.minimum(x, 1.0), pto.lax.stop_gradient(x) * y)


def int_ops(x, y):
    return (x + y, x - y, x * y, pto.lax.div(x, pnp.maximum(pnp.abs(y), 1)), pnp.maximum(x, y),
            pnp.minimum(x, y), -x, pnp.abs(x), x ** 2, x ** 3, x & y, x | y, ~x, x == y,
            x < y, x >= y, pnp.where(x > y, x, y), x.astype(pnp.float32), x * 3 + 7)


def _programs():
    return {dt: host_jit(int_ops if dt == I32 else float_ops, tile_config=SMALL_TILES)
            for dt in (F32, F16, BF16, I32)}


PROGRAMS = _programs()


@pytest.mark.parametrize("dtype", [F32, F16, BF16, I32], ids=str)
@settings(max_examples=15)
@given(data=st.data())
def test_elementwise_family(dtype, data):
    shape = data.draw(st.sampled_from(SHAPES_OF[dtype]), label="shape")
    lo, hi = (-30000, 30000) if dtype == I32 else (-6.0, 6.0)
    x = data.draw(arrays(dtype, shape, lo, hi, specials=dtype != I32), label="x")
    y = data.draw(arrays(dtype, shape, lo, hi, specials=dtype != I32), label="y")
    fn = PROGRAMS[dtype]
    with np.errstate(all="ignore"):
        assert_matches(fn(x, y), interpret(fn._fn, x, y))
    assert has_ragged_regions(fn, x, y)


@pytest.mark.parametrize("dtype", [F32, F16, BF16, I32], ids=str)
def test_every_op_of_the_family_runs_in_a_kernel(dtype):
    x = np.ones((37, 70), dtype)
    fn = PROGRAMS[dtype]
    fn(x, x)
    program = executable_of(fn, x, x).program.executable.closed.ir
    assert {e.prim.name for e in program.eqns} == {"tile_kernel"}


def test_int32_division_by_zero_and_overflow_wrap_like_numpy():
    fn = host_jit(lambda x, y: (pto.lax.div(x, y), x * y, x + y, -x, pnp.abs(x)),
                  tile_config=SMALL_TILES)
    x = np.array([[7, -7, 2**31 - 1, -2**31, 0, 5, -2**31, 3] * 4] * 8, np.int32)
    y = np.array([[0, 2, 2, -1, 0, -3, 1, 2**31 - 1] * 4] * 8, np.int32)
    with np.errstate(all="ignore"):
        assert_matches(fn(x, y), interpret(fn._fn, x, y))


def test_float_to_int_conversion_truncates_saturates_and_maps_nan_to_zero():
    fn = host_jit(lambda x: (x.astype(pnp.int32), x.astype(pnp.int16), x.astype(pnp.uint8)),
                  tile_config=SMALL_TILES)
    v = [0.5, -0.5, 2.9, -2.9, 1e10, -1e10, np.nan, np.inf, -np.inf, 255.9, 256.0, -1.5]
    x = np.array([v * 8] * 8, np.float32)
    with np.errstate(all="ignore"):
        assert_matches(fn(x), interpret(fn._fn, x))


@pytest.mark.parametrize("kernels", ["fused", "pto"])
def test_log1p_is_accurate_near_zero_and_exact_at_its_specials(kernels):
    """log1p in a kernel keeps its relative accuracy where log(1 + x) loses it (|x| tiny:
    softplus of a large negative input), in the fused build (log1p_f32) and in the PTO
    build (log(u) + (x - (u - 1)) / u); -1, inf, beyond -1 and NaN as numpy."""
    fn = host_jit(lambda v: pnp.log1p(v), kernels=kernels)
    tiny = np.geomspace(1e-38, 1e-3, 200, dtype=np.float32)
    wide = np.geomspace(1e-3, 3e38, 200, dtype=np.float32)
    specials = [-1.0, np.inf, -np.inf, -1.5, np.nan, 0.0, -0.5, -0.75, -1 + 2 ** -24, 1e-45]
    for dtype in (F32, F16):
        with np.errstate(all="ignore"):     # beyond float16's range: inf
            x = np.resize(np.concatenate([tiny, -tiny, wide, -wide[:150] / 3e38, specials]),
                          (20, 48)).astype(dtype)
            out, expected = fn(x).astype(np.float64), np.log1p(x.astype(np.float64))
        finite = np.isfinite(expected) & (expected != 0)
        error = np.abs(out[finite] - expected[finite]) / np.abs(expected[finite])
        assert error.max() <= 2 * np.finfo(dtype).eps, (dtype, x[finite][error.argmax()])
        assert np.array_equal(out[~finite], expected[~finite], equal_nan=True)
    assert [k.params["name"] for k in kernels_of(fn, x)] == ["k0_log1p"]
