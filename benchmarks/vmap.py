"""Per-example gradients vs JAX, in one process (python benchmarks/vmap.py).

``jit(vmap(grad(loss)), in_axes=(None, 0, 0))`` for an MLP 784-512-512-10 (tanh, softmax
cross-entropy) over a batch of 128 float32 examples: every example gets its own gradient of
every weight. Measured in the steady state (a cached call), against
``jax.jit(jax.vmap(jax.grad(loss)))`` on the same inputs, in alternating rounds so both see
the same machine load:

1. with the numpy executor (runtime/executable.py)        (target <= 1.2x JAX)
2. with jit's default backend (host-compiled kernels once ready)

Also printed: the size of the batched IR next to the per-example gradient's, and DP-SGD's
private update (JAX's examples/differentially_private_sgd.py: a stax conv net, per-example
gradients each clipped by its global norm, summed, noised; jitted) on 28x28 images, batch
128 — per-example convolution weight gradients are convolutions with a feature group per
example. And a Gram matrix by nested vmap (JAX's examples/kernel_lsq.py style:
``vmap(vmap(k, (None, 0)), (0, None))`` of an RBF kernel ``exp(-dot(a - b, a - b))``), one
batched dot_general as in JAX's jaxpr.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import interleaved_best, report  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import ptojax as pto  # noqa: E402
import ptojax.numpy as pnp  # noqa: E402
from ptojax.lower.host.backend import wait_for_compiles  # noqa: E402

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


def inputs(module, sizes, seed=0):
    rng = np.random.default_rng(seed)
    params = [(module.asarray((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
               module.asarray(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]
    x = module.asarray(rng.standard_normal((BATCH, sizes[0])).astype(np.float32))
    y = module.asarray(rng.integers(0, sizes[-1], BATCH).astype(np.int32))
    return params, x, y


def per_example_grad(sizes, backend=None):
    loss = mlp_loss(pnp, pto.nn, sizes[-1])
    return pto.jit(pto.vmap(pto.grad(loss), in_axes=(None, 0, 0)), backend=backend)


def jax_per_example_grad(sizes):
    return jax.jit(jax.vmap(jax.grad(mlp_loss(jnp, jax.nn, sizes[-1])), in_axes=(None, 0, 0)))


def steady_state(sizes, backend=None):
    pf, jf = per_example_grad(sizes, backend), jax_per_example_grad(sizes)
    p_args, j_args = inputs(pnp, sizes), inputs(jnp, sizes)
    got, want = pf(*p_args), jf(*j_args)
    for a, b in zip(pto.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)
    if backend is None:  # let the background compile finish: measure the tier users keep
        wait_for_compiles()
        pf(*p_args)
    ours, theirs = interleaved_best(
        [lambda: pf(*p_args), lambda: jax.block_until_ready(jf(*j_args))], rounds=10)
    where = "numpy executor" if backend == "interpreter" else "default backend"
    status = _status(pf)
    return report(f"per-example grads, {where}{status}", ours, theirs,
                  TARGET if backend == "interpreter" else None)


def _status(jitted):
    (entry,) = {id(e): e for e in jitted._cache.values()}.values()
    status = getattr(entry.executable, "status", None)
    return f" ({status})" if status else ""


def ir_sizes(sizes):
    params, x, y = inputs(pnp, sizes)
    grad = pto.grad(mlp_loss(pnp, pto.nn, sizes[-1]))
    single = pto.make_ir(grad)(params, x[0], y[0])
    batched = pto.make_ir(pto.vmap(grad, in_axes=(None, 0, 0)))(params, x, y)
    print(f"{'IR equations: one example / whole batch':<44} {len(single.eqns)} / "
          f"{len(batched.eqns)} (no per-example loop)")


def dp_sgd_update(lib, np_, stax, optimizers, batch_size, clip=1.5, noise=1.1):
    """JAX's differentially_private_sgd example's model and private update, on ``lib``."""
    init, predict = stax.serial(
        stax.Conv(16, (8, 8), padding="SAME", strides=(2, 2)), stax.Relu,
        stax.MaxPool((2, 2), (1, 1)),
        stax.Conv(32, (4, 4), padding="VALID", strides=(2, 2)), stax.Relu,
        stax.MaxPool((2, 2), (1, 1)), stax.Flatten, stax.Dense(32), stax.Relu, stax.Dense(10))

    def loss(params, batch):
        inputs, targets = batch
        return -np_.mean(np_.sum(stax.logsoftmax(predict(params, inputs)) * targets, axis=1))

    def clipped_grad(params, single_example_batch):
        leaves, treedef = lib.tree_util.tree_flatten(lib.grad(loss)(params, single_example_batch))
        norm = np_.linalg.norm(np_.array([np_.linalg.norm(g.ravel()) for g in leaves]))
        divisor = np_.maximum(norm / clip, 1.0)
        return lib.tree_util.tree_unflatten(treedef, [g / divisor for g in leaves])

    def private_grad(params, batch, rng):
        per_example = lib.vmap(clipped_grad, (None, 0))(params, batch)
        leaves, treedef = lib.tree_util.tree_flatten(per_example)
        rngs = lib.random.split(rng, len(leaves))
        noised = [(g.sum(0) + clip * noise * lib.random.normal(r, g.shape[1:])) / batch_size
                  for r, g in zip(rngs, leaves)]
        return lib.tree_util.tree_unflatten(treedef, noised)

    opt_init, opt_update, get_params = optimizers.sgd(0.15)

    @lib.jit
    def private_update(rng, i, opt_state, batch):
        rng = lib.random.fold_in(rng, i)
        return opt_update(i, private_grad(get_params(opt_state), batch, rng), opt_state)

    key = lib.random.PRNGKey(0)
    _, params = init(key, (-1, 28, 28, 1))
    return lambda batch: private_update(key, 0, opt_init(params), batch)


def dp_sgd(batch_size=BATCH):
    from jax.example_libraries import optimizers as jopt, stax as jstax
    from ptojax.example_libraries import optimizers as popt, stax as pstax
    rng = np.random.default_rng(0)
    images = rng.random((batch_size, 1, 28, 28, 1)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch_size)][:, None]
    pf = dp_sgd_update(pto, pnp, pstax, popt, batch_size)
    jf = dp_sgd_update(jax, jnp, jstax, jopt, batch_size)
    got, want = pf((images, labels)), jf((images, labels))
    for a, b in zip(pto.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
    wait_for_compiles()
    pf((images, labels))
    ours, theirs = interleaved_best([lambda: pf((images, labels)),
                                    lambda: jax.block_until_ready(jf((images, labels)))], rounds=10)
    return report(f"DP-SGD private update (conv, batch {batch_size})", ours, theirs)


def gram_matrix(n=300, m=400, d=50):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.standard_normal((m, d)).astype(np.float32)

    def gram(lib, np_):
        kernel = lambda a, b: np_.exp(-np_.dot(a - b, a - b) / d)
        return lib.jit(lib.vmap(lib.vmap(kernel, (None, 0)), (0, None)))
    pf, jf = gram(pto, pnp), gram(jax, jnp)
    np.testing.assert_allclose(np.asarray(pf(x, y)), np.asarray(jf(x, y)), rtol=1e-4, atol=1e-6)
    wait_for_compiles()
    pf(x, y)
    ours, theirs = interleaved_best([lambda: pf(x, y), lambda: jax.block_until_ready(jf(x, y))],
                                    rounds=10)
    return report(f"Gram matrix, nested vmap ({n}x{m}, d={d})", ours, theirs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="784,512,512,10",
                        help="layer widths of the MLP, input first (default: %(default)s)")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    print(f"jax {jax.__version__}; numpy {np.__version__}; MLP {'-'.join(map(str, sizes))}, "
          f"batch {BATCH}, float32; {os.cpu_count()} CPUs")
    # The numpy executor first: the default backend compiles kernels in a background thread,
    # which would compete with whatever is measured after it.
    steady_state(sizes, "interpreter")
    steady_state(sizes)
    ir_sizes(sizes)
    dp_sgd()
    gram_matrix()


if __name__ == "__main__":
    main()
