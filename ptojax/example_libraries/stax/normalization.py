"""``BatchNorm``: standardize over the batch axes, then scale by ``gamma`` and shift by
``beta`` (per feature of the remaining axes). Statistics come from the batch itself; there
are no running averages."""
from ptojax import numpy as jnp
from ptojax import random
from ptojax.nn import standardize
from ptojax.nn.initializers import ones, zeros


def _broadcast_index(ndim, axis):
    """The index that inserts a unit axis at each reduced ``axis`` of an ``ndim`` array."""
    return tuple(None if i in axis else slice(None) for i in range(ndim))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Batch normalization over ``axis``; params ``(beta, gamma)`` of the input shape without
    ``axis``, each ``()`` when ``center`` / ``scale`` is off. The variance is
    ``pto.nn.standardize``'s stable ``mean((x - mean)^2)``; JAX's stax gets
    ``mean(x^2) - mean^2``, which differs where the variance is tiny against the mean.

    >>> from ptojax.example_libraries import stax
    >>> init_fun, apply_fun = stax.BatchNorm(axis=0)
    >>> out_shape, (beta, gamma) = init_fun(pto.random.PRNGKey(0), (4, 3))
    >>> beta.shape, gamma.shape
    ((3,), (3,))
    >>> x = pnp.arange(12.0).reshape(4, 3)
    >>> apply_fun((beta, gamma), x)[:, 0]
    Array([-1.3416402, -0.4472134,  0.4472134,  1.3416402], dtype=float32)
    """
    axis = (axis,) if jnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        feature_shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        beta_key, gamma_key = random.split(rng)
        beta = beta_init(beta_key, feature_shape) if center else ()
        gamma = gamma_init(gamma_key, feature_shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        index = _broadcast_index(jnp.ndim(x), axis)
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[index] * z
        if center:
            z = z + beta[index]
        return z

    return init_fun, apply_fun
