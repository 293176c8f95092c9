"""SM3 (Anil et al., 2019, "Memory-Efficient Adaptive Optimization"): Adagrad whose
squared-gradient sums are kept as one vector per axis (their maxima over the other axes)
instead of a full array, with momentum on the scaled gradient."""
import functools

from ptojax import numpy as jnp
from ptojax.example_libraries.optimizers.schedules import make_schedule
from ptojax.example_libraries.optimizers.state import optimizer
from ptojax.example_libraries.optimizers.adaptive import inverse_sqrt_or_zero


def _along_axis(v, axis, ndim):
    """The vector ``v`` viewed as an ``ndim`` array varying only along ``axis``."""
    return v[tuple(slice(None) if a == axis else None for a in range(ndim))]


def _other_axes(axis, ndim):
    return tuple(a for a in range(ndim) if a != axis)


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 optimizer; the state is ``(x as at least 1-D, momentum, [one vector per axis],
    x's original shape)``. The shape is kept as leaves, so update outside ``jit`` (as in
    JAX).

    >>> from ptojax.example_libraries import optimizers
    >>> opt_init, opt_update, get_params = optimizers.sm3(0.1)
    >>> state = opt_init(pnp.ones((2, 3)))
    >>> state = opt_update(0, pnp.arange(6.0).reshape(2, 3), state)
    >>> get_params(state)
    Array([[1.  , 0.99, 0.99],
           [0.99, 0.99, 0.99]], dtype=float32)
    """
    step_size = make_schedule(step_size)

    def init(x0):
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, shape

    def update(i, g, state):
        x, m, accumulators, shape = state
        views = [_along_axis(v, axis, g.ndim) for axis, v in enumerate(accumulators)]
        total = functools.reduce(jnp.minimum, views) + jnp.square(g)
        m = (1. - momentum) * (g * inverse_sqrt_or_zero(total)) + momentum * m
        x = x - step_size(i) * m
        accumulators = [total.max(_other_axes(axis, x.ndim)) for axis in range(x.ndim)]
        return x, m, accumulators, shape

    def get_params(state):
        x, _, _, shape = state
        return x.reshape(shape)

    return init, update, get_params
