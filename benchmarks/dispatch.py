"""Dispatch overheads vs JAX, in one process (python benchmarks/dispatch.py).

1. a cached jit call of a 3-op function on f32[8], numpy inputs on both sides (target <= 1.0x)
2. the same with pto.Array / jax.Array inputs                                  (reference)
3. a cached call with a params pytree of 12 arrays (6 layers of (w, b) in a dict of
   namedtuples), a numpy batch and a Python float; the function reads one layer    (<= 1.0x)
4. an SGD update of that pytree (24 elementwise ops, 12 outputs)               (reference)
5. the first call (trace + compile) of an MLP forward                          (target <= 0.3x)
6. an eager pnp op vs an eager jax.numpy op                                    (target <= 0.5x)

The machine these run on may be shared: run it a few times and read the ratios as ranges.
"""
from __future__ import annotations

import collections
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import best_time, once, report  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import ptojax as pto  # noqa: E402
import ptojax.numpy as pnp  # noqa: E402


def cached_small_call():
    x = np.ones((8,), np.float32)
    y = np.ones((8,), np.float32)
    pf = pto.jit(lambda a, b: pnp.tanh(a * b + 1.0))
    jf = jax.jit(lambda a, b: jnp.tanh(a * b + 1.0))
    ours = best_time(lambda: pf(x, y))
    theirs = best_time(lambda: jf(x, y).block_until_ready())
    report("cached jit call, 3 ops on f32[8], numpy in", ours, theirs, 1.0)
    px, py = pnp.asarray(x), pnp.asarray(y)
    jx, jy = jnp.asarray(x), jnp.asarray(y)
    ours = best_time(lambda: pf(px, py))
    theirs = best_time(lambda: jf(jx, jy).block_until_ready())
    return report("cached jit call, 3 ops on f32[8], arrays in", ours, theirs)


Layer = collections.namedtuple("Layer", "w b")


def params_pytree(module):
    rng = np.random.default_rng(0)
    return {f"layer{i}": Layer(module.asarray(rng.standard_normal((8, 8)).astype(np.float32)),
                               module.asarray(np.zeros(8, np.float32))) for i in range(6)}


def cached_pytree_call():
    x = np.ones((4, 8), np.float32)
    pp, jp = params_pytree(pnp), params_pytree(jnp)

    def first_layer(m):
        return lambda params, x, scale: m.tanh(x @ params["layer0"].w + params["layer0"].b) \
            * scale
    pf, jf = pto.jit(first_layer(pnp)), jax.jit(first_layer(jnp))
    ours = best_time(lambda: pf(pp, x, 0.5))
    theirs = best_time(lambda: jf(jp, x, 0.5).block_until_ready())
    report("cached call, 12-array params pytree", ours, theirs, 1.0)

    def sgd(tree_map):
        return lambda params, grads, lr: tree_map(lambda p, g: p - lr * g, params, grads)
    pf, jf = pto.jit(sgd(pto.tree_util.tree_map)), jax.jit(sgd(jax.tree_util.tree_map))
    ours = best_time(lambda: pf(pp, pp, 0.1))
    theirs = best_time(lambda: jax.block_until_ready(jf(jp, jp, 0.1)))
    return report("SGD update of the 12-array pytree", ours, theirs)


def mlp_params(seed, sizes, module):
    rng = np.random.default_rng(seed)
    return [(module.asarray((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
             module.asarray(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp(params, x, np_module):
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i < len(params) - 1:
            x = np_module.tanh(x)
    return x


def first_call_mlp():
    sizes = [784, 512, 512, 10]
    x = np.ones((128, 784), np.float32)
    pp, jp = mlp_params(0, sizes, pnp), mlp_params(0, sizes, jnp)
    times = []
    for trial in range(3):  # a fresh function each time: nothing cached
        pf = pto.jit(lambda p, x: mlp(p, x, pnp))
        jf = jax.jit(lambda p, x: mlp(p, x, jnp))
        times.append((once(lambda: pf(pp, x)),
                      once(lambda: jf(jp, x).block_until_ready())))
    ours, theirs = min(t[0] for t in times), min(t[1] for t in times)
    return report("first call (trace+compile) MLP forward", ours, theirs, 0.3)


def eager_op():
    x = np.ones((8,), np.float32)
    px, jx = pnp.asarray(x), jnp.asarray(x)
    ours = best_time(lambda: pnp.add(px, px))
    theirs = best_time(lambda: jnp.add(jx, jx).block_until_ready())
    return report("eager add on f32[8]", ours, theirs, 0.5, best_time(lambda: np.add(x, x)))


if __name__ == "__main__":
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; numpy {np.__version__}")
    cached_small_call()
    cached_pytree_call()
    first_call_mlp()
    eager_op()
