"""Finite-horizon control, exercising what JAX's examples/control.py and its test do (our own
code): problems as namedtuples of functions, trajectories rolled out by ``lax.fori_loop``
(or a ``lax.scan`` over ``jnp.arange`` standing in for it) writing rows with ``.at[].set``,
the local quadratic model of cost and dynamics by ``grad``/``jacfwd``/``jacobian`` with
argnums tuples, ``vmap``-ed over time steps whose index is an int, the Riccati sweep with
``jnp.linalg.solve`` carrying a namedtuple of arrays (and reading its terminal row one past
the end: a static index JAX clamps), iterative LQR, and model-predictive control shifting a
padded window with ``lax.dynamic_slice_in_dim`` and closing over the traced step. Also the
integer-state dynamics of the test (``%``, ``cumsum``, ``sum(dtype=int32)``). Eager, as
the example runs."""
import collections
import functools

import jax
import jax.numpy as jnp
from jax import lax

Problem = collections.namedtuple("Problem", "cost step horizon n_state n_control")
Model = collections.namedtuple("Model", "cxx cx cuu cu cux fx fu")


def repeat(lo, hi, body, init, via_scan):
    """``body(t, carry)`` for t in [lo, hi): a fori_loop, or a scan over the step indices."""
    if not via_scan:
        return lax.fori_loop(lo, hi, body, init)
    return lax.scan(lambda carry, t: (body(t, carry), ()), init, jnp.arange(lo, hi))[0]


def rollout(step, controls, x0, via_scan=False):
    horizon, _ = controls.shape
    states = jnp.zeros((horizon + 1, x0.shape[0])).at[0].set(x0)
    return repeat(0, horizon, lambda t, xs: xs.at[t + 1].set(step(t, xs[t], controls[t])),
                  states, via_scan)


def local_model(problem):
    """The cost's second-order and the dynamics' first-order expansion at every step."""
    du = jax.grad(problem.cost, argnums=2)

    def at(t, x, u):
        cx, cu = jax.grad(problem.cost, argnums=(1, 2))(t, x, u)
        fx, fu = jax.jacobian(problem.step, argnums=(1, 2))(t, x, u)
        cxx = jax.jacfwd(jax.grad(problem.cost, argnums=1), argnums=1)(t, x, u)
        return Model(cxx, cx, jax.jacfwd(du, argnums=2)(t, x, u), cu,
                     jax.jacfwd(du, argnums=1)(t, x, u), fx, fu)

    def around(states, controls):
        n = problem.horizon
        padded = jnp.vstack((controls, jnp.zeros((1,) + controls.shape[1:])))
        m = jax.vmap(at)(jnp.arange(n + 1), states, padded)
        return Model(m.cxx, m.cx, m.cuu[:n], m.cu[:n], m.cux[:n], m.fx[:n], m.fu[:n])
    return around


def riccati(model, via_scan=False, ridge=1e-7):
    """Feedback gains and offsets of the LQR problem ``model``, sweeping backwards."""
    horizon, n_control, _ = model.cuu.shape
    n_state = model.cxx.shape[1]

    def body(k, carry):
        m, vxx, vx, gains, offsets = carry
        t = horizon - 1 - k
        fx, fu = m.fx[t], m.fu[t]
        fu_v = jnp.matmul(fu.T, vxx)
        g = m.cuu[t] + jnp.matmul(fu_v, fu) + ridge * jnp.eye(n_control)
        h = jnp.matmul(fu_v, fx) + m.cux[t]
        hu = m.cu[t] + jnp.dot(fu.T, vx)
        gain, offset = -jnp.linalg.solve(g, h), -jnp.linalg.solve(g, hu)
        vxx = m.cxx[t] + jnp.matmul(jnp.matmul(fx.T, vxx), fx) + jnp.matmul(gain.T, h)
        vx = m.cx[t] + jnp.dot(fx.T, vx) + jnp.dot(gain.T, hu)
        return m, vxx, vx, gains.at[t].set(gain), offsets.at[t].set(offset)

    start = (model, model.cxx[horizon + 1], model.cx[horizon + 1],
             jnp.zeros((horizon, n_control, n_state)), jnp.zeros((horizon, n_control)))
    return repeat(0, horizon, body, start, via_scan)[3:]


def lqr_rollout(model, x0, via_scan=False):
    gains, offsets = riccati(model, via_scan)
    horizon, n_control, _ = model.cuu.shape

    def body(t, carry):
        m, xs, us = carry
        u = jnp.dot(gains[t], xs[t]) + offsets[t]
        return m, xs.at[t + 1].set(jnp.dot(m.fx[t], xs[t]) + jnp.dot(m.fu[t], u)), \
            us.at[t].set(u)

    xs = jnp.zeros((horizon + 1, model.cxx.shape[1])).at[0].set(x0)
    return repeat(0, horizon, body, (model, xs, jnp.zeros((horizon, n_control))),
                  via_scan)[1:]


def ilqr(iterations, problem, x0, controls, via_scan=False):
    around = local_model(problem)

    def improve(_, carry):
        xs, us = carry
        dxs, dus = lqr_rollout(around(xs, us), jnp.zeros_like(x0), via_scan)
        us = us + dus
        return rollout(problem.step, us, xs[0] + dxs[0], via_scan), us

    return repeat(0, iterations, improve, (rollout(problem.step, controls, x0, via_scan),
                                           controls), via_scan)


def mpc(solver, problem, x0, controls, via_scan=False):
    """Apply the first control of each re-planned horizon, shifting the plan's window."""
    horizon = problem.horizon

    def body(t, carry):
        xs, us = carry
        ahead = problem._replace(cost=lambda s, x, u: problem.cost(t + s, x, u),
                                 step=lambda s, x, u: problem.step(t + s, x, u))
        window = lax.dynamic_slice_in_dim(jnp.vstack((us, jnp.zeros(us.shape))), t, horizon,
                                          axis=0)
        u = solver(ahead, xs[t], window)[1][0]
        return xs.at[t + 1].set(problem.step(t, xs[t], u)), us.at[t].set(u)

    xs = jnp.zeros((horizon + 1, problem.n_state)).at[0].set(x0)
    return repeat(0, horizon, body, (xs, controls), via_scan)


def quadratic_problem(dim, horizon):
    """The LQR problem of unit costs and identity dynamics, given as a Model and as a Problem
    of functions reading its matrices at the (traced) time step."""
    eyes = jnp.stack(horizon * (jnp.eye(dim),))
    zeros = jnp.zeros((horizon, dim, dim))
    model = Model(eyes, jnp.zeros((horizon, dim)), zeros, jnp.zeros((horizon, dim)), zeros,
                  eyes, eyes)

    def cost(t, x, u):
        return (jnp.dot(jnp.dot(model.cxx[t], x), x) + jnp.dot(model.cx[t], x)
                + jnp.dot(jnp.dot(model.cuu[t], u), u) + jnp.dot(model.cu[t], u)
                + jnp.dot(jnp.dot(model.cux[t], x), u))

    def step(t, x, u):
        return jnp.dot(model.fx[t], x) + jnp.dot(model.fu[t], u)
    return model, Problem(cost, step, horizon, dim, dim)


def nonlinear_problem(horizon):
    """Quadratic dynamics and a cost discounted by the (int) step, cast to the state's type."""
    def cost(t, x, u):
        return (x[0] ** 2. + 2e-3 * u[0] ** 2.) / (t + 2).astype(x.dtype)

    def step(t, x, u):
        return (0.9 * x ** 2. - u ** 2.) / (t + 1).astype(x.dtype)
    return Problem(cost, step, horizon, 1, 1)


def integer_trajectories(horizon):
    counter = rollout(lambda t, x, u: (x + u) % 3, 2 * jnp.ones((horizon, 1)), jnp.zeros(1))
    gated = rollout(lambda t, x, u: (x + u) * jnp.minimum(1, jnp.maximum(0, t - 4)),
                    jnp.ones((horizon, 1)), jnp.zeros(1))

    def next_basis_vector(t, x, u):
        position = jnp.sum(1 - jnp.cumsum(x), dtype=jnp.int32)
        return lax.dynamic_slice_in_dim(jnp.eye(3, dtype=jnp.int32), (position + u[0]) % 3,
                                        1)[0]
    cycle = rollout(next_basis_vector, jnp.ones((horizon, 1), dtype=jnp.int32),
                    jnp.eye(3, dtype=jnp.int32)[0])
    return counter, gated, cycle


def main(x0, x_nonlinear, horizon=5, iterations=2, nonlinear_iterations=3):
    model, lqr = quadratic_problem(x0.shape[0], horizon)
    general = Problem(lambda t, x, u: jnp.dot(x, x), lambda t, x, u: x + u, horizon,
                      x0.shape[0], x0.shape[0])
    nonlinear = nonlinear_problem(horizon)
    zeros = jnp.zeros((horizon, x0.shape[0]))
    start = 1e-5 * jnp.ones((horizon, 1))
    out = [integer_trajectories(horizon + 2), riccati(model), lqr_rollout(model, x0)]
    for via_scan in (False, True):
        out += [ilqr(iterations, lqr, x0, zeros, via_scan),
                ilqr(iterations, general, x0, zeros, via_scan),
                ilqr(nonlinear_iterations, nonlinear, x_nonlinear, start, via_scan)]
    solver = functools.partial(ilqr, iterations)
    out += [mpc(solver, general, x0, zeros),
            mpc(functools.partial(ilqr, nonlinear_iterations), nonlinear, x_nonlinear, start),
            jax.jit(functools.partial(mpc, solver, lqr))(x0, zeros)]
    return out
