"""pto.tile recognizes attention's gradient in every form autodiff gives it — plain jnp
attention ([B, N, T, H]), ``nn.dot_product_attention`` ([B, T, N, H]) with and without a
causal mask, grouped-query attention, a ragged sequence (no block divides it), under
``vmap`` and ``jit`` — and runs forward and backward as the flash kernels (forward saving
only the row log-sum-exp): no S x S value reaches GM, values and gradients equal JAX's."""
import math

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from ptojax.tile.kernel import tile_kernel_p

FLASH = ["flash_attention_forward", "flash_attention_dkdv", "flash_attention_dq"]
B, T, N, H = 1, 40, 2, 16             # T = 40: a multiple of no flash block (ragged)


def plain_attention(np_, softmax, causal):
    """[..., T, H] attention written with einsums (ptojax.numpy or jax.numpy)."""
    def f(q, k, v):
        s = np_.einsum("...qd,...kd->...qk", q, k) / math.sqrt(q.shape[-1])
        if causal:
            s = np_.where(np_.tril(np_.ones(s.shape[-2:], bool)), s, -1e30)
        return np_.einsum("...qk,...kd->...qd", softmax(s, axis=-1), v)
    return f


def dpa(nn, causal):
    return lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=causal)


def square_loss(np_, att):
    return lambda q, k, v: np_.sum(att(q, k, v) ** 2)


def tiled_kernels(fn, *args, seq=T, heads=N):
    """The tile kernels' names and whether any value between them is as large as the
    S x S scores of all query heads."""
    ir = pto.make_ir(pto.tile(fn))(*args)
    names = [e.params["name"] for e in ir.ir.eqns if e.prim is tile_kernel_p]
    scores = heads * seq * seq
    big = any(int(np.prod(v.type.shape)) >= scores for e in ir.ir.eqns for v in e.outputs)
    return names, big


def rand(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def check_gradient(jax, make, args, argnums=(0, 1, 2), seq=T, heads=N):
    """The tiled gradient runs as the three flash kernels only, no S x S in GM, and equals
    jax.grad of the same math."""
    grad = pto.grad(make(pto), argnums=argnums)
    names, big = tiled_kernels(grad, *args, seq=seq, heads=heads)
    assert sorted(n for n in names if "flash" in n) == sorted(FLASH)
    assert not big and not any("matmul" in n for n in names)
    expected = jax.jit(jax.grad(make(jax), argnums=argnums))(*args)   # (one compile, not
    for got, want in zip(pto.tile(grad)(*args), expected):              # one per eager op)
        assert_close(got, np.asarray(want), scale=16)


def _plain(causal):
    def make(lib):
        np_ = pnp if lib is pto else lib.numpy
        return square_loss(np_, plain_attention(np_, lib.nn.softmax, causal))
    return make


def _dpa(causal):
    def make(lib):
        return square_loss(pnp if lib is pto else lib.numpy, dpa(lib.nn, causal))
    return make


@pytest.mark.parametrize("causal", [True, False])
def test_plain_attention_bnth_ragged(jax, causal):
    check_gradient(jax, _plain(causal), rand(*[(B, N, T, H)] * 3))


@pytest.mark.parametrize("causal", [True, False])
def test_dot_product_attention_btnh_ragged(jax, causal):
    check_gradient(jax, _dpa(causal), rand(*[(B, T, N, H)] * 3, seed=1))


@pytest.mark.parametrize("causal", [True, False])
def test_grouped_query_attention(jax, causal):
    """Four query heads share two key/value heads: dK and dV sum over each group."""
    q, k, v = rand((B, 32, 4, H), (B, 32, 2, H), (B, 32, 2, H), seed=2)
    check_gradient(jax, _dpa(causal), (q, k, v), seq=32, heads=4)


def test_under_vmap_and_jit(jax):
    x = rand(*[(2, N, 32, H)] * 3, seed=3)
    make = _plain(True)
    grad = pto.vmap(pto.jit(pto.grad(make(pto), argnums=(0, 1, 2))))
    names, big = tiled_kernels(grad, *x, seq=32, heads=2 * N)
    assert sorted(n for n in names if "flash" in n) == sorted(FLASH) and not big
    expected = jax.jit(jax.vmap(jax.grad(make(jax), argnums=(0, 1, 2))))(*x)
    for got, want in zip(pto.jit(pto.tile(grad))(*x), expected):
        assert_close(got, np.asarray(want), scale=16)


def test_a_ragged_forward_masks_the_padded_keys(jax):
    """Without a causal mask the padded keys of the last block are masked in the forward
    (a zero key would take a share of every row's softmax)."""
    q, k, v = rand((B, N, 24, H), (B, N, T, H), (B, N, T, H), seed=4)
    fn = plain_attention(pnp, pto.nn.softmax, causal=False)
    names, _ = tiled_kernels(fn, q, k, v)
    assert names == ["flash_attention_forward"]
    expected = jax.jit(plain_attention(jax.numpy, jax.nn.softmax, False))(q, k, v)
    assert_close(pto.tile(fn)(q, k, v), np.asarray(expected), scale=8)


def test_probabilities_also_used_elsewhere_are_not_attention(jax):
    """The softmax output feeds the loss besides ``p @ v``: its gradient is not attention's
    (p's own cotangent joins), so it stays unfused and right."""
    def make(lib):
        np_ = pnp if lib is pto else lib.numpy

        def loss(q, k, v):
            p = lib.nn.softmax(np_.einsum("...qd,...kd->...qk", q, k), axis=-1)
            return np_.sum(np_.einsum("...qk,...kd->...qd", p, v) ** 2) + np_.sum(p * p)
        return loss
    args = rand(*[(B, N, 32, H)] * 3, seed=5)
    grad = pto.grad(make(pto), argnums=(0, 1, 2))
    names, big = tiled_kernels(grad, *args, seq=32)
    assert not set(FLASH) & set(names) and big
    expected = jax.jit(jax.grad(make(jax), argnums=(0, 1, 2)))(*args)
    for got, want in zip(pto.tile(grad)(*args), expected):
        assert_close(got, np.asarray(want), scale=16)


def test_jit_of_the_tiled_attention_keeps_the_kernel_bodies(jax):
    """pto.jit's IR clean-ups leave tile kernel bodies alone: CSE once merged the flash
    forward's zero P with the zero scores a loop had taken over (a carry updates its
    operand's buffer), so from four key blocks on the output was off by ~2%."""
    q, k, v = rand(*[(1, 256, 16)] * 3, seed=6)
    fn = plain_attention(pnp, pto.nn.softmax, causal=False)
    expected = jax.jit(plain_attention(jax.numpy, jax.nn.softmax, False))(q, k, v)
    assert_close(pto.jit(pto.tile(fn))(q, k, v), np.asarray(expected), scale=8)
