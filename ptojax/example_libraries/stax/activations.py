"""Parameter-free layers applying one function to their input: ``elementwise(fun)`` and the
activation layers built with it (``Relu``, ``Tanh``, ``LogSoftmax`` ...)."""
from ptojax import numpy as jnp
from ptojax.nn import elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus


def elementwise(fun, **fun_kwargs):
    """The layer ``inputs -> fun(inputs, **fun_kwargs)``: no params, output shape = input
    shape.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.elementwise(pnp.clip, min=0.0, max=1.0)
    >>> init_fun(pto.random.PRNGKey(0), (2, 3))
    ((2, 3), ())
    >>> apply_fun((), pnp.array([-1.0, 0.5, 2.0]))
    Array([0. , 0.5, 1. ], dtype=float32)
    """

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)
