"""Per-example gradients vs JAX, in one process (python benchmarks/vmap.py).

jit(vmap(grad(loss))) of an MLP classifier over a batch of 128 examples: every example gets
its own gradient of every weight. Target: <= 1.2x JAX's time on the same inputs.
Also reported: the batched IR's size next to the unbatched gradient's (no per-example loop).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import best_time, report  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import ptojax as pto  # noqa: E402
import ptojax.numpy as pnp  # noqa: E402

BATCH = 128
TARGET = 1.2


def mlp_loss(np_, nn, classes):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = np_.tanh(h @ w + b)
        w, b = params[-1]
        logits = h @ w + b
        return -np_.sum(nn.log_softmax(logits) * nn.one_hot(y, classes))
    return loss


def problem(sizes, seed=0):
    rng = np.random.default_rng(seed)
    params = [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
               np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((BATCH, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], BATCH).astype(np.int32)
    return params, x, y


def per_example_gradients(sizes):
    params, x, y = problem(sizes)
    ours = pto.jit(pto.vmap(pto.grad(mlp_loss(pnp, pto.nn, sizes[-1])), in_axes=(None, 0, 0)))
    theirs = jax.jit(jax.vmap(jax.grad(mlp_loss(jnp, jax.nn, sizes[-1])),
                              in_axes=(None, 0, 0)))
    p_args = ([(pnp.asarray(w), pnp.asarray(b)) for w, b in params], pnp.asarray(x),
              pnp.asarray(y))
    j_args = ([(jnp.asarray(w), jnp.asarray(b)) for w, b in params], jnp.asarray(x),
              jnp.asarray(y))
    got, want = ours(*p_args), theirs(*j_args)
    for g, w in zip(jax.tree_util.tree_leaves(want), pto.tree_util.tree_leaves(got)):
        np.testing.assert_allclose(np.asarray(w), np.asarray(g), rtol=2e-4, atol=2e-5)
    t_ours = best_time(lambda: ours(*p_args))
    t_jax = best_time(lambda: jax.block_until_ready(theirs(*j_args)))
    name = f"per-example grads, MLP {'-'.join(map(str, sizes))}, batch {BATCH}"
    return report(name, t_ours, t_jax, TARGET)


def ir_sizes(sizes):
    params, x, y = problem(sizes)
    grad = pto.grad(mlp_loss(pnp, pto.nn, sizes[-1]))
    single = pto.make_ir(grad)(params, x[0], y[0])
    batched = pto.make_ir(pto.vmap(grad, in_axes=(None, 0, 0)))(params, x, y)
    print(f"{'':<44} IR: {len(single.eqns)} equations per example, "
          f"{len(batched.eqns)} for the whole batch")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="784,512,512,10",
                        help="layer widths of the MLP, input first (default: %(default)s)")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    ratio = per_example_gradients(sizes)
    ir_sizes(sizes)
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
