"""``sort``: stable sort of several same-shaped operands along one dimension, ordered by the
first ``num_keys`` of them (lexicographically), with every fact. NaNs sort last, as in JAX.

``top_k`` is a sort with descending keys (no primitive of its own: its gradient and batching
are the sort's)."""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import dtypes
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops import sharding_rules as sr
from ptojax.ops.broadcast import to_front
from ptojax.ops.arithmetic import div, neg
from ptojax.ops.convert import convert_element_type
from ptojax.ops.checks import check_axis, fmt_types, user_axis
from ptojax.ops.gather_scatter import gather
from ptojax.ops.logic import bitwise_and, bitwise_not, eq, lt
from ptojax.ops.shape import canonical_axes, example_ndim, move_axis, reshape
from ptojax.ops.slicing import broadcasted_iota, slice_in_dim
from ptojax.ops.tangents import Zero, is_zero
from ptojax.ir.symbolic import DimExpr, is_index_scalar
from ptojax.source_info import user_frame
from ptojax.trace import Primitive, Unsupported
from ptojax.public import add_examples as _add_examples


def _sort_abstract(*operands, dimension, num_keys=1):
    if not operands or any(o.shape != operands[0].shape for o in operands):
        raise ShapeError(f"sort: operands must share a shape, got {fmt_types(operands)}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys must be in 1..{len(operands)}, got {num_keys}")
    check_axis("sort", dimension, operands[0].ndim)
    return list(operands)


def _sort(*operands, dimension, num_keys=1):
    keys = operands[:num_keys]
    if num_keys == 1:
        order = np.argsort(keys[0], axis=dimension, kind="stable")
    else:  # lexsort is stable and takes its primary key last
        order = np.lexsort(tuple(reversed(keys)), axis=dimension)
    return [np.take_along_axis(o, order, axis=dimension) for o in operands]


sort_p = Primitive("sort", _sort_abstract, _sort, multiple_results=True)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort one array, or a tuple of arrays by the first ``num_keys`` of them."""
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    check_arraylike("sort", *operands)
    out = sort_p.bind(*operands, dimension=user_axis("sort", dimension, operands[0].ndim),
                      num_keys=int(num_keys))
    return out[0] if single else tuple(out)


def top_k(operand, k: int, *, axis: int = -1):
    """The ``k`` largest entries along ``axis`` (descending) and their int32 indices.

    The order is JAX's total order: NaN above +inf, +0 above -0; equal entries keep their
    index order. A sort of descending keys: for floats (NaN first, -x, the sign of zeros),
    for integers ``~x`` (which reverses the order without overflow)."""
    check_arraylike("top_k", operand)
    axis = user_axis("top_k", axis, operand.ndim)
    size = operand.shape[axis]
    if is_index_scalar(k) and type(k) is not DimExpr:
        k = operator.index(k)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= size:
        raise ShapeError(f"top_k: k must be an integer in 0..{size} (the size of axis "
                         f"{axis} of the {tuple(operand.shape)} operand), got {k!r}",
                         user_frame())
    iota = broadcasted_iota(dtypes.int32, operand.shape, axis)
    if dtypes.is_float(operand.dtype):
        negative_zero = bitwise_and(eq(operand, 0), lt(div(1, operand), 0))
        keys = [eq(operand, operand), neg(operand), negative_zero]
    else:
        keys = [bitwise_not(operand)]
    *_, values, indices = sort_p.bind(*keys, operand, iota, dimension=axis,
                                      num_keys=len(keys))
    indices = slice_in_dim(indices, 0, int(k), axis=axis)
    if getattr(operand, "weak_type", False):   # as JAX's: both results take its weak type
        indices = convert_element_type(indices, dtypes.int32, weak_type=True)
    return slice_in_dim(values, 0, int(k), axis=axis), indices


def _take_along(x, order, axis):
    """``x`` permuted along ``axis`` by the indices ``order`` (same shape)."""
    last = x.ndim - 1
    x, order = move_axis(x, axis, last), move_axis(order, axis, last)
    out = gather(x, reshape(order, (*order.shape, 1)), (0,), nbatch=last)
    return move_axis(out, last, axis)


def _sort_jvp(primals, tangents, dimension, num_keys=1):
    """Sort with an extra iota operand; the tangents follow the resulting permutation."""
    x0 = primals[0]
    iota = broadcasted_iota(dtypes.int32, x0.shape, dimension)
    *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, num_keys=num_keys)
    touts = [Zero(o.aval) if is_zero(t) else _take_along(t, perm, dimension)
             for o, t in zip(outs, tangents)]
    return outs, touts


def _sort_batch(args, dims, dimension, num_keys=1):
    (dimension,) = canonical_axes((dimension,), example_ndim(args[0], dims[0]))
    if len(set(dims)) == 1:  # every operand batched at one dimension: leave it there
        bd = dims[0]
        outs = sort_p.bind(*args, dimension=dimension + (dimension >= bd), num_keys=num_keys)
        return outs, [bd] * len(outs)
    args = [to_front(a, d) for a, d in zip(args, dims)]
    outs = sort_p.bind(*args, dimension=dimension + 1, num_keys=num_keys)
    return outs, [0] * len(outs)


def _sort_flops(eqn) -> int:
    x = eqn.inputs[0].type
    length = x.shape[eqn.params["dimension"]]
    return x.size * math.ceil(math.log2(length)) if length > 1 else 0


sort_p.define(
    jvp=_sort_jvp, batch=_sort_batch, shard=sr.ShardRule(sr.along_axis_factors("dimension")),
    tile=Unsupported("sorting has no tile rule"), cost=_sort_flops,
    reference=lambda jnp, lax: lambda *xs, dimension, num_keys=1: lax.sort(
        xs, dimension=dimension, is_stable=True, num_keys=num_keys))


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """``keys`` sorted along ``dimension``, and ``values`` permuted alike."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def _approx_k(name, operand, k, reduction_dimension, aggregate_to_topk):
    check_arraylike(name, operand)
    if not dtypes.is_float(operand.dtype):
        raise ValueError("operand must be a floating type")
    if not aggregate_to_topk:
        raise UnsupportedError(f"{name}: aggregate_to_topk=False (a partial reduction of "
                               f"backend-chosen size) is not supported; pass True")
    axis = user_axis(name, reduction_dimension, operand.ndim)
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if operand.shape[axis] < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim "
                         f"{operand.shape[axis]}, got {k}")
    return axis


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` largest entries along ``reduction_dimension`` and their indices, as JAX's
    ``lax.approx_max_k``; computed exactly (recall 1), as JAX does on CPU."""
    axis = _approx_k("approx_max_k", operand, k, reduction_dimension, aggregate_to_topk)
    return list(top_k(operand, k, axis=axis))


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` smallest entries along ``reduction_dimension`` and their indices (exact),
    as JAX's ``lax.approx_min_k``."""
    axis = _approx_k("approx_min_k", operand, k, reduction_dimension, aggregate_to_topk)
    iota = broadcasted_iota(dtypes.int32, tuple(operand.shape), axis)
    values, indices = sort((operand, iota), dimension=axis, num_keys=1)
    return [slice_in_dim(values, 0, k, axis=axis), slice_in_dim(indices, 0, k, axis=axis)]

_add_examples(globals(), """
approx_max_k:
    >>> pto.lax.approx_max_k(pnp.array([3.0, 1.0, 4.0, 1.5]), 2)
    [Array([4., 3.], dtype=float32), Array([2, 0], dtype=int32)]
approx_min_k:
    >>> pto.lax.approx_min_k(pnp.array([3.0, 1.0, 4.0, 1.5]), 2)
    [Array([1. , 1.5], dtype=float32), Array([1, 3], dtype=int32)]
sort:
    >>> pto.lax.sort(pnp.array([3, 1, 2]))
    Array([1, 2, 3], dtype=int32)
sort_key_val:
    >>> pto.lax.sort_key_val(pnp.array([3, 1, 2]), pnp.array([30, 10, 20]))
    (Array([1, 2, 3], dtype=int32), Array([10, 20, 30], dtype=int32))
top_k:
    >>> pto.lax.top_k(pnp.array([3, 1, 4, 1, 5]), 2)
    (Array([5, 4], dtype=int32), Array([4, 2], dtype=int32))
""")
