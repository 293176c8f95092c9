"""Parameter-free layers that move data around: ``Flatten``, ``Identity``, ``FanOut`` (one
input to many), ``FanInSum`` and ``FanInConcat`` (many inputs to one)."""
import math

from ptojax import numpy as jnp


def _flatten():
    """All but the leading (batch) axis flattened into one."""

    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


def _identity():
    """The input unchanged."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs

    return init_fun, apply_fun


def FanOut(num):
    """The layer returning a list of ``num`` copies of its input (for ``parallel``).

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.FanOut(2)
    >>> init_fun(pto.random.PRNGKey(0), (4, 3))
    ([(4, 3), (4, 3)], ())
    """

    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum():
    """The sum of a sequence of same-shaped inputs."""

    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)

    return init_fun, apply_fun


def FanInConcat(axis=-1):
    """The layer concatenating a sequence of inputs along ``axis``.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.FanInConcat(axis=1)
    >>> init_fun(pto.random.PRNGKey(0), [(4, 3), (4, 2)])
    ((4, 5), ())
    >>> apply_fun((), [pnp.ones((4, 3)), pnp.zeros((4, 2))]).shape
    (4, 5)
    """

    def init_fun(rng, input_shape):
        first = tuple(input_shape[0])
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return first[:ax] + (size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


# JAX's stax exposes these three as layers, not constructors
Flatten = _flatten()
Identity = _identity()
FanInSum = _fan_in_sum()
