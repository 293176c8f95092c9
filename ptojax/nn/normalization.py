"""Normalization: ``standardize`` (JAX's), ``layer_norm`` and ``rms_norm``.

Float16/bfloat16 inputs compute their statistics in float32 and return the input dtype.
"""
from __future__ import annotations

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.nn.activations import float_input
from ptojax.numpy._axes import normalize_axes


def _compute_dtype(dtype):
    """float16/bfloat16 statistics are computed in float32."""
    return dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


def _upcast(name, x):
    """(the input dtype, ``x`` as a float array in its compute dtype)."""
    x = float_input(name, x)
    return x.dtype, x.astype(_compute_dtype(x.dtype))


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="stable"):
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``.

    Args:
      x: input array.
      axis: an int, a tuple of ints or None (all axes), default -1.
      mean: the mean to use; default ``x``'s mean over ``axis``.
      variance: the variance to use; default ``x``'s variance over ``axis``.
      epsilon: added to the variance, default 1e-5.
      where: optional boolean mask of the elements the statistics include.
      algorithm: ``"stable"`` (the default here; JAX's default is ``"fast"``) computes
        the variance as ``mean((x - mean)^2)``, ``"fast"`` as ``mean(x^2) - mean^2``
        clipped at 0, which is prone to cancellation.

    Returns:
      An array of ``x``'s shape and (float) dtype.

    Example:
      >>> pto.nn.standardize(pnp.array([1.0, 3.0]))
      Array([-0.999995,  0.999995], dtype=float32)
    """
    dtype, x = _upcast("standardize", x)
    axes = normalize_axes("standardize", axis, x.ndim)
    return _standardize(x, axes, mean, variance, epsilon, algorithm, where).astype(dtype)


def _standardize(x, axes, mean, variance, epsilon, algorithm, where=None):
    if mean is None:
        mean = pnp.mean(x, axis=axes, keepdims=True, where=where)
    if variance is None:
        variance = _variance(x, mean, axes, algorithm, where)
    return pnp.multiply(pnp.subtract(x, mean), lax.rsqrt(pnp.add(variance, epsilon)))


def _variance(x, mean, axes, algorithm, where):
    if algorithm == "stable":
        return pnp.mean(pnp.square(pnp.subtract(x, mean)), axis=axes, keepdims=True,
                        where=where)
    if algorithm == "fast":
        raw = pnp.subtract(pnp.mean(pnp.square(x), axis=axes, keepdims=True, where=where),
                           pnp.square(mean))
        return pnp.maximum(raw, 0)
    raise ValueError(f"standardize: algorithm must be 'stable' or 'fast', got {algorithm!r}")


def layer_norm(x, scale=None, bias=None, axis=-1, eps=1e-5):
    """Layer normalization ``standardize(x, axis) * scale + bias`` (not in ``jax.nn``).

    Args:
      x: input array.
      scale: optional array broadcasting against ``x`` (shape ``(features,)`` for the
        default last axis).
      bias: optional array broadcasting against ``x``.
      axis: an int or a tuple of ints, default -1.
      eps: added to the variance, default 1e-5.

    Returns:
      An array of ``x``'s shape and dtype.

    Example:
      >>> pto.nn.layer_norm(pnp.array([1.0, 3.0]), scale=pnp.array([2.0, 2.0]))
      Array([-1.99999,  1.99999], dtype=float32)
    """
    dtype, x = _upcast("layer_norm", x)
    out = _standardize(x, normalize_axes("layer_norm", axis, x.ndim), None, None, eps,
                       "stable")
    return _scale_shift(out, scale, bias).astype(dtype)


def rms_norm(x, scale=None, axis=-1, eps=1e-6):
    """RMS normalization ``x / sqrt(mean(x^2, axis) + eps) * scale`` (not in ``jax.nn``).

    Args:
      x: input array.
      scale: optional array broadcasting against ``x``.
      axis: an int or a tuple of ints, default -1.
      eps: added to the mean square, default 1e-6.

    Returns:
      An array of ``x``'s shape and dtype.

    Example:
      >>> pto.nn.rms_norm(pnp.array([3.0, 4.0]))
      Array([0.8485281, 1.1313708], dtype=float32)
    """
    dtype, x = _upcast("rms_norm", x)
    axes = normalize_axes("rms_norm", axis, x.ndim)
    mean_square = pnp.mean(pnp.square(x), axis=axes, keepdims=True)
    out = pnp.multiply(x, lax.rsqrt(pnp.add(mean_square, eps)))
    return _scale_shift(out, scale, None).astype(dtype)


def _scale_shift(x, scale, bias):
    if scale is not None:
        x = pnp.multiply(x, pnp.asarray(scale).astype(x.dtype))
    if bias is not None:
        x = pnp.add(x, pnp.asarray(bias).astype(x.dtype))
    return x
