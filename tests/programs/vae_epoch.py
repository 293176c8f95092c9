"""A tiny variational autoencoder trained for one epoch inside a jitted fori_loop: the batch is
cut with lax.dynamic_slice_in_dim and binarised with random.bernoulli, keys come from
random.fold_in, the update is grad + tree.map. Written in JAX's style for the program tests."""
import jax
import jax.numpy as jnp
from jax import lax, random

BATCH, PIXELS, CODE, HIDDEN = 8, 16, 2, 12


def dense(key, n_in, n_out):
    w_key, _ = random.split(key)
    return {"w": random.normal(w_key, (n_in, n_out)) / jnp.sqrt(n_in), "b": jnp.zeros(n_out)}


def init(key):
    keys = random.split(key, 4)
    return {"enc": dense(keys[0], PIXELS, HIDDEN), "mu": dense(keys[1], HIDDEN, CODE),
            "logvar": dense(keys[2], HIDDEN, CODE), "dec": dense(keys[3], CODE, PIXELS)}


def apply(layer, x):
    return x @ layer["w"] + layer["b"]


def negative_elbo(params, key, images):
    hidden = jax.nn.relu(apply(params["enc"], images))
    mu, logvar = apply(params["mu"], hidden), apply(params["logvar"], hidden)
    code = mu + jnp.exp(0.5 * logvar) * random.normal(key, mu.shape)
    logits = apply(params["dec"], code)
    log_likelihood = -jnp.sum(jax.nn.softplus(jnp.where(images, -1.0, 1.0) * logits))
    kl = -0.5 * jnp.sum(1.0 + logvar - mu ** 2 - jnp.exp(logvar))
    return (kl - log_likelihood) / images.shape[0]


@jax.jit
def run_epoch(params, key, data):
    num_batches = data.shape[0] // BATCH

    def body(i, params):
        data_key, elbo_key = random.split(random.fold_in(key, i))
        batch = lax.dynamic_slice_in_dim(data, i * BATCH, BATCH)
        images = random.bernoulli(data_key, batch)
        grads = jax.grad(negative_elbo)(params, elbo_key, images)
        return jax.tree.map(lambda p, g: p - 0.05 * g, params, grads)

    return lax.fori_loop(0, num_batches, body, params)


def main(data):
    params = init(random.key(0))
    for epoch in range(1):
        params = run_epoch(params, random.key(epoch + 1), data)
    loss = negative_elbo(params, random.key(9), data > 0.5)
    return loss, params
