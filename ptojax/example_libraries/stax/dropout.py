"""``Dropout``: in training mode keep each input element with probability ``rate`` (scaled by
``1 / rate``) and zero the rest; in any other mode pass the input through. Note that, as in
JAX's stax, ``rate`` is the probability of KEEPING an element."""
from ptojax import numpy as jnp
from ptojax import random


def Dropout(rate, mode="train"):
    """A dropout layer; its ``apply_fun`` needs a PRNG key as the keyword ``rng``.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.Dropout(0.5)
    >>> out = apply_fun((), pnp.ones(8), rng=pto.random.PRNGKey(0))
    >>> sorted(set(out.tolist()))  # dropped, or kept and scaled by 1 / 0.5
    [0.0, 2.0]
    >>> test_apply = stax.Dropout(0.5, mode="test")[1]  # a key is needed in any mode
    >>> test_apply((), pnp.ones(3), rng=pto.random.PRNGKey(0)).tolist()
    [1.0, 1.0, 1.0]
    """

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("stax.Dropout needs a PRNG key: call the model's apply_fun as "
                             "apply_fun(params, inputs, rng=key) with key from "
                             "jax.random.key (or PRNGKey); serial and parallel split it "
                             "between their layers")
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun
