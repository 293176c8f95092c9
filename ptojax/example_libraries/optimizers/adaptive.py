"""Optimizers scaling each coordinate by its gradient history: ``adagrad``, ``rmsprop``,
``rmsprop_momentum``, ``adam``, ``adamax``. States are ``(x, *statistics)`` tuples of arrays
shaped like ``x``."""
from ptojax import numpy as jnp
from ptojax.example_libraries.optimizers.schedules import make_schedule
from ptojax.example_libraries.optimizers.state import optimizer, params_of


def _zeros_state(count):
    """``init``: the parameters and ``count`` zero arrays like them."""
    def init(x0):
        return (x0,) + tuple(jnp.zeros_like(x0) for _ in range(count))
    return init


def inverse_sqrt_or_zero(total):
    """``1 / sqrt(total)`` where ``total > 0``, else 0."""
    return jnp.where(total > 0, 1. / jnp.sqrt(total), 0.0)


def bias_correction(beta, i, dtype):
    """``1 - beta ** (i + 1)`` in ``dtype``: what an exponential average started at zero is
    short of after step ``i``."""
    return 1 - jnp.asarray(beta, dtype) ** (i + 1)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al., 2011) with momentum on the scaled gradient: the state is
    ``(x, sum of squared gradients, momentum)``.

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.adagrad(0.1)
    >>> state = opt_init(pnp.array([1.0, 2.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, pnp.array([0.5, -1.0]), state)
    >>> get_params(state)
    Array([0.9739289, 2.026071 ], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        m = (1. - momentum) * (g * inverse_sqrt_or_zero(g_sq)) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return _zeros_state(2), update, params_of


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: divide by the root of a ``gamma``-decayed average of squared gradients.

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.rmsprop(0.1)
    >>> state = opt_init(pnp.array([1.0, 2.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, pnp.array([0.5, -1.0]), state)
    >>> get_params(state)
    Array([0.4543566, 2.5456433], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return _zeros_state(1), update, params_of


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose scaled steps accumulate in a ``momentum`` buffer.

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.rmsprop_momentum(0.1)
    >>> state = opt_init(pnp.array([1.0, 2.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, pnp.array([0.5, -1.0]), state)
    >>> get_params(state)
    Array([0.16975164, 2.8302484 ], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return _zeros_state(2), update, params_of


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba): bias-corrected averages of the gradient (decay ``b1``) and of its
    square (``b2``); the state is ``(x, m, v)``.

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.adam(0.1)
    >>> state = opt_init(pnp.array([1.0, 2.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, pnp.array([0.5, -1.0]), state)
    >>> get_params(state)
    Array([0.8000017, 2.1999984], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        m_hat = m / bias_correction(b1, i, m.dtype)
        v_hat = v / bias_correction(b2, i, m.dtype)
        return x - step_size(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return _zeros_state(2), update, params_of


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam with an infinity norm: ``u`` is a ``b2``-decayed running maximum of
    ``|g|``; the state is ``(x, m, u)``.

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.adamax(0.1)
    >>> state = opt_init(pnp.array([1.0, 2.0]))
    >>> for i in range(2):
    ...     state = opt_update(i, pnp.array([0.5, -1.0]), state)
    >>> get_params(state)
    Array([0.8000001, 2.1999998], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        corrected_step = step_size(i) / bias_correction(b1, i, m.dtype)
        return x - corrected_step * m / (u + eps), m, u

    return _zeros_state(2), update, params_of
