"""pto.tile recognizes attention (softmax(q k^T * scale [+ causal mask]) v) and its gradient
and runs them as the flash attention kernels (tile/attention.py, kernel/flash.py): the S x S
scores never reach GM, values and gradients match JAX, and variants it does not recognize
stay unfused and still right."""
import math

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from ptojax.tile.kernel import tile_kernel_p

H, S, D = 2, 64, 16
FLASH = {"flash_attention_forward", "flash_attention_dkdv", "flash_attention_dq"}


def attention(np_, softmax, causal=True, fill=-1e30):
    """Unfused attention written with ``np_`` (ptojax.numpy or jax.numpy)."""
    def f(q, k, v):
        s = np_.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
        if causal:
            s = np_.where(np_.tril(np_.ones(s.shape[-2:], bool)), s, fill)
        return np_.einsum("...qk,...kd->...qd", softmax(s, axis=-1), v)
    return f


@pytest.fixture(scope="module")
def qkvw():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((H, S, D)).astype(np.float32) for _ in range(4)]


WITH_GRADIENT = pto.TileConfig(attention_gradient=True)


def kernel_names(fn, *args, config=None):
    ir = pto.make_ir(pto.tile(fn, config))(*args)
    return [e.params["name"] for e in ir.ir.eqns if e.prim is tile_kernel_p], ir


def scores_in_gm(ir, sq, sk) -> bool:
    """Whether any value between kernels has the S x S scores' trailing shape."""
    return any(tuple(v.type.shape[-2:]) == (sq, sk) for e in ir.ir.eqns for v in e.outputs)


@pytest.mark.parametrize("causal", [True, False])
def test_attention_runs_as_the_flash_forward_kernel(qkvw, jax, jnp, causal):
    q, k, v, _ = qkvw
    fn = attention(pnp, pto.nn.softmax, causal)
    names, ir = kernel_names(fn, q, k, v)
    assert names == ["flash_attention_forward"]
    assert not scores_in_gm(ir, S, S)
    expected = attention(jnp, jax.nn.softmax, causal, -jnp.inf)(q, k, v)
    assert_close(pto.tile(fn)(q, k, v), np.asarray(expected), scale=8)


def test_batch_dims_fold_into_heads_and_keys_may_outnumber_queries(jax, jnp):
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 2, 32, D)).astype(np.float32)
    k, v = (rng.standard_normal((2, 2, 64, D)).astype(np.float32) for _ in range(2))
    fn = attention(pnp, pto.nn.softmax, causal=False)
    names, ir = kernel_names(fn, q, k, v)
    assert names == ["flash_attention_forward"] and not scores_in_gm(ir, 32, 64)
    expected = attention(jnp, jax.nn.softmax, causal=False)(q, k, v)
    assert_close(pto.tile(fn)(q, k, v), np.asarray(expected), scale=8)


@pytest.mark.parametrize("loss", ["linear", "square"])
def test_the_gradient_runs_as_the_flash_backward_kernels(qkvw, jax, jnp, loss):
    q, k, v, w = qkvw

    def make(np_, softmax):
        f = attention(np_, softmax, True)
        if loss == "linear":              # the gradient program keeps only p (no p @ v)
            return lambda q, k, v: np_.sum(f(q, k, v) * w)
        return lambda q, k, v: np_.sum(f(q, k, v) ** 2)

    grad = pto.grad(make(pnp, pto.nn.softmax), argnums=(0, 1, 2))
    names, ir = kernel_names(grad, q, k, v, config=WITH_GRADIENT)
    assert FLASH <= set(names) and not any("matmul" in n for n in names)
    assert not scores_in_gm(ir, S, S)
    expected = jax.jit(jax.grad(make(jnp, jax.nn.softmax), argnums=(0, 1, 2)))(q, k, v)
    for got, want in zip(pto.tile(grad, WITH_GRADIENT)(q, k, v), expected):
        assert_close(got, np.asarray(want), scale=16)


def test_a_gradient_for_some_inputs_only(qkvw, jax, jnp):
    q, k, v, w = qkvw
    grad = pto.grad(lambda k: pnp.sum(attention(pnp, pto.nn.softmax)(q, k, v) * w))
    names, ir = kernel_names(grad, k, config=WITH_GRADIENT)
    assert "flash_attention_dkdv" in names and not scores_in_gm(ir, S, S)
    expected = jax.jit(jax.grad(lambda k: jnp.sum(attention(jnp, jax.nn.softmax)(q, k, v) * w)))(k)
    assert_close(pto.tile(grad, WITH_GRADIENT)(k), np.asarray(expected), scale=16)


def test_gradients_are_fused_by_default_and_unfused_on_request(qkvw, jax, jnp):
    """On by default (the flash step is faster in the 910B cost model); attention_gradient=False
    keeps the gradient's S x S scores in GM."""
    q, k, v, w = qkvw
    grad = pto.grad(lambda q: pnp.sum(attention(pnp, pto.nn.softmax)(q, k, v) * w))
    names, _ = kernel_names(grad, q)
    assert {"flash_attention_dq"} <= set(names)
    off = pto.TileConfig(attention_gradient=False)
    names, ir = kernel_names(grad, q, config=off)
    assert not FLASH & set(names) and scores_in_gm(ir, S, S)
    expected = jax.jit(jax.grad(lambda q: jnp.sum(attention(jnp, jax.nn.softmax)(q, k, v) * w)))(q)
    assert_close(pto.tile(grad, off)(q), np.asarray(expected), scale=16)


def test_pto_as_shows_the_online_softmax_loop_and_gm_bytes_drop(qkvw):
    q, k, v, _ = qkvw
    fn = attention(pnp, pto.nn.softmax)
    fused = pto.jit(pto.tile(fn)).lower(q, k, v)
    text = str(fused.as_text("pto"))
    assert "flash_attention_forward" in text and "scf.for" in text
    assert "flash_attention_forward" in str(fused.as_text("pto-cpp"))
    unfused = pto.jit(pto.tile(fn, pto.TileConfig(attention=False))).lower(q, k, v)
    assert "flash_attention" not in str(unfused.as_text("pto"))
    assert sum(r.bytes for r in fused.cost()) < sum(r.bytes for r in unfused.cost())


def _softmax_without_max(s, axis):
    e = pnp.exp(s)
    return e / e.sum(axis=axis, keepdims=True)


def _jax_softmax_without_max(jax, jnp):
    return lambda s, axis: jnp.exp(s) / jnp.exp(s).sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("variant", ["runtime mask", "band mask", "softmax without max",
                                     "probabilities returned", "float16"])
def test_unrecognized_variants_stay_unfused_and_right(qkvw, jax, jnp, variant):
    q, k, v, _ = qkvw
    band = np.tril(np.ones((S, S), bool)) & ~np.tril(np.ones((S, S), bool), -8)
    args = (q, k, v)
    if variant == "runtime mask":
        def make(np_, softmax):
            def f(q, k, v, m):
                s = np_.einsum("hqd,hkd->hqk", q, k) / math.sqrt(D)
                return np_.einsum("hqk,hkd->hqd", softmax(np_.where(m, s, -1e30), axis=-1), v)
            return f
        args = (q, k, v, band)
    elif variant == "band mask":
        def make(np_, softmax):
            def f(q, k, v):
                s = np_.where(band, np_.einsum("hqd,hkd->hqk", q, k), -1e30)
                return np_.einsum("hqk,hkd->hqd", softmax(s, axis=-1), v)
            return f
    elif variant == "softmax without max":
        def make(np_, softmax):
            sm = _softmax_without_max if np_ is pnp else _jax_softmax_without_max(jax, jnp)
            return attention(np_, sm, causal=False)
    elif variant == "probabilities returned":
        def make(np_, softmax):
            def f(q, k, v):
                p = softmax(np_.einsum("hqd,hkd->hqk", q, k), axis=-1)
                return np_.einsum("hqk,hkd->hqd", p, v), p
            return f
    else:
        args = tuple(x.astype(np.float16) for x in args)

        def make(np_, softmax):
            return attention(np_, softmax, causal=False)
    fn = make(pnp, pto.nn.softmax)
    names, _ = kernel_names(fn, *args)
    assert not FLASH & set(names)
    got = pto.tile(fn)(*args)
    expected = make(jnp, jax.nn.softmax)(*args)
    for g, e in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, expected))):
        assert_close(g, np.asarray(e), scale=64)


def test_attention_false_keeps_attention_unfused(qkvw):
    q, k, v, _ = qkvw
    names, ir = kernel_names(attention(pnp, pto.nn.softmax), q, k, v,
                             config=pto.TileConfig(attention=False))
    assert not FLASH & set(names) and scores_in_gm(ir, S, S)
    with pytest.raises(pto.errors.TileError, match="attention"):
        pto.TileConfig(attention="yes")


def test_two_attentions_in_a_row_and_their_gradient(qkvw, jax, jnp):
    q, k, v, w = qkvw

    def make(np_, softmax):
        att = attention(np_, softmax, True)
        return lambda q, k, v: np_.sum(att(att(q, k, v), k, v) * w)

    grad = pto.grad(make(pnp, pto.nn.softmax), argnums=(0, 1, 2))
    names, ir = kernel_names(grad, q, k, v, config=WITH_GRADIENT)
    # the second call's kernels get distinct names (the host builds define them by name)
    assert [n for n in names if n.startswith("flash_attention_forward")] == \
        ["flash_attention_forward", "flash_attention_forward_2"] and not scores_in_gm(ir, S, S)
    assert sorted(n for n in names if n.startswith("flash_attention_dkdv")) == \
        ["flash_attention_dkdv", "flash_attention_dkdv_2"]
    expected = jax.jit(jax.grad(make(jnp, jax.nn.softmax), argnums=(0, 1, 2)))(q, k, v)
    for got, want in zip(pto.tile(grad, WITH_GRADIENT)(q, k, v), expected):
        assert_close(got, np.asarray(want), scale=16)
