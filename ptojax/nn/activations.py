"""Elementwise activation functions of ``pto.nn`` (JAX's ``jax.nn`` activations).

Each is written with ``ptojax.numpy`` and ``ptojax.lax``, so jit, grad, vmap and tile trace
through it. Kinks follow JAX's derivative conventions: ``relu`` and ``relu6`` have derivative 0
at their kinks, ``hard_tanh`` has derivative 1 at -1 and 1. Integer inputs of functions that
need a float (``sigmoid``, ``gelu``, ...) are promoted as ``pnp`` promotes them.
"""
from __future__ import annotations

import math

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.errors import ShapeError
from ptojax.numpy._axes import single_axis
from ptojax.numpy._promote import asarray as _asarray, promote_args
from ptojax.source_info import user_frame

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def float_input(name, x):
    """``x`` as an array of a floating-point dtype (integers promote as in ``pnp``)."""
    (x,) = promote_args(name, x, kind="float")
    return x


def identity(x):
    """The identity activation: returns ``x`` unchanged (as an array).

    Args:
      x: input array.

    Returns:
      ``x`` as an array.

    Example:
      >>> pto.nn.identity(pnp.array([-1.0, 2.0]))
      Array([-1.,  2.], dtype=float32)
    """
    return _asarray(x)


def relu(x):
    """Rectified linear unit ``max(x, 0)``; its derivative at 0 is 0 (as JAX).

    Args:
      x: input array.

    Returns:
      An array of ``x``'s shape and dtype.

    Example:
      >>> pto.nn.relu(pnp.array([-2.0, 0.0, 3.0]))
      Array([0., 0., 3.], dtype=float32)
    """
    x = _asarray(x)
    return pnp.where(pnp.less_equal(x, 0), pnp.zeros_like(x), x)


def relu6(x):
    """``min(max(x, 0), 6)``; its derivative at 0 and at 6 is 0 (as JAX). NaN propagates.

    Args:
      x: input array.

    Returns:
      An array (integer inputs give float32, as ``pnp.minimum(x, 6.)``).

    Example:
      >>> pto.nn.relu6(pnp.array([-1.0, 3.0, 8.0]))
      Array([0., 3., 6.], dtype=float32)
    """
    x = _asarray(x)
    capped = pnp.where(pnp.greater_equal(x, 6), 6.0, x)
    return pnp.where(pnp.less_equal(x, 0), pnp.zeros_like(capped), capped)


def sigmoid(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))``.

    Args:
      x: input array.

    Returns:
      An array of floats in ``[0, 1]``.

    Example:
      >>> pto.nn.sigmoid(pnp.array([0.0]))
      Array([0.5], dtype=float32)
    """
    return lax.logistic(float_input("sigmoid", x))


def silu(x):
    """SiLU (swish) ``x * sigmoid(x)``; ``swish`` is the same function.

    Args:
      x: input array.

    Returns:
      An array.

    Example:
      >>> pto.nn.silu(pnp.array([0.0, 1.0]))
      Array([0.       , 0.7310586], dtype=float32)
    """
    x = float_input("silu", x)
    return pnp.multiply(x, lax.logistic(x))


swish = silu


def softplus(x):
    """``log(1 + exp(x))``, without overflow for large ``x``.

    Args:
      x: input array.

    Returns:
      An array.

    Example:
      >>> pto.nn.softplus(pnp.array([0.0]))
      Array([0.6931472], dtype=float32)
    """
    return pnp.logaddexp(float_input("softplus", x), 0)


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``.

    Args:
      x: input array.

    Returns:
      An array of non-positive floats.

    Example:
      >>> pto.nn.log_sigmoid(pnp.array([0.0]))
      Array([-0.6931472], dtype=float32)
    """
    return pnp.negative(softplus(pnp.negative(float_input("log_sigmoid", x))))


def soft_sign(x):
    """``x / (|x| + 1)``.

    Args:
      x: input array.

    Returns:
      An array in ``(-1, 1)``.

    Example:
      >>> pto.nn.soft_sign(pnp.array([1.0, -3.0]))
      Array([ 0.5 , -0.75], dtype=float32)
    """
    x = _asarray(x)
    return pnp.divide(x, pnp.add(pnp.abs(x), 1))


def squareplus(x, b=4):
    """Squareplus ``(x + sqrt(x^2 + b)) / 2``, a smooth ``relu``.

    Args:
      x: input array.
      b: smoothness parameter (scalar or array), default 4.

    Returns:
      An array.

    Example:
      >>> pto.nn.squareplus(pnp.array([0.0]))
      Array([1.], dtype=float32)
    """
    x = _asarray(x)
    return pnp.divide(pnp.add(x, pnp.sqrt(pnp.add(pnp.square(x), b))), 2)


def sparse_plus(x):
    """Sparse plus: 0 for ``x <= -1``, ``(x + 1)^2 / 4`` for ``-1 < x < 1``, ``x`` for
    ``x >= 1``.

    Args:
      x: input array.

    Returns:
      An array.

    Example:
      >>> pto.nn.sparse_plus(pnp.array([-2.0, 0.0, 2.0]))
      Array([0.  , 0.25, 2.  ], dtype=float32)
    """
    x = _asarray(x)
    middle = pnp.divide(pnp.square(pnp.add(x, 1.0)), 4)
    return pnp.where(pnp.less_equal(x, -1.0), 0.0,
                     pnp.where(pnp.greater_equal(x, 1.0), x, middle))


def sparse_sigmoid(x):
    """Sparse sigmoid ``clip((x + 1) / 2, 0, 1)``, the derivative of ``sparse_plus``.

    Args:
      x: input array.

    Returns:
      An array in ``[0, 1]``.

    Example:
      >>> pto.nn.sparse_sigmoid(pnp.array([-2.0, 0.0, 2.0]))
      Array([0. , 0.5, 1. ], dtype=float32)
    """
    return pnp.multiply(0.5, pnp.clip(pnp.add(_asarray(x), 1.0), 0.0, 2.0))


def mish(x):
    """Mish ``x * tanh(softplus(x))``.

    Args:
      x: input array.

    Returns:
      An array.

    Example:
      >>> pto.nn.mish(pnp.array([0.0]))
      Array([0.], dtype=float32)
    """
    x = float_input("mish", x)
    return pnp.multiply(x, pnp.tanh(softplus(x)))


def tanh(x):
    """Hyperbolic tangent (``pnp.tanh``).

    Args:
      x: input array.

    Returns:
      An array in ``[-1, 1]``.

    Example:
      >>> pto.nn.tanh(pnp.array([0.0]))
      Array([0.], dtype=float32)
    """
    return pnp.tanh(x)


def elu(x, alpha=1.0):
    """Exponential linear unit: ``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
      x: input array.
      alpha: scalar or array, default 1.

    Returns:
      An array.

    Example:
      >>> pto.nn.elu(pnp.array([-1.0, 2.0]))
      Array([-0.63212055,  2.        ], dtype=float32)
    """
    x = _asarray(x, op="elu")   # as JAX's: integers meet the float 0.0 (so weak stays weak)
    positive = pnp.greater(x, 0)
    negative_part = pnp.expm1(pnp.where(positive, 0.0, x))
    return pnp.where(positive, x, pnp.multiply(alpha, negative_part))


def celu(x, alpha=1.0):
    """Continuously differentiable ELU: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``.

    Args:
      x: input array.
      alpha: scalar or array, default 1.

    Returns:
      An array.

    Example:
      >>> pto.nn.celu(pnp.array([-1.0, 2.0]), alpha=2.0)
      Array([-0.78693867,  2.        ], dtype=float32)
    """
    x = _asarray(x)
    negative_part = pnp.expm1(pnp.divide(pnp.minimum(x, 0.0), alpha))
    return pnp.add(pnp.maximum(x, 0.0), pnp.multiply(alpha, negative_part))


def selu(x):
    """Scaled ELU ``scale * elu(x, alpha)`` with the self-normalizing constants
    ``alpha = 1.6732632...`` and ``scale = 1.0507009...``.

    Args:
      x: input array.

    Returns:
      An array.

    Example:
      >>> pto.nn.selu(pnp.array([1.0]))
      Array([1.050701], dtype=float32)
    """
    return pnp.multiply(_SELU_SCALE, elu(x, _SELU_ALPHA))


def leaky_relu(x, negative_slope=1e-2):
    """``x`` for ``x >= 0``, else ``negative_slope * x``.

    Args:
      x: input array.
      negative_slope: scalar or array, default 0.01.

    Returns:
      An array.

    Example:
      >>> pto.nn.leaky_relu(pnp.array([-2.0, 3.0]))
      Array([-0.02,  3.  ], dtype=float32)
    """
    x = _asarray(x, op="leaky_relu")   # as JAX's: an integer slope keeps integers integers
    return pnp.where(pnp.greater_equal(x, 0), x, pnp.multiply(negative_slope, x))


def hard_tanh(x):
    """``-1`` below -1, ``1`` above 1, ``x`` between (derivative 1 at -1 and 1, as JAX).

    Args:
      x: input array.

    Returns:
      An array of ``x``'s dtype.

    Example:
      >>> pto.nn.hard_tanh(pnp.array([-3.0, 0.5, 3.0]))
      Array([-1. ,  0.5,  1. ], dtype=float32)
    """
    x = _asarray(x)
    return pnp.where(pnp.greater(x, 1), 1, pnp.where(pnp.less(x, -1), -1, x))


def hard_sigmoid(x):
    """``relu6(x + 3) / 6``.

    Args:
      x: input array.

    Returns:
      An array in ``[0, 1]``.

    Example:
      >>> pto.nn.hard_sigmoid(pnp.array([-4.0, 0.0, 4.0]))
      Array([0. , 0.5, 1. ], dtype=float32)
    """
    return pnp.divide(relu6(pnp.add(_asarray(x), 3.0)), 6.0)


def hard_silu(x):
    """Hard SiLU (hard swish) ``x * hard_sigmoid(x)``; ``hard_swish`` is the same function.

    Args:
      x: input array.

    Returns:
      An array.

    Example:
      >>> pto.nn.hard_silu(pnp.array([0.0, 4.0]))
      Array([0., 4.], dtype=float32)
    """
    x = _asarray(x)
    return pnp.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit ``x * Phi(x)``.

    ``approximate=True`` uses the tanh form ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715
    x^3)))``; ``False`` the exact form ``x/2 * erfc(-x / sqrt(2))``, accurate in the far
    negative tail too.

    Args:
      x: input array.
      approximate: whether to use the tanh approximation.

    Returns:
      An array of ``x``'s (float) dtype, strongly typed (as JAX's, whose constants are of
      ``x``'s dtype).

    Example:
      >>> pto.nn.gelu(pnp.array([1.0]), approximate=False)
      Array([0.8413447], dtype=float32)
    """
    x = float_input("gelu", x)
    x = lax.convert_element_type(x, x.dtype)   # strong: JAX's constants are of x's dtype
    if approximate:
        inner = pnp.multiply(math.sqrt(2 / math.pi),
                             pnp.add(x, pnp.multiply(0.044715, lax.integer_pow(x, 3))))
        return pnp.multiply(x, pnp.multiply(0.5, pnp.add(1.0, pnp.tanh(inner))))
    half_x = pnp.multiply(0.5, x)
    return pnp.multiply(half_x, lax.erfc(pnp.multiply(x, -math.sqrt(0.5))))


def glu(x, axis=-1):
    """Gated linear unit: ``x1 * sigmoid(x2)`` where ``x1, x2`` are the halves of ``x`` along
    ``axis``.

    Args:
      x: input array; its ``axis`` dimension must be even.
      axis: the axis to split, default -1.

    Returns:
      An array with ``axis`` halved.

    Example:
      >>> pto.nn.glu(pnp.array([1.0, 2.0, 0.0, 0.0]))
      Array([0.5, 1. ], dtype=float32)
    """
    x = _asarray(x)
    axis = single_axis("glu", axis, x.ndim)
    if x.shape[axis] % 2:
        raise ShapeError(f"glu: the size {x.shape[axis]} of axis {axis} of {x.aval} must be "
                         f"even (it is split into two halves)", user_frame())
    first, second = pnp.split(x, 2, axis)
    return pnp.multiply(first, sigmoid(second))


@custom_jvp
def _log1mexp(x):
    return pnp.where(pnp.less(x, math.log(2.0)), pnp.log(pnp.negative(pnp.expm1(pnp.negative(x)))),
                     pnp.log1p(pnp.negative(pnp.exp(pnp.negative(x)))))


_log1mexp.defjvps(lambda t, _, x: pnp.divide(t, pnp.expm1(x)))


def log1mexp(x):
    """``log(1 - exp(-x))`` for ``x >= 0``, accurate for small and large ``x`` (NaN below 0).

    Args:
      x: input array.

    Returns:
      An array of floats; the derivative is ``1 / expm1(x)``.

    Example:
      >>> pto.nn.log1mexp(pnp.array([1.0]))
      Array([-0.4586751], dtype=float32)
    """
    return _log1mexp(float_input("log1mexp", x))
