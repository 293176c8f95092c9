"""The elementwise family: how its primitives are made, batched and partitioned.

Operands of one elementwise equation share a dtype and a shape; a rank-0 operand broadcasts (so
``mul a 2.0:f32[]`` needs no broadcast). NumPy-style broadcasting and promotion happen in
``ptojax.numpy`` before anything is bound; the lax-level functions give a Python scalar the
dtype of the array it meets and broadcast size-1 dimensions of equal-rank operands (as
``jax.lax``). The members are defined by family: ``arithmetic.py``, ``logic.py``,
``convert.py``, ``complex_parts.py``, ``transcendental.py``, ``special.py``.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import IntegerOverflowError, ShapeError
from ptojax.eval import axis_env
from ptojax.eval.array import Array
from ptojax.eval.ieee import quietly
from ptojax.ir.symbolic import DimExpr
from ptojax.ir.types import TensorType
from ptojax.ops.dimension_size import dimension_size
from ptojax.ops import sharding_rules as sr
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.checks import broadcast_scalars, require_kind, require_same_dtype
from ptojax.ops.costs import output_size
from ptojax.ops.shape import example_ndim, move_axis
from ptojax.source_info import user_frame
from ptojax.trace import Primitive

ELEMENTWISE: list = []   # every elementwise primitive, in definition order


def elementwise_abstract(name, kind="num", result_dtype=None, nargs=None):
    """Operands of one dtype of ``kind`` and equal shapes (or rank 0); the result has their
    shape and their dtype (or ``result_dtype``: a comparison's bool), weak only when every
    operand is (as JAX's: ``w < 1.0`` of a weak ``w`` is a weak bool)."""
    def abstract_eval(*types):
        if nargs is not None and len(types) != nargs:
            raise ShapeError(f"{name} takes {nargs} operands, got {len(types)}")
        require_same_dtype(name, types)
        for t in types:
            require_kind(name, t, kind)
        shape = broadcast_scalars(name, types)
        weak = all(t.weak_type for t in types)
        return TensorType(shape, result_dtype or types[0].dtype, weak)
    return abstract_eval


def elementwise(name, impl, kind="num", result_dtype=None, nargs=None, *, abstract_eval=None,
                linear=False, shard_linear=None, **facts) -> Primitive:
    """An elementwise primitive with the family's batching, sharding and cost facts (``facts``
    adds or overrides them)."""
    prim = Primitive(name, abstract_eval or elementwise_abstract(name, kind, result_dtype, nargs),
                     impl, elementwise=True, linear=linear,
                     ufunc=impl if isinstance(impl, np.ufunc) else None)
    defaults = dict(batch=elementwise_batch(prim), shard=sr.elementwise(shard_linear),
                    cost=output_size)
    prim.define(**{**defaults, **facts})
    ELEMENTWISE.append(prim)
    return prim


# Python scalars and size-1 broadcasting of the lax-level functions ----------------------------
def scalar(value, dtype):
    """A Python scalar as a weakly typed 0-d Array of ``dtype`` (strong for a bool), which it
    must fit."""
    return Array(python_scalar_value(value, dtype, wrap=False),
                 weak_type=dtypes.python_scalar_is_weak(value))


@quietly   # a float beyond the dtype's range becomes inf without numpy's warning, as JAX
def python_scalar_value(value, dtype, wrap: bool) -> np.ndarray:
    """A Python scalar as a 0-d numpy value of ``dtype``. An int that does not fit wraps
    around (``wrap``, as JAX's convert_element_type) or is an IntegerOverflowError."""
    try:
        return np.asarray(value).astype(dtype) if wrap else np.asarray(value, dtype)
    except OverflowError:
        raise IntegerOverflowError(f"the Python int {value} does not fit "
                                   f"{dtypes.short_name(np.dtype(dtype))}", user_frame()) \
            from None


@quietly
def constant(value, dtype):
    """A strongly typed 0-d Array of ``dtype``."""
    return Array(np.asarray(value, dtype))


def zero_like(x):
    """A 0-d zero of ``x``'s dtype and weak type: a ``pad`` fill that leaves ``x``'s weak type
    as it is (the padded result is weak only when the fill is too, as JAX's)."""
    return Array(np.zeros((), x.dtype), weak_type=bool(x.weak_type))


def operands(*xs):
    """Python scalars take the dtype of the first array operand (a complex scalar meeting a
    real array stays complex, so the dtype check names the mismatch)."""
    dtype = next((x.dtype for x in xs if hasattr(x, "dtype")), None)
    if dtype is None:
        return xs
    return tuple(_scalar_operand(x, dtype) if type(x) in dtypes.PYTHON_SCALARS else
                 dimension_size(x, dtype) if type(x) is DimExpr else x for x in xs)


def _scalar_operand(x, dtype):
    if type(x) is complex and not dtypes.is_complex(dtype):
        return scalar(x, dtypes.complex_dtype(dtype))
    return scalar(x, dtype)


def broadcast_ones(xs):
    """Operands of one rank whose dimensions differ only where some are 1, broadcast to
    their common shape (as ``jax.lax``'s binary ops do); rank-0 operands stay scalars and
    anything else is left for the primitive to reject."""
    shapes = [tuple(getattr(x, "shape", ())) for x in xs]
    full = {s for s in shapes if s}
    if len(full) <= 1 or len({len(s) for s in full}) != 1:
        return xs
    target = []
    for sizes in zip(*full):
        other = {n for n in sizes if n != 1}
        if len(other) > 1:
            return xs
        target.append(other.pop() if other else 1)
    target = tuple(target)
    dims = tuple(range(len(target)))
    return tuple(x if s in ((), target) else broadcast_in_dim(x, target, dims)
                 for x, s in zip(xs, shapes))


def lax_function(prim):
    """The lax-level function of an elementwise primitive."""
    def fn(*xs):
        return prim.bind(*broadcast_ones(operands(*xs)))
    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise ``{prim.name}`` (operands share a dtype and a shape up to " \
                 f"size-1 dimensions, or are scalars)."
    return fn


# batching --------------------------------------------------------------------------------------
def elementwise_batch(prim):
    def rule(args, dims, **params):
        return prim.bind(*align_elementwise(args, dims), **params), elementwise_dim(args, dims)
    return rule


def elementwise_dim(args, dims):
    """The output batch dimension: that of the first full-rank batched operand."""
    rank = max(example_ndim(a, d) for a, d in zip(args, dims))
    return next((d for a, d in zip(args, dims) if d is not None and a.ndim == rank + 1), 0)


def align_elementwise(args, dims) -> list:
    """Operands of an elementwise primitive with the batch in one place: unbatched rank-0
    operands stay scalars (the primitive broadcasts them), the others get the full shape."""
    rank = max(example_ndim(a, d) for a, d in zip(args, dims))
    out_dim = elementwise_dim(args, dims)
    example = next(tuple(a.shape[:d] + a.shape[d + 1:]) if d is not None else tuple(a.shape)
                   for a, d in zip(args, dims) if example_ndim(a, d) == rank)
    out_shape = (*example[:out_dim], axis_env.batch_axis_size(), *example[out_dim:])
    fixed = []
    for a, d in zip(args, dims):
        if d is None:
            fixed.append(a if a.ndim == 0 else broadcast_in_dim(
                a, out_shape, tuple(k for k in range(rank + 1) if k != out_dim)))
        elif a.ndim == rank + 1:
            fixed.append(move_axis(a, d, out_dim))
        else:  # a batched per-example scalar
            fixed.append(broadcast_in_dim(a, out_shape, (out_dim,)))
    return fixed
