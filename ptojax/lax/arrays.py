"""The small array helpers of ``jax.lax``: ``empty``, ``stack``/``unstack``,
``broadcast_like``, ``stage``, ``shape_as_value`` and ``dtype``, written with the primitives'
functions (so jit, grad and vmap come from them)."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.eval.array import Array
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.checks import user_axis
from ptojax.ops.dimension_size import dimension_size
from ptojax.ops.operand import as_operand
from ptojax.ops.shape import expand_dims, squeeze
from ptojax.ops.slicing import concatenate, full, index_in_dim
from ptojax.public import add_examples as _add_examples


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose values are unspecified (JAX's
    ``lax.empty``); ptojax fills it with zeros, and a 64-bit ``dtype`` is narrowed without
    x64 (JAX keeps it)."""
    del out_sharding   # one device: every sharding is the replicated one
    return full(tuple(shape), 0, dtypes.canonical_dtype(dtype))


def stack(operands, axis: int = 0):
    """``operands`` (arrays of one shape and dtype) joined along a new ``axis``."""
    operands = [as_operand("stack", x) for x in operands]
    if not operands:
        raise IndexError("lax.stack: needs at least one operand, got none")
    kinds = [dtypes.canonical_dtype(x.dtype) for x in operands]   # Python scalars: defaults
    if len(set(kinds)) > 1:
        raise TypeError(f"lax.stack requires arguments to have the same dtypes, got "
                        f"{', '.join(d.name for d in kinds)}.")
    shapes = {tuple(x.shape) for x in operands}
    if len(shapes) > 1:
        raise ValueError(f"All input arrays must have the same shape. Got "
                         f"{', '.join(str(tuple(x.shape)) for x in operands)}.")
    axis = user_axis("stack", axis, len(operands[0].shape) + 1)
    return concatenate([expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis: int = 0):
    """The slices of ``x`` along ``axis``, as a tuple of arrays with that axis removed."""
    x = as_operand("unstack", x)
    axis = user_axis("unstack", axis, x.ndim)
    return tuple(squeeze(index_in_dim(x, i, axis), (axis,)) for i in range(x.shape[axis]))


def broadcast_like(arr, like_arr):
    """``arr`` broadcast (NumPy-style, trailing dimensions aligned) to the shape of
    ``like_arr``, keeping its own dtype."""
    check_arraylike("broadcast_like", arr, like_arr)
    x, like = as_operand("broadcast_like", arr), as_operand("broadcast_like", like_arr)
    shape, lead = tuple(like.shape), len(like.shape) - x.ndim
    if lead < 0 or any(d not in (1, s) for d, s in zip(x.shape, shape[lead:])):
        raise ValueError(f"Incompatible types for broadcasting: input shape {tuple(x.shape)} "
                         f"and requested shape {shape}")
    if tuple(x.shape) == shape:
        return x
    keep = [i for i, d in enumerate(x.shape) if d == shape[lead + i]]
    x = squeeze(x, tuple(i for i in range(x.ndim) if i not in keep)) if len(keep) < x.ndim else x
    return broadcast_in_dim(x, shape, tuple(lead + i for i in keep))


def stage(x, /):
    """``x`` as an array (a traced value under a transformation): Python scalars keep their
    weak type and numpy inputs take their canonical dtype."""
    check_arraylike("stage", x)
    x = as_operand("stage", x)
    if isinstance(x, np.ndarray) or np.isscalar(x):
        return Array(dtypes.canonical_value(x))
    return x


def shape_as_value(shape):
    """``shape`` as a 1-D int32 array; symbolic dimensions are read at run time."""
    if not shape:
        return full((0,), 0, dtypes.int32)
    return stack([dimension_size(d, dtypes.int32) if not isinstance(d, (int, np.integer))
                  else full((), d, dtypes.int32) for d in shape])


def dtype(x):
    """The canonical dtype of a value (array, scalar) or a dtype-like (JAX's ``lax.dtype``):
    Python scalars give the default dtypes; 64-bit types are narrowed without x64 (with
    JAX's warning for an explicit 64-bit type)."""
    if type(x) in dtypes.PYTHON_SCALARS:
        return dtypes.python_scalar_dtype(x)
    if isinstance(x, type) and x in (bool, int, float, complex):
        return dtypes.canonical_dtype(x)
    found = getattr(x, "dtype", None)
    if found is not None and not isinstance(x, type):
        return dtypes.canonical_dtype(found)
    try:
        return dtypes.user_dtype(x, "dtype")
    except dtypes.DtypeError:
        raise TypeError(f"Cannot determine dtype of {x!r}") from None


_add_examples(globals(), """
empty:
    >>> pto.lax.empty((2, 3), pnp.float32).shape
    (2, 3)
stack:
    >>> pto.lax.stack([pnp.array([1, 2]), pnp.array([3, 4])], axis=1)
    Array([[1, 3],
           [2, 4]], dtype=int32)
unstack:
    >>> pto.lax.unstack(pnp.array([[1, 2], [3, 4]]))
    (Array([1, 2], dtype=int32), Array([3, 4], dtype=int32))
broadcast_like:
    >>> pto.lax.broadcast_like(pnp.array([1.0, 2.0]), pnp.zeros((2, 2), pnp.int32))
    Array([[1., 2.],
           [1., 2.]], dtype=float32)
stage:
    >>> pto.lax.stage(3.0)
    Array(3., dtype=float32, weak_type=True)
shape_as_value:
    >>> pto.lax.shape_as_value((2, 3))
    Array([2, 3], dtype=int32)
dtype:
    >>> pto.lax.dtype(1.0), pto.lax.dtype(pnp.ones(2, pnp.int8))
    (dtype('float32'), dtype('int8'))
""")
