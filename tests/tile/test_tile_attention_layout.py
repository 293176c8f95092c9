"""pto.tile recognizes ``pto.nn.dot_product_attention``'s [B, T, N, H] layout (its einsums
batch the middle axes, tile/attention_layout.py) and runs it as the flash forward kernel: no
S x S value between kernels, fewer GM bytes, values and gradients equal to
``jax.nn.dot_product_attention``'s."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close
from ptojax.tile.kernel import tile_kernel_p

B, T, N, H = 2, 64, 2, 16


def kernel_names(fn, *args):
    ir = pto.make_ir(pto.tile(fn))(*args)
    return [e.params["name"] for e in ir.ir.eqns if e.prim is tile_kernel_p], ir


def scores_in_gm(ir) -> bool:
    return any(tuple(v.type.shape[-2:]) == (T, T) for e in ir.ir.eqns for v in e.outputs)


@pytest.fixture(scope="module")
def qkv():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((B, T, N, H)).astype(np.float32) for _ in range(3)]


@pytest.mark.parametrize("causal", [True, False])
def test_dot_product_attention_runs_as_the_flash_forward_kernel(qkv, jax, causal):
    def fn(q, k, v):
        return pto.nn.dot_product_attention(q, k, v, is_causal=causal)
    names, ir = kernel_names(fn, *qkv)
    assert names == ["flash_attention_forward"] and not scores_in_gm(ir)
    expected = jax.nn.dot_product_attention(*qkv, is_causal=causal)
    assert_close(pto.tile(fn)(*qkv), np.asarray(expected), scale=8)


def test_grouped_query_attention_broadcasts_keys_over_the_groups(jax):
    rng = np.random.default_rng(1)
    q = rng.standard_normal((1, T, 4, H)).astype(np.float32)
    k, v = (rng.standard_normal((1, T, 2, H)).astype(np.float32) for _ in range(2))

    def fn(q, k, v):
        return pto.nn.dot_product_attention(q, k, v, is_causal=True)
    names, ir = kernel_names(fn, q, k, v)
    assert names == ["flash_attention_forward"] and not scores_in_gm(ir)
    expected = jax.nn.dot_product_attention(q, k, v, is_causal=True)
    assert_close(pto.tile(fn)(q, k, v), np.asarray(expected), scale=8)


def test_gm_bytes_drop_at_a_long_sequence():
    x = pto.ShapeDtypeStruct((1, 1024, 4, 64), np.float32)

    def fn(q, k, v):
        return pto.nn.dot_product_attention(q, k, v, is_causal=True)
    unfused, fused = (pto.jit(pto.tile(fn, config)).lower(x, x, x).cost()
                      for config in (pto.TileConfig(attention=False), None))
    assert sum(r.bytes for r in fused) < 0.8 * sum(r.bytes for r in unfused)
    assert fused.total_seconds < unfused.total_seconds


def test_gradients_match_jax(qkv, jax, jnp):
    def loss(np_, attention):
        return lambda q, k, v: np_.sum(attention(q, k, v, is_causal=True) ** 2)
    grads = pto.tile(pto.grad(loss(pto.numpy, pto.nn.dot_product_attention),
                              argnums=(0, 1, 2)))(*qkv)
    expected = jax.jit(jax.grad(loss(jnp, jax.nn.dot_product_attention), argnums=(0, 1, 2)))(*qkv)
    for g, e in zip(grads, expected):
        assert_close(g, np.asarray(e), scale=8)
