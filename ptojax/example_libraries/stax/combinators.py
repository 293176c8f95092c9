"""Layers built from layers: ``serial`` (one after another), ``parallel`` (side by side on a
sequence of inputs) and ``shape_dependent`` (a layer chosen once the input shape is known).

A layer is an ``(init_fun, apply_fun)`` pair: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` the outputs. A PRNG key
passed as ``rng=`` to a combinator's ``apply_fun`` is split into one key per sub-layer.
"""
from ptojax import random


def _layer_keys(kwargs, count):
    """``count`` keys split from the ``rng`` keyword (removed from ``kwargs``), or Nones."""
    rng = kwargs.pop("rng", None)
    if rng is None:
        return [None] * count
    return list(random.split(rng, count))


def _unpair(layers, combinator):
    """The init functions and the apply functions of ``layers``, each a 2-sequence."""
    for i, layer in enumerate(layers):
        if not (isinstance(layer, (tuple, list)) and len(layer) == 2):
            raise TypeError(f"stax.{combinator}: argument {i} is {type(layer).__name__}, not a "
                            f"layer; pass (init_fun, apply_fun) pairs such as stax.Dense(10) "
                            f"or stax.Relu (layer constructors like Dense must be called)")
    return [init for init, _ in layers], [apply for _, apply in layers]


def serial(*layers):
    """The layer applying ``layers`` in order, each to the previous one's output; its params are
    the list of the layers' params. Each layer's init gets a fresh key split off the last.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.serial(stax.Dense(4), stax.Relu, stax.Dense(2))
    >>> out_shape, params = init_fun(pto.random.PRNGKey(0), (8, 3))
    >>> out_shape, [pto.tree.map(pnp.shape, p) for p in params]
    ((8, 2), [((3, 4), (4,)), (), ((4, 2), (2,))])
    >>> apply_fun(params, pnp.ones((8, 3))).shape
    (8, 2)
    """
    inits, applies = _unpair(layers, "serial")

    def init_fun(rng, input_shape):
        shape, params = input_shape, []
        for init in inits:
            rng, layer_rng = random.split(rng)
            shape, layer_params = init(layer_rng, shape)
            params.append(layer_params)
        return shape, params

    def apply_fun(params, inputs, **kwargs):
        keys = _layer_keys(kwargs, len(applies))
        for apply, layer_params, key in zip(applies, params, keys):
            inputs = apply(layer_params, inputs, rng=key, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """The layer applying ``layers[i]`` to ``inputs[i]``: it takes and returns sequences as long
    as ``layers`` (usually between ``FanOut`` and ``FanInSum``/``FanInConcat``).

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.serial(
    ...     stax.FanOut(2), stax.parallel(stax.Dense(4), stax.Identity), stax.FanInConcat())
    >>> out_shape, params = init_fun(pto.random.PRNGKey(0), (8, 3))
    >>> out_shape
    (8, 7)
    >>> apply_fun(params, pnp.ones((8, 3))).shape
    (8, 7)
    """
    inits, applies = _unpair(layers, "parallel")

    def init_fun(rng, input_shape):
        keys = random.split(rng, len(inits))
        results = [init(key, shape) for init, key, shape in zip(inits, keys, input_shape)]
        return tuple(shape for shape, _ in results), tuple(params for _, params in results)

    def apply_fun(params, inputs, **kwargs):
        keys = _layer_keys(kwargs, len(applies))
        return [apply(layer_params, x, rng=key, **kwargs)
                for apply, layer_params, x, key in zip(applies, params, inputs, keys)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """The layer ``make_layer(input_shape)``, built when its input shape is known: at init from
    the given shape, at apply from the inputs' shape.

    >>> from ptojax.example_libraries import stax
    >>> def same_width(input_shape):
    ...     return stax.Dense(input_shape[-1])
    >>> init_fun, apply_fun = stax.shape_dependent(same_width)
    >>> init_fun(pto.random.PRNGKey(0), (2, 5))[0]
    (2, 5)
    """

    def init_fun(rng, input_shape):
        init, _ = make_layer(input_shape)
        return init(rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        _, apply = make_layer(inputs.shape)
        return apply(params, inputs, **kwargs)

    return init_fun, apply_fun
