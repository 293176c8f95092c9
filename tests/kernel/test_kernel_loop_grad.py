"""Automatic reverse mode of pto.kernel.fori loops with run-time bounds (kernel/loop_autodiff.py:
the tangent loop runs backwards, recomputing each step's primal carries), against JAX on the
same math: a non-linear carry over a per-program number of blocks, and the causal flash
attention forward kernel (whose loops stop at the diagonal) differentiated without its
backward kernels; and the example's flash forward kernel, causal (run-time bounds) and not
(its static key loop unrolled in the derivative), differentiated automatically on the tile
interpreter and both host builds (the PTO-faithful one checking every ordering)."""
import importlib.util
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from host_cases import host_jit

K = pto.kernel
N, B, C = 4, 8, 16

PATH = Path(__file__).resolve().parents[2] / "examples" / "flash_attention.py"
_spec = importlib.util.spec_from_file_location("flash_attention", PATH)
fa = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fa)


@K(out_shape=pto.ShapeDtypeStruct((N * B, C), np.float32), grid=(N,),
   in_specs=[pto.BlockSpec((N * B, C), lambda i: (0, 0)),
             pto.BlockSpec((B, C), lambda i: (i, 0))],
   out_specs=pto.BlockSpec((B, C), lambda i: (i, 0)))
def running(x_ref, w_ref, o_ref):
    w = w_ref[...]

    def step(j, acc):
        xj = x_ref[K.ds(j * B, B), :]
        return acc * 0.5 + pnp.tanh(xj * w) * acc + xj
    o_ref[...] = K.fori(0, K.program_id(0) + 1, step, w)


def jax_running(jnp):
    def f(x, w):
        outs = []
        for i in range(N):
            wi = w[i * B:(i + 1) * B]
            acc = wi
            for j in range(i + 1):
                xj = x[j * B:(j + 1) * B]
                acc = acc * 0.5 + jnp.tanh(xj * wi) * acc + xj
            outs.append(acc)
        return jnp.concatenate(outs)
    return f


def _loss(f, np_):
    return lambda *args: np_.sum(f(*args) ** 2)


def test_a_non_linear_carry_over_run_time_bounds_matches_jax(jax, jnp):
    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal((N * B, C)).astype(np.float32) * 0.5 for _ in range(2))
    expected = jax.grad(_loss(jax_running(jnp), jnp), argnums=(0, 1))(x, w)
    grad = pto.grad(_loss(running, pnp), argnums=(0, 1))
    for got in (grad(x, w), pto.tile(grad)(x, w), host_jit(grad)(x, w)):
        for g, e in zip(got, expected):
            assert_close(g, np.asarray(e), scale=8)


def _jax_attention(jax, jnp, causal, s, d):
    def attention(q, k, v):
        scores = q @ k.swapaxes(-1, -2) / np.sqrt(d)
        if causal:
            scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, -1e30)
        return jax.nn.softmax(scores, axis=-1) @ v
    return attention


FH, FS, FD, FB = 1, 32, 16, 16      # two key blocks: the non-causal key loop is static


def _auto_flash_grads(q, k, v, causals=(False, True)):
    """Gradients of the example's flash forward kernel, causal and not, with no backward
    kernel given: the derivative kernels are made from the forward's body."""
    out = {}
    for causal in causals:
        fwd = fa.forward_kernel(FH, FS, FD, causal, FB, FB)
        out[causal] = pto.grad(_loss(lambda q, k, v: fwd(q, k, v)[0], pnp),
                               argnums=(0, 1, 2))(q, k, v)
    return out


@pytest.fixture(scope="module")
def auto_flash():
    rng = np.random.default_rng(2)
    qkv = [rng.standard_normal((FH, FS, FD)).astype(np.float32) * 0.5 for _ in range(3)]
    return qkv, {"reference": _auto_flash_grads(*qkv),
                 "tile interpreter": pto.tile(_auto_flash_grads)(*qkv),
                 "PTO build": host_jit(partial(_auto_flash_grads, causals=(False,)),
                                       check_sync=True, kernels="pto")(*qkv),
                 "fused build": host_jit(_auto_flash_grads, kernels="fused")(*qkv)}


JAX_FLASH_GRADS = {}


def _jax_flash_grads(jax, jnp, causal, qkv):
    """JAX's gradients of the attention loss (once per ``causal`` for the module, jitted)."""
    if causal not in JAX_FLASH_GRADS:
        JAX_FLASH_GRADS[causal] = jax.jit(jax.grad(
            _loss(_jax_attention(jax, jnp, causal, FS, FD), jnp), argnums=(0, 1, 2)))(*qkv)
    return JAX_FLASH_GRADS[causal]


@pytest.mark.parametrize("causal, run", [
    (causal, run) for causal in (False, True)
    for run in ("reference", "tile interpreter", "PTO build", "fused build")
    # (the causal derivative on the PTO build: test_the_causal_flash_derivative_names_...)
    if (causal, run) != (True, "PTO build")])
def test_the_example_flash_forward_differentiates_automatically_on_every_build(
        auto_flash, jax, jnp, causal, run):
    qkv, runs = auto_flash
    for g, e in zip(runs[run][causal], _jax_flash_grads(jax, jnp, causal, qkv)):
        assert_close(g, np.asarray(e), scale=8)


def test_the_causal_flash_derivative_names_the_flag_limit():
    """The causal forward's two-copy carries (its first and last blocks as one-step loops)
    give a derivative kernel with 4 cube -> vector and 5 vector -> cube transfers live at
    once: 9 flag pairs of the 8 there are. The PTO build says so at the user's line."""
    q = np.ones((FH, FS, FD), np.float32)
    grads = partial(_auto_flash_grads, causals=(True,))
    with pytest.raises(pto.errors.TileError, match="cube <-> vector transfers") as info:
        host_jit(grads, check_sync=True, kernels="pto")(q, q, q)
    assert "test_kernel_loop_grad.py" in str(info.value)


def test_a_store_inside_a_loop_with_run_time_bounds_is_refused_at_its_line():
    @K(out_shape=pto.ShapeDtypeStruct((N * B, C), np.float32), grid=(N,),
       in_specs=[pto.BlockSpec((B, C), lambda i: (i, 0))],
       out_specs=pto.BlockSpec((B, C), lambda i: (i, 0)))
    def keeps_storing(x_ref, o_ref):
        def step(j, acc):
            o_ref[...] = acc
            return acc * 2.0
        K.fori(0, K.program_id(0) + 1, step, x_ref[...])
    x = np.ones((N * B, C), np.float32)
    with pytest.raises(pto.errors.UnsupportedError, match="store inside") as info:
        pto.grad(lambda x: pnp.sum(keeps_storing(x)))(x)
    assert "test_kernel_loop_grad.py" in str(info.value)
