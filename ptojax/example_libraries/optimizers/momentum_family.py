"""Gradient descent and its momentum variants: ``sgd``, ``momentum``, ``nesterov``. Each takes
a step size or a schedule (see ``schedules.py``) and works leaf by leaf on a parameter tree."""
from ptojax import numpy as jnp
from ptojax.example_libraries.optimizers.schedules import make_schedule
from ptojax.example_libraries.optimizers.state import Optimizer, optimizer, params_of


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x -= step_size(i) * g``; the state is ``x`` itself.

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.sgd(0.1)
    >>> state = opt_init(pnp.array([1.0, 2.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, pnp.array([0.5, -1.0]), state)
    >>> get_params(state)
    Array([0.9      , 2.1999998], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum: ``v = mass * v + g; x -= step_size(i) * v``.

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.momentum(0.1, mass=0.9)
    >>> state = opt_init(pnp.array([1.0, 2.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, pnp.array([0.5, -1.0]), state)
    >>> get_params(state)
    Array([0.855, 2.29 ], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * velocity, velocity

    return init, update, params_of


@optimizer
def nesterov(step_size, mass):
    """Nesterov momentum: ``v = mass * v + g; x -= step_size(i) * (mass * v + g)``.

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.nesterov(0.1, mass=0.9)
    >>> state = opt_init(pnp.array([1.0, 2.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, pnp.array([0.5, -1.0]), state)
    >>> get_params(state)
    Array([0.76949996, 2.461     ], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, jnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        return x - step_size(i) * (mass * velocity + g), velocity

    return init, update, params_of
