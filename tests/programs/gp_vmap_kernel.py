"""Gaussian-process regression calling what JAX's examples/gaussian_process_regression.py
calls and in the same way: ``import jax.scipy as scipy`` then ``scipy.linalg.cholesky(...,
lower=True)`` and ``scipy.linalg.solve_triangular`` (upper by default, on the transposed
factor), a covariance matrix built by a vmap nested in a vmap over a closure, softplus as
``jnp.logaddexp(x, 0.)``, hyperparameters held as (1, 1) arrays in a dict, differentiated by
``jit(grad(partial(f, keyword=True)))``, updated in place (``params[k] -= ...``) with their
gradients' first rows, data drawn by ``random.uniform``/``random.normal`` with ``shape=``,
and a predictive mean and variance on a ``linspace(...)[:, None]`` grid. Plotting and absl
flags are left out. JAX style, for the program tests."""
from functools import partial

from jax import grad, jit, vmap
import jax.numpy as jnp
import jax.random as random
import jax.scipy as scipy


def pairwise(kernel, xs, xs2=None):
    """kernel(a, b) for every pair of rows: of xs with itself, or (transposed) xs2 with xs."""
    if xs2 is None:
        return vmap(lambda a: vmap(lambda b: kernel(a, b))(xs))(xs)
    return vmap(lambda a: vmap(lambda b: kernel(a, b))(xs))(xs2).T


def softplus(v):
    return jnp.logaddexp(v, 0.)


def squared_exponential(a, b):
    return jnp.exp(-jnp.sum((a - b) ** 2))


def main(points=7, steps=12, test_points=25):
    key = random.PRNGKey(0)
    identity = jnp.eye(points)

    def model(params, x, y, x_new=None, marginal=False):
        noise, amp, scale = (softplus(params[k]) for k in ("noise", "amplitude", "lengthscale"))
        centre = jnp.mean(y)
        y = y - centre
        x = x / scale
        cov = amp * pairwise(squared_exponential, x) + identity * (noise + 1e-6)
        chol = scipy.linalg.cholesky(cov, lower=True)
        weights = scipy.linalg.solve_triangular(
            chol.T, scipy.linalg.solve_triangular(chol, y, lower=True))
        if marginal:
            log_two_pi = jnp.log(2. * 3.1415)
            fit = jnp.sum(-0.5 * jnp.dot(y.T, weights) - jnp.sum(jnp.log(jnp.diag(chol)))
                          - (points / 2.) * log_two_pi)
            fit -= jnp.sum(-0.5 * jnp.log(2 * 3.1415) - jnp.log(amp) ** 2)
            return -fit
        x_new = x_new / scale
        cross = amp * pairwise(squared_exponential, x, x_new)
        v = scipy.linalg.solve_triangular(chol, cross, lower=True)
        return (jnp.dot(cross.T, weights) + centre,
                amp * pairwise(squared_exponential, x_new) - jnp.dot(v.T, v))

    neg_marginal = partial(model, marginal=True)
    gradient = jit(grad(neg_marginal))
    params = {"amplitude": jnp.zeros((1, 1)), "noise": jnp.zeros((1, 1)) - 5.,
              "lengthscale": jnp.zeros((1, 1))}
    velocity = {k: v * 0. for k, v in params.items()}
    second = {k: v * 0. + 1. for k, v in params.items()}

    noisy_sine = lambda x: jnp.sin(x) + 0.1 * random.normal(key, shape=(x.shape[0], 1))
    x = random.uniform(key, shape=(points, 1)) * 4. + 1
    y = noisy_sine(x)
    x_test = jnp.linspace(0, 6., test_points)[:, None]
    values, printed = [], []
    for step in range(steps):
        g = gradient(params, x, y)
        for k in params:
            velocity[k] = 0.9 * velocity[k] + 0.1 * g[k][0]
            second[k] = 0.9 * second[k] + 0.1 * g[k][0] ** 2
            params[k] -= 0.01 * velocity[k] / jnp.sqrt(second[k] + 1e-5)
        if step % 4 == 0:
            values.append(float(neg_marginal(params, x, y)))
            printed.append("%f" % neg_marginal(params, x, y))
    mean, var = partial(model, marginal=False)(params, x, y, x_test)
    return params, values, [float(s) for s in printed], mean, jnp.sqrt(jnp.diag(var))
