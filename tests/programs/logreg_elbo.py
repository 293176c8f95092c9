"""Bayesian logistic regression by variational inference, as JAX's "autobatching
log-densities" page: the log joint is written for one parameter vector and batched with
jit(vmap(jit(...))) over Monte Carlo samples; value_and_grad(argnums=(0, 1)) of the ELBO, a
jitted sampler with a static shape argument. JAX style, program tests."""
import numpy as np

import jax
import jax.numpy as jnp
import jax.scipy as jsp
from jax import random


def main(features, labels):
    @jax.jit
    def log_joint(beta):
        prior = jnp.sum(jsp.stats.norm.logpdf(beta, loc=0.0, scale=10.0))
        margins = (2 * labels - 1) * jnp.dot(features, beta)
        return prior + jnp.sum(-jnp.log(1 + jnp.exp(-margins)))

    batched_log_joint = jax.jit(jax.vmap(log_joint))

    def elbo(loc, log_scale, epsilon):
        sample = loc + jnp.exp(log_scale) * epsilon
        return (jnp.mean(batched_log_joint(sample), 0)
                + jnp.sum(log_scale - 0.5 * np.log(2 * np.pi)))

    value_and_grads = jax.jit(jax.value_and_grad(elbo, argnums=(0, 1)))

    def normal_sample(key, shape):
        key, subkey = random.split(key)
        return key, random.normal(subkey, shape)

    normal_sample = jax.jit(normal_sample, static_argnums=(1,))
    key = random.PRNGKey(10003)
    loc = jnp.zeros(features.shape[1])
    log_scale = jnp.zeros(features.shape[1])
    values = []
    for _ in range(12):
        key, epsilon = normal_sample(key, (16, features.shape[1]))
        value, (loc_grad, log_scale_grad) = value_and_grads(loc, log_scale, epsilon)
        loc += 0.01 * loc_grad
        log_scale += 0.01 * log_scale_grad
        values.append(value)
    return jnp.stack(values), loc, log_scale
