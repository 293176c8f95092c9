"""Differentially private SGD on a small MLP: per-example gradients with vmap(grad), each
clipped to a global L2 norm (jnp.linalg.norm over the tree's leaves, lax.stop_gradient on the
divisor), summed, noised with random.normal and averaged; jitted. JAX style, program tests."""
from functools import partial

import jax
import jax.numpy as jnp
from jax import random


def init(key, sizes):
    keys = random.split(key, len(sizes) - 1)
    return [(random.normal(k, (m, n)) * 0.3, jnp.zeros(n))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jax.nn.log_softmax(x @ w + b)


def loss(params, example):
    x, y = example
    return -jnp.sum(predict(params, x) * y)


def clipped_grad(params, example, clip):
    grads = jax.grad(loss)(params, example)
    leaves, treedef = jax.tree.flatten(grads)
    norm = jnp.linalg.norm(jnp.stack([jnp.linalg.norm(g.ravel()) for g in leaves]))
    divisor = jax.lax.stop_gradient(jnp.maximum(norm / clip, 1.0))
    return jax.tree.unflatten(treedef, [g / divisor for g in leaves])


@partial(jax.jit, static_argnames="clip")
def private_step(params, batch, key, clip=1.0, noise=0.5, lr=0.2):
    per_example = jax.vmap(clipped_grad, in_axes=(None, 0, None))(params, batch, clip)
    summed = jax.tree.map(lambda g: g.sum(axis=0), per_example)
    leaves, treedef = jax.tree.flatten(summed)
    keys = random.split(key, len(leaves))
    noised = [g + clip * noise * random.normal(k, g.shape) for k, g in zip(keys, leaves)]
    grads = jax.tree.unflatten(treedef, [g / batch[0].shape[0] for g in noised])
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def main(x, y):
    params = init(random.key(0), [x.shape[1], 8, y.shape[1]])
    for step in range(2):
        params = private_step(params, (x, y), random.fold_in(random.key(1), step))
    accuracy = jnp.mean(jnp.argmax(predict(params, x), 1) == jnp.argmax(y, 1))
    return params, accuracy
