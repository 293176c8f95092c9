"""``jax.ops``: reductions within segments of an array's leading axis (``segment_sum``,
``segment_prod``, ``segment_max``, ``segment_min``), as JAX defines them.

Each is a scatter (``windowed_indexing``) of ``data`` into an array of ``num_segments`` rows
filled with the combiner's identity, so autodiff and vmap come from the scatter primitive's
facts. ``bucket_size`` scatters into one such array per bucket of ``bucket_size`` consecutive
rows of ``data`` and then reduces over the buckets (for the accuracy of long sums), as JAX.
By default an id outside ``[0, num_segments)`` is dropped (mode ``FILL_OR_DROP``).
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import ConcretizationError, non_array_error
from ptojax.eval.array import Array
from ptojax.ops.broadcast import reduce_sum
from ptojax.ops.convert import convert_element_type
from ptojax.ops.reductions import reduce_max, reduce_min, reduce_prod
from ptojax.ops.shape import expand_dims
from ptojax.ops.slicing import broadcasted_iota, concatenate, full
from ptojax.ops.arithmetic import div
from ptojax.ops.windowed_indexing import (GatherScatterMode, ScatterDimensionNumbers,
                                          scatter_add, scatter_max, scatter_min, scatter_mul)
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def _as_array(name, x):
    """``x`` as an array (JAX's ``check_arraylike``: lists and tuples are refused)."""
    if isinstance(x, (Array, Tracer)):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return Array(dtypes.canonical_value(x))
    if isinstance(x, (bool, int, float, complex)):
        return Array(np.asarray(x, dtypes.python_scalar_dtype(x)))
    raise non_array_error(x, name, user_frame())


def _identity(combiner, dtype):
    if combiner == "add":
        return np.zeros((), dtype)
    if combiner == "mul":
        return np.ones((), dtype)
    lowest = combiner == "max"
    if dtype == dtypes.bool_:
        return np.asarray(not lowest)
    return np.asarray(dtypes.lowest(dtype) if lowest else dtypes.highest(dtype), dtype)


def _num_segments(name, segment_ids, num_segments):
    if num_segments is None:
        if isinstance(segment_ids, Tracer):
            raise ConcretizationError(
                f"{name}: num_segments is needed when segment_ids is traced (under jit, "
                f"grad or vmap): the output's size cannot depend on traced values; pass "
                f"num_segments (a static int)", user_frame())
        ids = np.asarray(segment_ids._value if isinstance(segment_ids, Array) else segment_ids)
        return int(np.max(ids)) + 1
    if isinstance(num_segments, (Array, Tracer)):
        raise ConcretizationError(f"{name}: num_segments must be a static int, got an array",
                                  user_frame())
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    return num_segments


_SCATTERS = {"add": scatter_add, "mul": scatter_mul, "max": scatter_max, "min": scatter_min}
_REDUCERS = {"add": reduce_sum, "mul": reduce_prod, "max": reduce_max, "min": reduce_min}


def _segment_reduce(name, combiner, data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode):
    data = _as_array(name, data)
    segment_ids = _as_array(name, segment_ids)
    if not dtypes.is_integer(segment_ids.dtype) or segment_ids.ndim != 1:
        raise TypeError(f"{name}: segment_ids must be a 1-D integer array, got "
                        f"{segment_ids.dtype}{list(segment_ids.shape)}")
    if data.ndim == 0 or data.shape[0] != segment_ids.shape[0]:
        raise ValueError(f"{name}: data's leading axis ({tuple(data.shape)}) must match "
                         f"segment_ids ({segment_ids.shape[0]} ids)")
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else mode
    n = _num_segments(name, segment_ids, num_segments)
    rest = tuple(data.shape[1:])
    identity = _identity(combiner, data.dtype)
    scatter = _SCATTERS[combiner]
    window = tuple(range(1, data.ndim))
    kw = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    if bucket_size is None:
        dn = ScatterDimensionNumbers(window, (0,), (0,))
        return scatter(full((n, *rest), identity), expand_dims(segment_ids, (1,)), data, dn,
                       **kw)
    rows = segment_ids.shape[0]
    buckets = -(-rows // bucket_size)
    bucket = div(broadcasted_iota(segment_ids.dtype, (rows, 1), 0),
                 np.asarray(bucket_size, segment_ids.dtype))
    indices = concatenate([bucket, expand_dims(segment_ids, (1,))], 1)
    dn = ScatterDimensionNumbers(window, (0, 1), (0, 1))
    out = scatter(full((buckets, n, *rest), identity), indices, data, dn, **kw)
    return convert_element_type(_REDUCERS[combiner](out, (0,)), data.dtype)


def _segment_function(name, combiner, doc):
    def fn(data, segment_ids, num_segments=None, indices_are_sorted=False,
           unique_indices=False, bucket_size=None, mode=None):
        return _segment_reduce(name, combiner, data, segment_ids, num_segments,
                               indices_are_sorted, unique_indices, bucket_size, mode)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {doc} within segments of ``data``'s leading axis, as JAX's "
                  f"``jax.ops.{name}``: shape ``(num_segments,) + data.shape[1:]``; an empty "
                  f"segment holds the identity. ``num_segments`` defaults to "
                  f"``max(segment_ids) + 1`` (static: pass it under jit).")
    return fn


segment_sum = _segment_function("segment_sum", "add", "sum")
segment_prod = _segment_function("segment_prod", "mul", "product")
segment_max = _segment_function("segment_max", "max", "maximum")
segment_min = _segment_function("segment_min", "min", "minimum")


_add_examples(globals(), """
segment_sum:
    >>> pto.ops.segment_sum(pnp.arange(5), pnp.array([0, 0, 1, 1, 2]))
    Array([1, 5, 4], dtype=int32)
segment_prod:
    >>> pto.ops.segment_prod(pnp.arange(1.0, 6.0), pnp.array([0, 0, 1, 1, 2]), 3)
    Array([ 2., 12.,  5.], dtype=float32)
segment_max:
    >>> pto.ops.segment_max(pnp.array([3, 1, 4, 1]), pnp.array([0, 0, 1, 1]))
    Array([3, 4], dtype=int32)
segment_min:
    >>> pto.ops.segment_min(pnp.array([3.0, 1.0]), pnp.array([0, 0]), num_segments=2)
    Array([ 1., inf], dtype=float32)
""")
