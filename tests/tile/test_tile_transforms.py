"""Tiling composes with grad and vmap: pto.tile(pto.grad(f)) and pto.tile(pto.vmap(f)) match
JAX, and the cotangent patterns of softmax/normalizations/matmul epilogues fuse."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close
import ptojax.numpy as pnp
from ptojax.tile.kernel import tile_kernel_p


def _kernels(fn, *args):
    closed = pto.make_ir(pto.tile(fn))(*args)
    return [e for e in closed.ir.eqns if e.prim is tile_kernel_p], closed


@pytest.fixture
def data(rng):
    x = rng.normal(size=(45, 70)).astype(np.float32)
    g = rng.normal(size=70).astype(np.float32)
    b = rng.normal(size=70).astype(np.float32)
    t = rng.normal(size=(45, 70)).astype(np.float32)
    return x, g, b, t


def test_grad_of_softmax_loss_is_one_kernel_and_matches_jax(jax, jnp, data):
    x, _, _, t = data
    f = lambda x, t: pnp.sum(pto.nn.softmax(x) * t)
    jf = lambda x, t: jnp.sum(jax.nn.softmax(x) * t)
    ks, _ = _kernels(pto.grad(f), x, t)
    assert len(ks) == 1
    assert_close(pto.tile(pto.grad(f))(x, t), jax.jit(jax.grad(jf))(x, t), rtol=2e-5, atol=2e-5, check_dtype=False)


def test_grad_of_layer_norm_fuses_dx_dgamma_dbeta(jax, jnp, data):
    x, g, b, t = data

    def f(x, g, b):
        return pnp.sum(pto.nn.layer_norm(x, g, b) * t)

    def jf(x, g, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return jnp.sum(((x - mu) / jnp.sqrt(var + 1e-5) * g + b) * t)
    grad = pto.grad(f, argnums=(0, 1, 2))
    ks, _ = _kernels(grad, x, g, b)
    assert len(ks) == 1 and len(ks[0].outputs) == 3       # dx rows + dgamma/dbeta columns
    assert_close(pto.tile(grad)(x, g, b), jax.jit(jax.grad(jf, argnums=(0, 1, 2)))(x, g, b), rtol=5e-5, atol=5e-5, check_dtype=False)


def test_grad_of_rms_norm_and_log_softmax(jax, jnp, data):
    x, g, _, t = data
    f = lambda x, g: pnp.sum(pto.nn.log_softmax(pto.nn.rms_norm(x, g)) * t)

    def jf(x, g):
        y = x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * g
        return jnp.sum(jax.nn.log_softmax(y) * t)
    grad = pto.grad(f, argnums=(0, 1))
    assert_close(pto.tile(grad)(x, g), jax.jit(jax.grad(jf, argnums=(0, 1)))(x, g), rtol=5e-5, atol=5e-5, check_dtype=False)


def test_grad_of_mlp_matches_jax_and_stays_in_kernels(jax, jnp, rng):
    x = rng.normal(size=(32, 40)).astype(np.float32)
    w1 = (rng.normal(size=(40, 48)) * 0.2).astype(np.float32)
    b1 = rng.normal(size=48).astype(np.float32)
    w2 = (rng.normal(size=(48, 10)) * 0.2).astype(np.float32)

    def f(w1, b1, w2):
        h = pto.nn.gelu(pnp.matmul(x, w1) + b1)
        return -pnp.mean(pto.nn.log_softmax(pnp.matmul(h, w2)))

    def jf(w1, b1, w2):
        h = jax.nn.gelu(x @ w1 + b1, approximate=True)
        return -jnp.mean(jax.nn.log_softmax(h @ w2))
    grad = pto.grad(f, argnums=(0, 1, 2))
    ks, closed = _kernels(grad, w1, b1, w2)
    assert all(e.prim is tile_kernel_p for e in closed.ir.eqns)
    assert any(k.params["kind"] == "cube" for k in ks)
    assert_close(pto.tile(grad)(w1, b1, w2), jax.jit(jax.grad(jf, argnums=(0, 1, 2)))(w1, b1, w2), rtol=1e-4, atol=1e-4, check_dtype=False)


def test_vmap_of_softmax_and_layer_norm(jax, jnp, rng):
    x = rng.normal(size=(3, 17, 50)).astype(np.float32)
    ks, _ = _kernels(pto.vmap(pto.nn.softmax), x)
    assert len(ks) == 1
    assert_close(pto.tile(pto.vmap(pto.nn.softmax))(x), jax.vmap(jax.nn.softmax)(x), rtol=2e-5, atol=2e-5, check_dtype=False)

    def jln(x):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
    assert_close(pto.tile(pto.vmap(lambda v: pto.nn.layer_norm(v)))(x), jax.vmap(jln)(x), rtol=5e-5, atol=5e-5, check_dtype=False)


def test_vmap_of_grad(jax, jnp, rng):
    x = rng.normal(size=(4, 9, 30)).astype(np.float32)
    f = lambda v: pnp.sum(pto.nn.softmax(v) ** 2)
    jf = lambda v: jnp.sum(jax.nn.softmax(v) ** 2)
    assert_close(pto.tile(pto.vmap(pto.grad(f)))(x), jax.jit(jax.vmap(jax.grad(jf)))(x), rtol=2e-5, atol=2e-5, check_dtype=False)


def test_differentiating_tiled_code_says_to_tile_last(data):
    x = data[0]
    with pytest.raises(pto.errors.UnsupportedError, match=r"pto.tile\(pto.grad"):
        pto.grad(lambda v: pnp.sum(pto.tile(pto.nn.softmax)(v)))(x)
