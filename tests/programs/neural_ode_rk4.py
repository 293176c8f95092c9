"""A neural ODE in the style of public pure-JAX code (julesberman/hflow's ``odeint_rk4``: a
jitted RK4 step under ``lax.scan``): an MLP vector field fitted to a damped oscillator's
trajectory by a few jitted gradient steps through the solver, plus a stochastic
(Euler-Maruyama) path with keys split per step and a vmap over initial conditions."""
import jax
import jax.numpy as jnp
from jax import jit


def odeint_rk4(fn, y0, t):
    @jit
    def rk4(carry, t):
        y, t_prev = carry
        h = t - t_prev
        k1 = fn(t_prev, y)
        k2 = fn(t_prev + h / 2, y + h * k1 / 2)
        k3 = fn(t_prev + h / 2, y + h * k2 / 2)
        k4 = fn(t, y + h * k3)
        y = y + 1.0 / 6.0 * h * (k1 + 2 * k2 + 2 * k3 + k4)
        return (y, t), y
    _, ys = jax.lax.scan(rk4, (y0, jnp.array(t[0])), t)
    return ys


def euler_maruyama(drift, diffusion, y0, t, key):
    def step(carry, t):
        y, t_prev, key = carry
        dt = t - t_prev
        key, sub = jax.random.split(key)
        y = y + dt * drift(t_prev, y) + jnp.sqrt(dt) * diffusion(t_prev, y, sub)
        return (y, t, key), y
    _, ys = jax.lax.scan(step, (y0, jnp.array(t[0]), key), t)
    return ys


def mlp(params, y):
    for w, b in params[:-1]:
        y = jnp.tanh(y @ w + b)
    w, b = params[-1]
    return y @ w + b


def main(t, y0):
    oscillator = lambda t, y: jnp.array([y[1], -y[0] - 0.2 * y[1]])
    target = jit(lambda y0, t: odeint_rk4(oscillator, y0, t))(y0, t)
    params = jit(lambda key: [(jax.random.normal(k, (m, n)) / jnp.sqrt(m), jnp.zeros(n))
                              for k, m, n in zip(jax.random.split(key), (2, 16), (16, 2))])(
        jax.random.PRNGKey(0))

    def loss(params):
        return jnp.mean((odeint_rk4(lambda t, y: mlp(params, y), y0, t) - target) ** 2)

    @jit
    def update(params):
        value, grads = jax.value_and_grad(loss)(params)
        return value, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    losses = []
    for _ in range(4):
        value, params = update(params)
        losses.append(value)
    noisy = jit(lambda y0, t: euler_maruyama(
        oscillator, lambda t, y, k: 0.05 * jax.random.normal(k, y.shape), y0, t,
        jax.random.PRNGKey(2)))(y0, t)
    ends = jit(jax.vmap(lambda y: odeint_rk4(oscillator, y, t)[-1]))(jnp.eye(2))
    return target[::5], jnp.stack(losses), params, noisy[-1], ends
