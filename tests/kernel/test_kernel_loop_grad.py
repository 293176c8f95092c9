"""Automatic reverse mode of pto.kernel.fori loops with run-time bounds (kernel/loop_autodiff.py:
the tangent loop runs backwards, recomputing each step's primal carries), against JAX on the
same math: a non-linear carry over a per-program number of blocks, and the causal flash
attention forward kernel (whose loops stop at the diagonal) differentiated without its
backward kernels."""
import importlib.util
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


def test_the_causal_flash_forward_kernel_differentiates_automatically(jax, jnp):
    h, s, d = 1, 64, 16
    fwd = fa.forward_kernel(h, s, d, True, 16, 16)
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((h, s, d)).astype(np.float32) * 0.5 for _ in range(3))

    def attention(q, k, v):
        scores = q @ k.swapaxes(-1, -2) / np.sqrt(d)
        scores = jnp.where(jnp.tril(jnp.ones((s, s), bool)), scores, -1e30)
        return jax.nn.softmax(scores, axis=-1) @ v
    expected = jax.grad(_loss(attention, jnp), argnums=(0, 1, 2))(q, k, v)
    got = pto.grad(_loss(lambda q, k, v: fwd(q, k, v)[0], pnp), argnums=(0, 1, 2))(q, k, v)
    for g, e in zip(got, expected):
        assert_close(g, np.asarray(e), scale=8)


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
