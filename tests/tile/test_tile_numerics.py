"""Tiled functions compute what the untiled IR computes: bitwise for elementwise chains,
within dtype tolerance for reductions and matmuls; on any shape (ragged edges included),
for float32/float16/bfloat16, with automatic and explicit tile shapes."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import ptojax as pto
from tile_cases import BF16, CASES, F16, F32, assert_matches, make_args, untiled

DTYPES = [F32, F16, BF16]


@given(case=st.sampled_from(sorted(CASES)), m=st.integers(1, 70), n=st.integers(1, 300),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2 ** 16))
def test_tiled_matches_untiled(case, m, n, dtype, seed):
    fn, shapes, kind = CASES[case]
    args = make_args(np.random.default_rng(seed), shapes(m, n), dtype)
    assert_matches(kind, pto.tile(fn)(*args), untiled(fn, *args), dtype)


@given(case=st.sampled_from(sorted(CASES)), m=st.integers(1, 90), n=st.integers(1, 200),
       rows=st.sampled_from([16, 32]), seed=st.integers(0, 2 ** 16))
def test_explicit_small_tiles_give_ragged_edges(case, m, n, rows, seed):
    fn, shapes, kind = CASES[case]
    config = pto.TileConfig(vec=(rows, 256 if kind == "red" else 64), cube=(32, 32, 16))
    args = make_args(np.random.default_rng(seed), shapes(m, n), F32)
    assert_matches(kind, pto.tile(fn, config)(*args), untiled(fn, *args), F32)


@pytest.mark.parametrize("buffers", [1, 2, 3])
def test_buffer_count_does_not_change_results(buffers, rng):
    fn, shapes, kind = CASES["layer_norm"]
    args = make_args(rng, shapes(77, 130), F32)
    out = pto.tile(fn, pto.TileConfig(vec=(16, 136), buffers=buffers))(*args)
    assert_matches(kind, out, untiled(fn, *args), F32)


def test_tiled_functions_run_under_jit(rng):
    fn, shapes, kind = CASES["softmax"]
    (x,) = make_args(rng, shapes(33, 70), F32)
    jitted = pto.jit(pto.tile(fn))
    assert_matches(kind, jitted(x), untiled(fn, x), F32)
    assert_matches(kind, jitted(x), untiled(fn, x), F32)       # the cached executable
    assert jitted.cache_size() == 1


def test_matmul_accumulates_in_float32(rng):
    x = rng.normal(size=(40, 300)).astype(np.float16)
    w = rng.normal(size=(300, 20)).astype(np.float16)
    tiled = pto.tile(lambda a, b: a @ b, pto.TileConfig(cube=(16, 32, 16)))(x, w)
    exact = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float16)
    # ten K steps, each adding into a float32 accumulator: as good as one float16 rounding
    np.testing.assert_allclose(np.asarray(tiled, np.float64), exact.astype(np.float64),
                               rtol=2e-3, atol=2e-2)


def test_integer_and_boolean_elementwise(rng):
    a = rng.integers(-50, 50, size=(20, 33)).astype(np.int32)
    b = rng.integers(1, 9, size=(20, 33)).astype(np.int32)
    fn = lambda a, b: (pto.numpy.maximum(a * b + 3, a), (a > 0) & (b < 5))
    for got, want in zip(pto.tile(fn)(a, b), untiled(fn, a, b)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_column_sums_accumulate_across_tiles(rng):
    x = rng.normal(size=(300, 40)).astype(np.float32)
    fn = lambda x: (x * 2.0).sum(axis=0)
    out = pto.tile(fn, pto.TileConfig(vec=(32, 64)))(x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(untiled(fn, x)), rtol=1e-5,
                               atol=1e-5)
