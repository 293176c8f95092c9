"""``pto.nn``: activations, softmax/logsumexp, one-hot and normalization.

Everything is written with ``ptojax.numpy`` and ``ptojax.lax``, so every transform (jit, grad,
vmap, tile) traces through it. Reductions that exponentiate subtract the running maximum
first, under ``stop_gradient`` (the result does not depend on it, so neither does its
gradient). Normalizations of float16/bfloat16 inputs compute their statistics in float32 and
return the input dtype.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.errors import AxisError
from ptojax.numpy._promote import promote_args
from ptojax.source_info import user_frame


def _float(name, x):
    """``x`` as an array of a floating-point dtype (integers promote as in ``pnp``)."""
    (x,) = promote_args(name, x, kind="float")
    return x


# activations ---------------------------------------------------------------------------------
def relu(x):
    """``max(x, 0)``, with gradient 0 at 0 (NaN propagates)."""
    x = pnp.asarray(x)
    return pnp.where(pnp.less_equal(x, 0), pnp.zeros_like(x), x)


def sigmoid(x):
    """``1 / (1 + exp(-x))``."""
    return lax.logistic(_float("sigmoid", x))


def silu(x):
    """``x * sigmoid(x)``."""
    x = _float("silu", x)
    return pnp.multiply(x, lax.logistic(x))


swish = silu


def softplus(x):
    """``log(1 + exp(x))``, without overflow for large ``x``."""
    return pnp.logaddexp(_float("softplus", x), 0)


def log_sigmoid(x):
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return pnp.negative(softplus(pnp.negative(_float("log_sigmoid", x))))


def elu(x, alpha=1.0):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    x = _float("elu", x)
    positive = pnp.greater(x, 0)
    negative_part = pnp.expm1(pnp.where(positive, pnp.zeros_like(x), x))
    return pnp.where(positive, x, pnp.multiply(alpha, negative_part))


def leaky_relu(x, negative_slope=1e-2):
    """``x`` for ``x >= 0``, else ``negative_slope * x``."""
    x = _float("leaky_relu", x)
    return pnp.where(pnp.greater_equal(x, 0), x, pnp.multiply(negative_slope, x))


def gelu(x, approximate: bool = True):
    """Gaussian error linear unit ``x * Phi(x)``; ``approximate=True`` uses the tanh form
    ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))``, ``False`` the exact erf form
    ``x/2 * (1 + erf(x / sqrt(2)))`` (for float32 its absolute error stays below 1e-7; the
    relative error grows below x = -5, where ``1 + erf`` cancels)."""
    x = _float("gelu", x)
    if approximate:
        inner = pnp.multiply(math.sqrt(2 / math.pi),
                             pnp.add(x, pnp.multiply(0.044715, lax.integer_pow(x, 3))))
        cdf = pnp.multiply(0.5, pnp.add(1.0, pnp.tanh(inner)))
    else:
        cdf = pnp.multiply(0.5, pnp.add(1.0, lax.erf(pnp.multiply(x, math.sqrt(0.5)))))
    return pnp.multiply(x, cdf)


# softmax family ------------------------------------------------------------------------------
def _axes(x, axis) -> tuple:
    if axis is None:
        return tuple(range(x.ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -x.ndim <= a < x.ndim:
            raise AxisError(f"axis {a} is out of bounds for an array of rank {x.ndim}",
                            user_frame())
        out.append(a % x.ndim)
    return tuple(out)


def _max(x, axes):
    """The maximum over ``axes`` (kept), without gradient."""
    return lax.stop_gradient(pnp.max(x, axis=axes, keepdims=True))


def _finite_max(x, axes):
    """``_max``, with 0 where the maximum is infinite (so an all ``-inf`` slice stays
    ``-inf`` and a ``+inf`` stays ``+inf`` instead of becoming NaN)."""
    top = _max(x, axes)
    return pnp.where(pnp.isfinite(top), top, pnp.zeros_like(top))


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` over ``axis`` (an int, a tuple or None for all axes). As in
    JAX, a slice that is all ``-inf`` or holds a ``+inf`` gives NaN."""
    x = _float("softmax", x)
    axes = _axes(x, axis)
    unnormalized = pnp.exp(pnp.subtract(x, _max(x, axes)))
    return pnp.divide(unnormalized, pnp.sum(unnormalized, axis=axes, keepdims=True))


def log_softmax(x, axis=-1):
    """``x - logsumexp(x)`` over ``axis``, computed without overflow."""
    x = _float("log_softmax", x)
    axes = _axes(x, axis)
    shifted = pnp.subtract(x, _max(x, axes))
    return pnp.subtract(shifted, pnp.log(pnp.sum(pnp.exp(shifted), axis=axes, keepdims=True)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a)))`` over ``axis`` (all axes by default), without overflow.

    A slice of all ``-inf`` gives ``-inf``. With weights ``b`` the sum may be negative:
    ``return_sign=True`` returns ``(log|sum|, sign(sum))``, otherwise a negative sum gives
    NaN."""
    a = _float("logsumexp", a)
    if b is not None:
        a, b = promote_args("logsumexp", a, b, kind="float")
    axes = _axes(a, axis)
    top = _finite_max(a, axes)
    terms = pnp.exp(pnp.subtract(a, top))
    if b is not None:
        terms = pnp.multiply(b, terms)
    total = pnp.sum(terms, axis=axes, keepdims=True)
    sign = pnp.sign(total)
    out = pnp.add(pnp.log(pnp.abs(total)), top)
    if not keepdims:
        out, sign = pnp.squeeze(out, axes), pnp.squeeze(sign, axes)
    if return_sign:
        return out, sign
    return out if b is None else pnp.where(pnp.less(sign, 0), np.nan, out)


# encoding ------------------------------------------------------------------------------------
def one_hot(x, num_classes: int, dtype=dtypes.float32, axis=-1):
    """``x[..., None] == arange(num_classes)`` as ``dtype``, the class axis at ``axis``.
    Indices outside ``[0, num_classes)`` encode as all zeros."""
    x = pnp.asarray(x)
    num_classes = operator.index(num_classes)
    out_axis = operator.index(axis)
    if not -(x.ndim + 1) <= out_axis <= x.ndim:
        raise AxisError(f"one_hot: axis {axis} is out of bounds for a result of rank "
                        f"{x.ndim + 1}", user_frame())
    out_axis %= x.ndim + 1
    classes_shape = [1] * x.ndim
    classes_shape.insert(out_axis, num_classes)
    classes = lax.broadcasted_iota(x.dtype, classes_shape, out_axis)
    return pnp.equal(pnp.expand_dims(x, out_axis), classes).astype(dtype)


# normalization -------------------------------------------------------------------------------
def _compute_dtype(dtype):
    """float16/bfloat16 statistics are computed in float32."""
    return dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


def _upcast(name, x):
    """(the input dtype, ``x`` as a float array in its compute dtype)."""
    x = _float(name, x)
    return x.dtype, x.astype(_compute_dtype(x.dtype))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, algorithm="stable"):
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``; ``mean``/``variance`` default
    to the statistics of ``x``. ``algorithm="stable"`` (the default) computes the variance
    as ``mean((x - mean)^2)``; ``"fast"`` as ``mean(x^2) - mean^2`` (clipped at 0), which is
    prone to cancellation."""
    dtype, x = _upcast("standardize", x)
    return _standardize(x, _axes(x, axis), mean, variance, epsilon, algorithm).astype(dtype)


def _standardize(x, axes, mean, variance, epsilon, algorithm):
    if mean is None:
        mean = pnp.mean(x, axis=axes, keepdims=True)
    if variance is None:
        variance = _variance(x, mean, axes, algorithm)
    return pnp.multiply(pnp.subtract(x, mean), lax.rsqrt(pnp.add(variance, epsilon)))


def _variance(x, mean, axes, algorithm):
    if algorithm == "stable":
        return pnp.mean(pnp.square(pnp.subtract(x, mean)), axis=axes, keepdims=True)
    if algorithm == "fast":
        raw = pnp.subtract(pnp.mean(pnp.square(x), axis=axes, keepdims=True), pnp.square(mean))
        return pnp.maximum(raw, 0)
    raise ValueError(f"standardize: algorithm must be 'stable' or 'fast', got {algorithm!r}")


def layer_norm(x, scale=None, bias=None, axis=-1, eps=1e-5):
    """Layer normalization ``standardize(x, axis) * scale + bias``, in ``x``'s dtype
    (``scale`` and ``bias`` broadcast against ``x``: shape ``(features,)`` for the default
    last axis)."""
    dtype, x = _upcast("layer_norm", x)
    out = _standardize(x, _axes(x, axis), None, None, eps, "stable")
    return _scale_shift(out, scale, bias).astype(dtype)


def rms_norm(x, scale=None, axis=-1, eps=1e-6):
    """RMS normalization ``x / sqrt(mean(x^2, axis) + eps) * scale``, in ``x``'s dtype."""
    dtype, x = _upcast("rms_norm", x)
    mean_square = pnp.mean(pnp.square(x), axis=_axes(x, axis), keepdims=True)
    out = pnp.multiply(x, lax.rsqrt(pnp.add(mean_square, eps)))
    return _scale_shift(out, scale, None).astype(dtype)


def _scale_shift(x, scale, bias):
    if scale is not None:
        x = pnp.multiply(x, pnp.asarray(scale).astype(x.dtype))
    if bias is not None:
        x = pnp.add(x, pnp.asarray(bias).astype(x.dtype))
    return x
