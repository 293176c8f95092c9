"""Gaussian-process regression: the negative log marginal likelihood through
jax.scipy.linalg.cho_factor/cho_solve and solve_triangular, its gradient in the (softplus)
hyperparameters, a few jitted Adam-like steps, and the posterior mean and variance. Reads
jax.config and sets its matmul precision. JAX style, for the program tests."""
import jax
import jax.numpy as jnp
from jax.scipy import linalg


def rbf(x1, x2, amplitude, lengthscale):
    sq = jnp.sum((x1[:, None, :] - x2[None, :, :]) ** 2, axis=-1)
    return amplitude * jnp.exp(-0.5 * sq / lengthscale ** 2)


def unpack(params):
    return jax.tree.map(jax.nn.softplus, params)


def neg_log_marginal(params, x, y):
    p = unpack(params)
    jitter = 1e-6 if jax.config.jax_enable_x64 else 1e-4
    k = rbf(x, x, p["amplitude"], p["lengthscale"]) + (p["noise"] + jitter) * jnp.eye(len(x))
    factor = linalg.cho_factor(k, lower=True)
    alpha = linalg.cho_solve(factor, y)
    log_det = 2.0 * jnp.sum(jnp.log(jnp.diag(factor[0])))
    return 0.5 * (y @ alpha + log_det + len(x) * jnp.log(2.0 * jnp.pi))


def posterior(params, x, y, x_test):
    p = unpack(params)
    k = rbf(x, x, p["amplitude"], p["lengthscale"]) + (p["noise"] + 1e-4) * jnp.eye(len(x))
    chol = jnp.linalg.cholesky(k)
    cross = rbf(x, x_test, p["amplitude"], p["lengthscale"])
    v = linalg.solve_triangular(chol, cross, lower=True)
    alpha = linalg.solve_triangular(chol.T, linalg.solve_triangular(chol, y, lower=True))
    variance = p["amplitude"] - jnp.sum(v ** 2, axis=0)
    return cross.T @ alpha, variance


def main(x, y, x_test):
    previous = jax.config.jax_default_matmul_precision
    jax.config.update("jax_default_matmul_precision", "highest")
    try:
        params = {"amplitude": jnp.array(0.5), "lengthscale": jnp.array(0.0),
                  "noise": jnp.array(-2.0)}
        m = jax.tree.map(jnp.zeros_like, params)
        s = jax.tree.map(jnp.zeros_like, params)
        value_and_grad = jax.jit(jax.value_and_grad(neg_log_marginal))
        values = []
        for _ in range(5):
            value, grads = value_and_grad(params, x, y)
            values.append(value)
            m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
            s = jax.tree.map(lambda s, g: 0.99 * s + 0.01 * g ** 2, s, grads)
            params = jax.tree.map(lambda p, m, s: p - 0.05 * m / (jnp.sqrt(s) + 1e-8),
                                  params, m, s)
        return jnp.stack(values), posterior(params, x, y, x_test)
    finally:
        jax.config.update("jax_default_matmul_precision", previous)
