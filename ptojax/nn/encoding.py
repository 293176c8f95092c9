"""``one_hot``: indices to one-hot vectors, along an array axis or a named (vmap/shard_map)
axis."""
from __future__ import annotations

import operator

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.errors import AxisError, ShapeError
from ptojax.source_info import user_frame


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
    """``x[..., None] == arange(num_classes)`` as ``dtype``, the class axis at ``axis``.

    Args:
      x: integer array of class indices; indices outside ``[0, num_classes)`` encode as all
        zeros.
      num_classes: the number of classes (a static int).
      dtype: the result dtype, default float32 (float64 in x64 mode).
      axis: where the class axis goes (an int), or the name of a mapped axis bound by
        ``pto.vmap(axis_name=...)``/``pto.shard_map``, whose size must be ``num_classes``:
        then each position along that axis gets ``x == its index``.

    Returns:
      An array of rank ``x.ndim + 1`` (or of ``x``'s shape for a named axis).

    Example:
      >>> pto.nn.one_hot(pnp.array([0, 2]), 3)
      Array([[1., 0., 0.],
             [0., 0., 1.]], dtype=float32)
    """
    x = pnp.asarray(x)
    num_classes = operator.index(num_classes)
    dtype = dtypes.default_float() if dtype is None else dtype
    if isinstance(axis, str) or isinstance(axis, tuple) and all(
            isinstance(a, str) for a in axis):
        return _one_hot_named(x, num_classes, dtype, axis)
    out_axis = operator.index(axis)
    if not -(x.ndim + 1) <= out_axis <= x.ndim:
        raise AxisError(f"one_hot: axis {axis} is out of bounds for a result of rank "
                        f"{x.ndim + 1}", user_frame())
    out_axis %= x.ndim + 1
    classes_shape = [1] * x.ndim
    classes_shape.insert(out_axis, num_classes)
    classes = lax.broadcasted_iota(x.dtype, classes_shape, out_axis)
    return pnp.equal(pnp.expand_dims(x, out_axis), classes).astype(dtype)


def _one_hot_named(x, num_classes, dtype, axis_name):
    size = lax.axis_size(axis_name)
    if size != num_classes:
        raise ShapeError(f"one_hot: num_classes={num_classes} must equal the size {size} of "
                         f"the named axis {axis_name!r}", user_frame())
    return pnp.equal(x, lax.axis_index(axis_name).astype(x.dtype)).astype(dtype)
