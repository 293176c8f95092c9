"""ADVI on Neal's funnel, calling what JAX's examples/advi.py calls and in the same way:
``jax.scipy.stats.norm`` imported as a module and vmapped over a vector of scales, a Monte Carlo
ELBO vmapped over split keys with ``in_axes=(0, None, None)`` through a ``functools.partial``,
``random.PRNGKey`` of a traced step number inside ``jit``, ``example_libraries.optimizers``
momentum in a jitted update, and the plotting helper jitted with a function and the axis
limits as static arguments (meshgrid, stack of ravels, vmap with ``in_axes=(0, None)``);
limits given as a list are refused (unhashable static argument). Plotting itself is left out.
JAX style, for the program tests."""
from functools import partial

from jax import grad, jit, random, vmap
from jax.example_libraries import optimizers
import jax.numpy as jnp
import jax.scipy.stats.norm as norm


def draw(key, mean, log_std):
    """One sample of the diagonal Gaussian q."""
    return mean + jnp.exp(log_std) * random.normal(key, mean.shape)


def log_q(z, mean, log_std):
    return jnp.sum(vmap(norm.logpdf)(z, mean, jnp.exp(log_std)))


def funnel(z):
    return norm.logpdf(z[0], 0, jnp.exp(z[1])) + norm.logpdf(z[1], 0, 1.35)


def single_elbo(log_p, key, mean, log_std):
    z = draw(key, mean, log_std)
    return log_p(z) - log_q(z, mean, log_std)


def mean_elbo(log_p, key, params, samples):
    per_key = vmap(partial(single_elbo, log_p), in_axes=(0, None, None))
    return jnp.mean(per_key(random.split(key, samples), *params))


@partial(jit, static_argnums=(0, 1, 2, 4))
def grid_values(fn, xlim, ylim, params, ticks=9):
    gx, gy = jnp.meshgrid(jnp.linspace(*xlim, num=ticks), jnp.linspace(*ylim, num=ticks))
    points = jnp.stack([gx.ravel(), gy.ravel()]).T
    return gx, gy, vmap(fn, in_axes=(0, None))(points, params).reshape(gx.shape)


def main(steps=3, samples=16):
    @jit
    def loss(params, step):
        return -mean_elbo(funnel, random.PRNGKey(step), params, samples)

    opt_init, opt_update, get_params = optimizers.momentum(step_size=0.1, mass=0.9)

    @jit
    def update(step, state):
        return opt_update(step, grad(loss)(get_params(state), step), state)

    target_density = lambda z, _: jnp.exp(funnel(z))
    q_density = lambda z, p: jnp.exp(log_q(z, *p))
    state = opt_init((jnp.zeros(2), jnp.zeros(2)))
    losses, grids = [], []
    for step in range(steps):
        state = update(step, state)
        params = get_params(state)
        losses.append(loss(params, step))
        _, _, target = grid_values(target_density, (-2, 2), (-4, 2), 1)
        _, _, approx = grid_values(q_density, (-2, 2), (-4, 2), params)
        grids.append(approx)
    keys = random.split(random.PRNGKey(steps - 1), samples)
    drawn = vmap(draw, in_axes=(0, None, None))(keys, *params)
    try:
        grid_values(funnel, [-2, 2], [-4, 2], None)
        list_limits_refused = False
    except ValueError:
        list_limits_refused = True
    return (jnp.stack(losses), params, target, jnp.stack(grids), drawn,
            jnp.asarray(list_limits_refused))
