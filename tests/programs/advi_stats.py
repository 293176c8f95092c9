"""Automatic differentiation variational inference on a 2-D target written with
jax.scipy.stats (norm, t, multivariate_normal): a diagonal Gaussian is fitted by momentum on a
Monte Carlo ELBO, vmapped over samples with in_axes=(0, None, None). JAX style, program tests."""
from functools import partial

import jax
import jax.numpy as jnp
from jax import random
from jax.scipy.stats import multivariate_normal, norm, t

COV = jnp.array([[1.0, 0.6], [0.6, 2.0]])


def log_target(z):
    return (multivariate_normal.logpdf(z, jnp.array([0.5, -1.0]), COV)
            + t.logpdf(z[0], df=4.0) + norm.logcdf(z[1] + 3.0))


def elbo_sample(key, mean, log_std):
    z = mean + jnp.exp(log_std) * random.normal(key, mean.shape)
    entropy_term = jnp.sum(norm.logpdf(z, mean, jnp.exp(log_std)))
    return log_target(z) - entropy_term


@partial(jax.jit, static_argnames="num_samples")
def negative_elbo(params, key, num_samples=8):
    keys = random.split(key, num_samples)
    return -jnp.mean(jax.vmap(elbo_sample, in_axes=(0, None, None))(keys, *params))


def main():
    params = (jnp.zeros(2), jnp.zeros(2))
    velocity = jax.tree.map(jnp.zeros_like, params)
    for step in range(8):
        grads = jax.grad(negative_elbo)(params, random.key(step))
        velocity = jax.tree.map(lambda v, g: 0.9 * v - 0.05 * g, velocity, grads)
        params = jax.tree.map(jnp.add, params, velocity)
    return params, negative_elbo(params, random.key(100))
