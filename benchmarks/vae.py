"""The VAE of JAX's ``examples/mnist_vae.py`` vs JAX, in one process (python benchmarks/vae.py).

The model of that example — a Dense(512)-Relu-Dense(512)-Relu encoder to a 10-d Gaussian
(mean, Softplus scale), a mirror decoder to 784 Bernoulli logits, the negative ELBO, a
momentum optimizer (step 1e-3, mass 0.9), batch 32 — written once over a numpy module, on
synthetic binarized images:

1. a jitted train step (steady state)                                      target <= 1.0x JAX
2. an epoch of ``EPOCH`` steps as one jitted ``fori_loop`` (as the example runs it)   <= 1.0x

Steady state means after the background kernel compiles (``wait_for_compiles``) and a few
warm-up calls. The machine may be shared: run it a few times and read ratios as ranges.
"""
from __future__ import annotations

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

BATCH, HIDDEN, LATENT, PIXELS, EPOCH = 32, 512, 10, 784, 50
STEP_SIZE, MASS = 1e-3, 0.9


class Api:
    """The few names the model needs, from JAX or from ptojax."""

    def __init__(self, lib, np_):
        self.np, self.lax, self.random, self.nn = np_, lib.lax, lib.random, lib.nn
        self.grad, self.jit = lib.grad, lib.jit
        self.tree_map = lib.tree_util.tree_map


def init_params(seed=0):
    rng = np.random.default_rng(seed)

    def dense(m, n):
        return (rng.standard_normal((m, n)).astype(np.float32) * np.float32(1 / np.sqrt(m)),
                np.zeros(n, np.float32))
    encoder = [dense(PIXELS, HIDDEN), dense(HIDDEN, HIDDEN), dense(HIDDEN, LATENT),
               dense(HIDDEN, LATENT)]
    decoder = [dense(LATENT, HIDDEN), dense(HIDDEN, HIDDEN), dense(HIDDEN, PIXELS)]
    return encoder, decoder


def negative_elbo(api, params, key, images):
    np_, nn = api.np, api.nn
    (e1, e2, mean_layer, scale_layer), (d1, d2, d3) = params

    def dense(layer, x):
        return x @ layer[0] + layer[1]
    h = nn.relu(dense(e2, nn.relu(dense(e1, images))))
    mu, sigma = dense(mean_layer, h), nn.softplus(dense(scale_layer, h))
    z = mu + sigma * api.random.normal(key, mu.shape)
    logits = dense(d3, nn.relu(dense(d2, nn.relu(dense(d1, z)))))
    log_likelihood = np_.sum(images * logits - np_.logaddexp(0.0, logits))
    kl = 0.5 * np_.sum(sigma ** 2 + mu ** 2 - 1.0 - 2.0 * np_.log(sigma))
    return -(log_likelihood - kl) / images.shape[0]


def train_step(api, state, key, images):
    params, velocity = state
    grads = api.grad(lambda p: negative_elbo(api, p, key, images))(params)
    velocity = api.tree_map(lambda v, g: MASS * v + g, velocity, grads)
    params = api.tree_map(lambda p, v: p - STEP_SIZE * v, params, velocity)
    return params, velocity


def run_epoch(api, state, key, images):
    def body(i, state):
        batch = api.lax.dynamic_slice_in_dim(images, i * BATCH, BATCH)
        return train_step(api, state, api.random.fold_in(key, i), batch)
    return api.lax.fori_loop(0, EPOCH, body, state)


def setup(api, asarray):
    params = init_params()
    state = api.tree_map(asarray, (params, api.tree_map(np.zeros_like, params)))
    images = (np.random.default_rng(1).random((EPOCH * BATCH, PIXELS)) > 0.5).astype(np.float32)
    return state, api.random.PRNGKey(0), asarray(images)


def bench_case(name, make_fn, target):
    apis = (Api(pto, pnp), Api(jax, jnp))
    fns = [make_fn(api) for api in apis]
    args = [setup(api, asarray) for api, asarray in zip(apis, (pnp.asarray, jnp.asarray))]
    for _ in range(3):
        fns[0](*args[0])
    wait_for_compiles()
    ours, theirs = interleaved_best([lambda fn=fn, a=a: jax.block_until_ready(fn(*a))
                                     for fn, a in zip(fns, args)], rounds=15, min_time=0.2)
    return report(name, ours, theirs, target)


def main():
    print(f"jax {jax.__version__}; numpy {np.__version__}")
    bench_case("VAE train step, batch 32",
               lambda api: api.jit(lambda s, k, x: train_step(api, s, k, x[:BATCH])), 1.0)
    bench_case(f"VAE epoch: fori_loop of {EPOCH} steps",
               lambda api: api.jit(lambda s, k, x: run_epoch(api, s, k, x)), 1.0)


if __name__ == "__main__":
    main()
