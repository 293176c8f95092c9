"""Batched matmuls (batch dims leading both operands, as in attention) tile into cube kernels:
the batch folds into the rows, each tile stays in one batch element, and the operand windows
are offset by the tile's batch element. Tiled vs untiled in every transpose combination,
batch ranks 1 and 2, ragged M/K/N, f32/f16/bf16; attention and its gradient vs JAX."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import TileError
from ptojax.tile.api import tile_ir
from tile_cases import BF16, F16, F32, assert_matches, make_args, untiled


def _t(x):
    return pnp.swapaxes(x, -1, -2)


# (lhs transposed, rhs transposed) -> the function and its operand shapes
def batched(lt, rt):
    def fn(a, b):
        return pnp.matmul(_t(a) if lt else a, _t(b) if rt else b)

    def shapes(batch, m, k, n):
        return [(*batch, *((k, m) if lt else (m, k))), (*batch, *((n, k) if rt else (k, n)))]
    return fn, shapes


COMBOS = [(lt, rt) for lt in (False, True) for rt in (False, True)]


def _only_cube_kernels(fn, args, config=None, target=pto.targets.ascend910b):
    result = tile_ir(pto.make_ir(fn)(*args), config, target)
    assert not result.unfused, result.unfused
    assert [k.params["kind"] for k in result.kernels] == ["cube"]
    return result.kernels[0]


@given(combo=st.sampled_from(COMBOS), batch=st.sampled_from([(3,), (2, 3)]),
       m=st.integers(1, 70), k=st.integers(1, 90), n=st.integers(1, 70),
       dtype=st.sampled_from([F32, F16, BF16]), seed=st.integers(0, 2 ** 16))
def test_batched_matmul_tiled_matches_untiled(combo, batch, m, k, n, dtype, seed):
    fn, shapes = batched(*combo)
    args = make_args(np.random.default_rng(seed), shapes(batch, m, k, n), dtype)
    _only_cube_kernels(fn, args)
    assert_matches("mm", pto.tile(fn)(*args), untiled(fn, *args), dtype)


@given(combo=st.sampled_from(COMBOS), batch=st.sampled_from([(2,), (2, 2)]),
       m_tiles=st.integers(1, 4), k=st.integers(1, 70), n=st.integers(1, 50),
       seed=st.integers(0, 2 ** 16))
def test_tiles_smaller_than_a_batch_element(combo, batch, m_tiles, k, n, seed):
    """m divides M: several row tiles per batch element (b = r0 // M, r0 % M in the body),
    with ragged K and N edges."""
    fn, shapes = batched(*combo)
    config = pto.TileConfig(cube=(16, 16, 16))
    args = make_args(np.random.default_rng(seed), shapes(batch, 16 * m_tiles, k, n), F32)
    kernel = _only_cube_kernels(fn, args, config)
    assert kernel.params["grid"].tile[0] == 16
    assert_matches("mm", pto.tile(fn, config)(*args), untiled(fn, *args), F32)


@pytest.mark.parametrize("m", [5, 16, 20, 40])
def test_a_whole_batch_element_per_tile_when_m_is_off_the_fractal(m, rng):
    fn, shapes = batched(False, True)
    args = make_args(rng, shapes((4,), m, 24, 33), F32)
    kernel = _only_cube_kernels(fn, args, pto.TileConfig(cube=(64, 16, 16)))
    assert kernel.params["grid"].tile[0] == m          # rows step by one batch element
    assert kernel.params["cube"][0] == -(-m // 16) * 16
    assert_matches("mm", pto.tile(fn, pto.TileConfig(cube=(64, 16, 16)))(*args),
                   untiled(fn, *args), F32)


def test_tile_rows_are_a_divisor_of_m_when_no_fractal_multiple_fits(rng):
    """M = 600 f32: a whole element (608 rows) overflows L0A, no fractal multiple <= 256
    divides 600, so tiles of 200 rows (the largest divisor <= 256) in 208-row cube tiles."""
    fn, shapes = batched(True, False)
    args = make_args(rng, shapes((2,), 600, 64, 64), F32)
    kernel = _only_cube_kernels(fn, args)
    assert kernel.params["grid"].tile[0] == 200 and kernel.params["cube"][0] == 208
    assert_matches("mm", pto.tile(fn)(*args), untiled(fn, *args), F32)


def test_explicit_m_that_straddles_batch_elements_raises_with_a_fix(rng):
    fn, shapes = batched(False, False)
    args = make_args(rng, shapes((2,), 48, 16, 16), F32)
    with pytest.raises(TileError, match=r"dot_general.*does not divide the 48 rows.*m=16"):
        pto.tile(fn, pto.TileConfig(cube=(32, 16, 16)))(*args)


def test_batched_matmul_accumulates_in_float32(rng):
    x = rng.normal(size=(2, 40, 300)).astype(np.float16)
    w = rng.normal(size=(2, 300, 20)).astype(np.float16)
    tiled = pto.tile(lambda a, b: a @ b, pto.TileConfig(cube=(64, 32, 16)))(x, w)
    exact = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float16)
    np.testing.assert_allclose(np.asarray(tiled, np.float64), exact.astype(np.float64),
                               rtol=2e-3, atol=2e-2)


def test_epilogue_fuses_onto_a_batched_matmul(rng):
    fn = lambda a, b, bias: pnp.tanh(a @ b * 0.25 + bias)
    args = make_args(rng, [(2, 3, 40, 24), (2, 3, 24, 72), (72,)], F32)
    kernel = _only_cube_kernels(fn, args)
    assert kernel.params["name"].startswith("k0_matmul")
    assert_matches("mm", pto.tile(fn)(*args), untiled(fn, *args), F32)


def test_tile_of_vmapped_matmul_with_both_operands_batched(rng):
    fn = pto.vmap(lambda a, b: a @ b)
    args = make_args(rng, [(5, 33, 70), (5, 70, 21)], F32)
    _only_cube_kernels(fn, args)
    assert_matches("mm", pto.tile(fn)(*args), untiled(fn, *args), F32)


# --- attention -------------------------------------------------------------------------------
def attention(q, k, v, np_=pnp, softmax=pto.nn.softmax):
    s = q @ np_.swapaxes(k, -1, -2) * (1.0 / q.shape[-1] ** 0.5)
    n = q.shape[-2]
    s = np_.where(np_.tril(np_.ones((n, n), bool)), s, -1e9)
    return softmax(s) @ v


def _jax_attention_and_grad(q, k, v):
    import jax
    import jax.numpy as jnp
    fn = lambda q, k, v: attention(q, k, v, jnp, jax.nn.softmax)
    out = fn(q, k, v)
    grads = jax.jit(jax.grad(lambda *a: jnp.sum(fn(*a) ** 2), argnums=(0, 1, 2)))(q, k, v)
    return np.asarray(out), [np.asarray(g) for g in grads]


@pytest.mark.parametrize("shape", [(2, 3, 40, 16), (1, 2, 64, 32)])
def test_causal_attention_and_its_gradient_tile_and_match_jax(shape, rng):
    pytest.importorskip("jax")
    q, k, v = (rng.normal(size=shape).astype(np.float32) * 0.5 for _ in range(3))
    loss = lambda q, k, v: pnp.sum(attention(q, k, v) ** 2)
    grad = pto.grad(loss, argnums=(0, 1, 2))
    want_out, want_grads = _jax_attention_and_grad(q, k, v)
    np.testing.assert_allclose(np.asarray(pto.tile(attention)(q, k, v)), want_out,
                               rtol=1e-4, atol=1e-5)
    for got, want in zip(pto.tile(grad)(q, k, v), want_grads):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
    for fn in (attention, grad):
        names = {u.eqn.prim.name for u in pto.jit(fn).lower(q, k, v).unfused()}
        assert "dot_general" not in names and "transpose" not in names, names
