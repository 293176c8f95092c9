"""Channels-last convolution and pooling, as functions with ``flax.linen``'s conventions:
inputs ``(batch, *spatial, features)`` (the batch may be omitted), kernels
``(*window, in_features // feature_group_count, out_features)``.

``conv`` is ``lax.conv_general_dilated`` in the NHWC/HWIO layout; ``max_pool``, ``avg_pool``
and ``sum_pool`` are ``lax.reduce_window`` over the spatial dimensions."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.errors import ShapeError
from ptojax.nn.activations import float_input
from ptojax.source_info import user_frame

_SPATIAL = "HWDXYZUV"


def _layout(k: int) -> tuple:
    """('NHWC', 'HWIO', 'NHWC') for ``k`` spatial dimensions."""
    if k > len(_SPATIAL):
        raise ShapeError(f"at most {len(_SPATIAL)} spatial dimensions are supported, got {k}",
                         user_frame())
    s = _SPATIAL[:k]
    return f"N{s}C", f"{s}IO", f"N{s}C"


def _per_dim(name, value, k, default) -> tuple:
    if value is None:
        return (default,) * k
    if isinstance(value, int):
        return (value,) * k
    value = tuple(value)
    if len(value) != k:
        raise ShapeError(f"{name} has {len(value)} entries for {k} spatial dimensions",
                         user_frame())
    return value


def _padding(padding, k):
    """A padding string, or one int / pair per dimension (an int pads both sides)."""
    if isinstance(padding, str):
        return padding.upper()
    if isinstance(padding, int):
        return ((padding, padding),) * k
    return tuple((p, p) if isinstance(p, int) else tuple(p) for p in padding)


def _batched(x, k):
    """``x`` with a leading batch dimension, and whether one was added."""
    if x.ndim == k + 1:
        return pnp.expand_dims(x, 0), True
    if x.ndim != k + 2:
        raise ShapeError(f"expected inputs of rank {k + 1} or {k + 2} (batch, {k} spatial, "
                         f"features), got shape {tuple(x.shape)}", user_frame())
    return x, False


def conv(x, kernel, strides=None, padding="SAME", input_dilation=None, kernel_dilation=None,
         feature_group_count=1, bias=None, preferred_element_type=None):
    """Convolve channels-last ``x`` with ``kernel`` of shape ``(*window, in // groups, out)``,
    then add ``bias`` (shape ``(out,)``) if given."""
    x, kernel = pnp.asarray(x), pnp.asarray(kernel)
    k = kernel.ndim - 2
    x, added = _batched(x, k)
    y = lax.conv_general_dilated(
        x, kernel, _per_dim("strides", strides, k, 1), _padding(padding, k),
        lhs_dilation=_per_dim("input_dilation", input_dilation, k, 1),
        rhs_dilation=_per_dim("kernel_dilation", kernel_dilation, k, 1),
        dimension_numbers=_layout(k), feature_group_count=feature_group_count,
        preferred_element_type=preferred_element_type)
    if bias is not None:
        y = y + pnp.asarray(bias, y.dtype)
    return y[0] if added else y


def _pool(x, init, computation, window_shape, strides, padding):
    k = len(window_shape)
    x, added = _batched(pnp.asarray(x), k)
    y = lax.reduce_window(x, init, computation, (1, *window_shape, 1),
                          (1, *_per_dim("strides", strides, k, 1), 1),
                          _pool_padding(_padding(padding, k)))
    return y[0] if added else y


def _pool_padding(padding):
    return padding if isinstance(padding, str) else ((0, 0), *padding, (0, 0))


def max_pool(x, window_shape, strides=None, padding="VALID"):
    """The maximum of each window over the spatial dimensions of channels-last ``x``."""
    x = pnp.asarray(x)
    init = -np.inf if dtypes.is_float(x.dtype) else int(np.iinfo(x.dtype).min)
    return _pool(x, init, lax.max, window_shape, strides, padding)


def sum_pool(x, window_shape, strides=None, padding="VALID"):
    """The sum of each window over the spatial dimensions of channels-last ``x``."""
    return _pool(x, 0, lax.add, window_shape, strides, padding)


def avg_pool(x, window_shape, strides=None, padding="VALID", count_include_pad=True):
    """The mean of each window; with ``count_include_pad=False`` padding is not counted."""
    x = float_input("avg_pool", x)
    total = sum_pool(x, window_shape, strides, padding)
    if count_include_pad:
        return total / np.prod(window_shape)
    ones = pnp.ones(x.shape[-len(window_shape) - 1:-1] + (1,), x.dtype)
    return total / sum_pool(ones, window_shape, strides, padding)
