"""Physics with vmap and grad, in the style of public JAX-MD/"physics with JAX" demos:
Lennard-Jones forces as ``-grad`` of a pair energy vmapped twice, velocity Verlet in a
``fori_loop`` under ``jit`` (static step count), a vmap over initial velocities, the Hessian
spectrum of an anharmonic chain, and a pendulum integrated from its Lagrangian with
``grad``/``hessian``/``jacfwd`` under ``scan``."""
import functools

import jax
import jax.numpy as jnp
from jax import grad, lax, vmap


def pair_energy(ri, rj):
    s6 = (1.0 / (jnp.sum((ri - rj) ** 2) + 1e-3)) ** 3
    return 4 * (s6 ** 2 - s6)


def energy(r):
    e = vmap(vmap(pair_energy, (None, 0)), (0, None))(r, r)
    return 0.5 * jnp.sum(e * (1.0 - jnp.eye(r.shape[0])))


forces = jax.jit(lambda r: -grad(energy)(r))


@functools.partial(jax.jit, static_argnums=3)
def verlet(r, v, dt, steps):
    def body(i, state):
        r, v, f = state
        v = v + 0.5 * dt * f
        r = r + dt * v
        f = forces(r)
        return r, v + 0.5 * dt * f, f
    return lax.fori_loop(0, steps, body, (r, v, forces(r)))


def pendulum(steps):
    lagrangian = lambda q, qd: 0.5 * qd ** 2 - (1 - jnp.cos(q))

    def accel(q, qd):
        mixed = jax.jacfwd(grad(lagrangian, 1), 0)(q, qd)
        return (grad(lagrangian, 0)(q, qd) - mixed * qd) / jax.hessian(lagrangian, 1)(q, qd)

    def step(state, _):
        q, qd = state
        qd = qd + 0.05 * accel(q, qd)
        return (q + 0.05 * qd, qd), q
    return lax.scan(step, (1.0, 0.0), None, length=steps)[1]


@jax.jit
def simulate(r0, v0):
    r, v, _ = verlet(r0, v0, 0.005, 20)
    batch = vmap(lambda v: verlet(r0, v, 0.005, 5)[0])(jnp.stack([v0, -v0, 2 * v0]))
    chain = lambda x: 0.5 * jnp.sum(jnp.diff(x) ** 2) + 0.05 * jnp.sum(x ** 4)
    spectrum = jnp.linalg.eigvalsh(jax.hessian(chain)(jnp.linspace(-1, 1, 5)))
    return energy(r0), forces(r0), r, 0.5 * jnp.sum(v ** 2), vmap(energy)(batch), spectrum


def main(r0, v0):
    return (*simulate(r0, v0), jax.jit(pendulum, static_argnums=0)(20))
