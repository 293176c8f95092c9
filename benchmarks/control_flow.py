"""Control flow vs JAX, in one process (python benchmarks/control_flow.py).

A scan over small arrays: the forward pass of JAX's ``examples/hmm_em.py`` (25 states, 60
symbols, 2000 steps) and its gradient, whose loops the cpu backend compiles whole
(``ptojax/lower/host/native_loop.py``). Steady state, target <= 1.0x JAX; and cold: a fresh
function's first call, and when its compiled loop took over.

A tanh RNN written with ``lax.scan`` (hidden 256, input 256, 100 steps, batch 32, float32):
``jit(value_and_grad(loss))`` with the gradient w.r.t. the weights, the initial state and the
inputs — the forward scan stacks its residuals, the backward pass is a reverse scan, and the
carry-free matmuls (``x @ wx``, the weight gradients) run once over all steps outside both
loops (loop fission, ``ptojax/control_flow/scan_fission.py``).
Steady state (a cached call), target <= 1.5x JAX, with the numpy executor and with jit's
default backend (the loops run through their numpy impls either way).
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import interleaved_best, report  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import ptojax as pto  # noqa: E402
import ptojax.numpy as pnp  # noqa: E402

HIDDEN, INPUT, STEPS, BATCH = 256, 256, 100, 32
TARGET = 1.5


def rnn_loss(params, h0, xs, np_, lax_):
    wx, wh, b = params

    def step(h, x):
        h = np_.tanh(x @ wx + h @ wh + b)
        return h, h

    h, hs = lax_.scan(step, h0, xs)
    return np_.mean(hs ** 2) + np_.mean(h)


def pto_loss(params, h0, xs):
    return rnn_loss(params, h0, xs, pnp, pto.lax)


def jax_loss(params, h0, xs):
    return rnn_loss(params, h0, xs, jnp, jax.lax)


def inputs(module):
    rng = np.random.default_rng(0)
    params = (module.asarray((rng.standard_normal((INPUT, HIDDEN)) / 16).astype(np.float32)),
              module.asarray((rng.standard_normal((HIDDEN, HIDDEN)) / 16).astype(np.float32)),
              module.asarray(np.zeros(HIDDEN, np.float32)))
    h0 = module.asarray(rng.standard_normal((BATCH, HIDDEN)).astype(np.float32))
    xs = module.asarray(rng.standard_normal((STEPS, BATCH, INPUT)).astype(np.float32))
    return params, h0, xs


GRAD_ARGS = (0, 1, 2)


def check_agreement():
    ours = pto.jit(pto.value_and_grad(pto_loss, GRAD_ARGS), backend="interpreter")(
        *inputs(pnp))
    theirs = jax.jit(jax.value_and_grad(jax_loss, GRAD_ARGS))(*inputs(jnp))
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)


def steady_state(backend=None):
    pf = pto.jit(pto.value_and_grad(pto_loss, GRAD_ARGS), backend=backend)
    jf = jax.jit(jax.value_and_grad(jax_loss, GRAD_ARGS))
    p_args, j_args = inputs(pnp), inputs(jnp)
    pf(*p_args)
    _wait_for_compiled(pf, p_args)
    ours, theirs = interleaved_best(
        [lambda: pf(*p_args), lambda: jax.block_until_ready(jf(*j_args))], rounds=10, min_time=0.1)
    where = "" if backend is None else f", backend={backend!r}"
    return report(f"jit(value_and_grad(rnn){where}) steady state", ours, theirs, TARGET)


def _wait_for_compiled(jitted, args, timeout=120.0):
    """Let the default backend's background compile finish before timing (it would compete
    for the cores otherwise); ``wait_for_compiles`` also starts a build still waiting for its
    program to be hot (``lower/host/hotness.py``), which polling the status never would."""
    from ptojax.lower.host.backend import wait_for_compiles
    wait_for_compiles(timeout)
    jitted(*args)


STATES, SYMBOLS, LENGTH = 25, 60, 2000


def hmm_log_normalizer(lib, params, seq):
    log_pi, log_A, log_B = params

    def marginalize(log_alpha, obs):
        log_alpha = lib.scipy.special.logsumexp(log_alpha[:, None] + log_A, axis=0) \
            + log_B[:, obs]
        return log_alpha, None
    log_alpha, _ = lib.lax.scan(marginalize, log_pi, seq)
    return lib.scipy.special.logsumexp(log_alpha)


def hmm_inputs(module):
    rng = np.random.default_rng(1)
    params = [module.asarray(rng.standard_normal(s).astype(np.float32))
              for s in ((STATES,), (STATES, STATES), (STATES, SYMBOLS))]
    return params, module.asarray((np.arange(LENGTH) * 7 % SYMBOLS).astype(np.int32))


def hmm_cases():
    from ptojax.lower.host.backend import wait_for_compiles
    import jax.scipy.special  # noqa: F401  (jax.scipy for the model)
    for name, make in (("hmm forward scan", lambda lib: lambda p, s: hmm_log_normalizer(lib, p, s)),
                       ("grad(hmm forward scan)", lambda lib: lib.grad(
                           lambda p, s: hmm_log_normalizer(lib, p, s)))):
        pf, jf = pto.jit(make(pto)), jax.jit(make(jax))
        p_args, j_args = hmm_inputs(pnp), hmm_inputs(jnp)
        start = time.perf_counter()
        pto.block_until_ready(pf(*p_args))
        ours_first = time.perf_counter() - start
        start = time.perf_counter()
        jax.block_until_ready(jf(*j_args))
        jax_first = time.perf_counter() - start
        start = time.perf_counter()
        wait_for_compiles(120)
        took_over = ours_first + time.perf_counter() - start
        pf(*p_args)
        ours, theirs = interleaved_best(
            [lambda: pf(*p_args), lambda: jax.block_until_ready(jf(*j_args))], rounds=10,
            min_time=0.1)
        report(f"{name} steady state", ours, theirs, 1.0)
        report(f"{name} first call (cold)", ours_first, jax_first)
        print(f"  {name}: compiled loop in use {took_over:.2f} s after the first call began")


if __name__ == "__main__":
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; numpy {np.__version__}; "
          f"RNN hidden {HIDDEN}, input {INPUT}, {STEPS} steps, batch {BATCH}, float32")
    check_agreement()
    ratio = steady_state("interpreter")
    steady_state()
    print(f"ratio (numpy executor) {ratio:.2f}x JAX, target <= {TARGET}x")
    hmm_cases()
