"""Minibatch SGD whose training state carries a typed PRNG key (random.key): a jitted step
splits the key, draws a minibatch with random.choice and dropout noise with
random.bernoulli, and the loop runs in lax.scan with the state (key included) as the carry;
per-step keys are also made with vmap over random.fold_in. JAX style, program tests."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import random


class State(NamedTuple):
    w: jax.Array
    b: jax.Array
    key: jax.Array


def loss(w, b, x, y, mask):
    pred = (x * mask) @ w + b
    return jnp.mean((pred - y) ** 2)


@jax.jit
def step(state, x, y):
    key, pick, drop = random.split(state.key, 3)
    idx = random.choice(pick, x.shape[0], (8,), replace=False)
    mask = random.bernoulli(drop, 0.9, (8, x.shape[1])) / 0.9
    gw, gb = jax.grad(loss, argnums=(0, 1))(state.w, state.b, x[idx], y[idx], mask)
    return State(state.w - 0.05 * gw, state.b - 0.05 * gb, key)


def main(x, y):
    assert jnp.issubdtype(random.key(0).dtype, jax.dtypes.prng_key)
    k_init, k_train = random.split(random.key(7))
    state = State(random.normal(k_init, (x.shape[1],)) * 0.1, jnp.zeros(()), k_train)
    state, losses = jax.lax.scan(
        lambda s, _: (step(s, x, y), loss(s.w, s.b, x, y, 1.0)), state, None, length=20)
    step_keys = jax.vmap(lambda i: random.fold_in(state.key, i))(jnp.arange(4))
    noise = jax.vmap(lambda k: random.uniform(k, (2,)))(step_keys)
    return {"w": state.w, "b": state.b, "losses": losses, "noise": noise,
            "key": random.key_data(state.key), "step_keys": random.key_data(step_keys)}
