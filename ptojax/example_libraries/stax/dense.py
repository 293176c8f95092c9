"""``Dense``: the fully connected layer ``inputs @ W + b`` over the last axis."""
from ptojax import numpy as jnp
from ptojax import random
from ptojax.nn.initializers import glorot_normal, normal


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A dense layer to ``out_dim`` features: params ``(W, b)`` with ``W`` of shape
    ``(in_dim, out_dim)`` drawn by ``W_init`` and ``b`` of shape ``(out_dim,)`` by ``b_init``.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.Dense(3)
    >>> out_shape, (W, b) = init_fun(pto.random.PRNGKey(0), (-1, 5))
    >>> out_shape, W.shape, b.shape
    ((-1, 3), (5, 3), (3,))
    >>> apply_fun((W, b), pnp.ones((2, 5))).shape
    (2, 3)
    """

    def init_fun(rng, input_shape):
        w_key, b_key = random.split(rng)
        weights = W_init(w_key, (input_shape[-1], out_dim))
        bias = b_init(b_key, (out_dim,))
        return tuple(input_shape[:-1]) + (out_dim,), (weights, bias)

    def apply_fun(params, inputs, **kwargs):
        weights, bias = params
        return jnp.dot(inputs, weights) + bias

    return init_fun, apply_fun
