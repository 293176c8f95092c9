"""Reverse-mode autodiff vs JAX, in one process (python benchmarks/autodiff.py).

``jit(grad(mlp_loss))`` for an MLP 784-512-512-10 (tanh, softmax cross-entropy with integer
labels) at batch 128, float32:

1. steady state: a cached call                        (target <= 1.1x JAX)
2. first call: trace + differentiate + compile + run  (target <= 0.3x JAX)

each with the numpy executor (runtime/executable.py) and with jit's default backend.

Also printed: the flops of the gradient IR relative to the forward IR.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import interleaved_best, once, report  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import ptojax as pto  # noqa: E402
import ptojax.numpy as pnp
from ptojax.lower.host import backend as host_backend  # noqa: E402
from ptojax import nn  # noqa: E402
from ptojax.tools.flops import count_flops  # noqa: E402

SIZES = [784, 512, 512, 10]
BATCH = 128


def mlp_loss(params, x, labels, np_, nn_):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = np_.tanh(h)
    logp = nn_.log_softmax(h)
    return -np_.mean(np_.take_along_axis(logp, labels[:, None], axis=1))


def pto_loss(params, x, labels):
    return mlp_loss(params, x, labels, pnp, nn)


def jax_loss(params, x, labels):
    return mlp_loss(params, x, labels, jnp, jax.nn)


def inputs(module):
    rng = np.random.default_rng(0)
    params = [(module.asarray((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
               module.asarray(np.zeros(n, np.float32))) for m, n in zip(SIZES[:-1], SIZES[1:])]
    x = module.asarray(rng.standard_normal((BATCH, SIZES[0])).astype(np.float32))
    labels = module.asarray(rng.integers(0, SIZES[-1], BATCH).astype(np.int32))
    return params, x, labels


def check_agreement():
    ours = pto.jit(pto.grad(pto_loss), backend="interpreter")(*inputs(pnp))
    theirs = jax.jit(jax.grad(jax_loss))(*inputs(jnp))
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)


def settle(fn, args):
    """Steady state: background compiles finished and the tiers' race decided."""
    fn(*args)
    host_backend.wait_for_compiles(600)
    for _ in range(2 * host_backend.TRIAL_CALLS + 1):
        fn(*args)


def steady_state(backend=None):
    pf = pto.jit(pto.grad(pto_loss), backend=backend)
    jf = jax.jit(jax.grad(jax_loss))
    p_args, j_args = inputs(pnp), inputs(jnp)
    settle(pf, p_args)
    ours, theirs = interleaved_best(
        [lambda: pf(*p_args), lambda: jax.block_until_ready(jf(*j_args))])
    return report(f"jit(grad(mlp_loss){_where(backend)}) steady state", ours, theirs, 1.1)


def first_call(backend=None):
    p_args, j_args = inputs(pnp), inputs(jnp)
    times = []
    for _ in range(3):  # a fresh function each time: nothing cached
        pf = pto.jit(pto.grad(lambda *a: pto_loss(*a)), backend=backend)
        jf = jax.jit(jax.grad(lambda *a: jax_loss(*a)))
        times.append((once(lambda: pf(*p_args)),
                      once(lambda: jax.block_until_ready(jf(*j_args)))))
    ours, theirs = min(t[0] for t in times), min(t[1] for t in times)
    return report(f"jit(grad(mlp_loss){_where(backend)}) first call", ours, theirs, 0.3)


def _where(backend):
    return "" if backend is None else f", backend={backend!r}"


def flop_ratio():
    args = inputs(pnp)
    forward = count_flops(pto.jit(pto_loss).lower(*args).optimized_ir)
    gradient = count_flops(pto.jit(pto.grad(pto_loss)).lower(*args).optimized_ir)
    print(f"{'gradient IR flops / forward IR flops':<44} {gradient / forward:5.2f}x "
          f"({gradient / 1e6:.1f} / {forward / 1e6:.1f} MFLOP)")


if __name__ == "__main__":
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; numpy {np.__version__}; "
          f"MLP {'-'.join(map(str, SIZES))}, batch {BATCH}, float32")
    # The numpy executor first: the default backend compiles kernels in background threads,
    # which would compete with whatever is measured after it.
    check_agreement()
    steady_state("interpreter")
    first_call("interpreter")
    flop_ratio()
    first_call()
    steady_state()
