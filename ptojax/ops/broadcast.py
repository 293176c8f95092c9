"""``broadcast_in_dim`` and ``reduce_sum`` — each the other's transpose — with every fact, and
the helpers built on them: materializing symbolic zeros, fitting tangents to shapes, and
inserting a batch dimension."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import ShapeError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.operand import as_operand
from ptojax.eval import axis_env, numpy_fast
from ptojax.eval.array import Array
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref, sharding_rules as sr, tile_forms
from ptojax.ops.checks import check_axes, require_kind, user_axes
from ptojax.ops.costs import input_size, no_flops
from ptojax.ops.shape import canonical_axes, move_axis, reshape, shift_axes
from ptojax.ops.tangents import Zero, is_zero, linear_in_first_jvp
from ptojax.trace import Primitive
from ptojax.ir.symbolic import as_dim
from ptojax.public import add_examples as _add_examples


# broadcast_in_dim ------------------------------------------------------------------------------
def _broadcast_in_dim_abstract(x, shape, broadcast_dimensions):
    shape, bdims = tuple(shape), tuple(broadcast_dimensions)
    if len(bdims) != x.ndim:
        raise ShapeError(f"broadcast_in_dim: {x} needs {x.ndim} broadcast_dimensions, got "
                         f"{bdims}")
    if any(not 0 <= d < len(shape) for d in bdims) or list(bdims) != sorted(set(bdims)):
        raise ShapeError(f"broadcast_in_dim: broadcast_dimensions {bdims} must be increasing "
                         f"and within the rank of {shape}")
    for i, d in enumerate(bdims):
        if x.shape[i] not in (1, shape[d]):
            raise ShapeError(f"broadcast_in_dim: cannot broadcast {x} to shape {shape}: "
                             f"operand dimension {i} has size {x.shape[i]}, target dimension "
                             f"{d} has size {shape[d]}")
    return TensorType(shape, x.dtype, x.weak_type)


def _broadcast_in_dim(x, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(np.reshape(x, expanded), shape)


broadcast_in_dim_p = Primitive("broadcast_in_dim", _broadcast_in_dim_abstract,
                               _broadcast_in_dim, linear=True)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    x = as_operand("broadcast_in_dim", x)
    shape, bdims = tuple(map(as_dim, shape)), tuple(broadcast_dimensions)
    if tuple(x.shape) == shape and bdims == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=bdims)


def broadcast(x, sizes):
    """Prepend dimensions ``sizes``."""
    x = as_operand("broadcast", x)
    n = len(sizes)
    return broadcast_in_dim(x, (*sizes, *x.shape), tuple(range(n, n + x.ndim)))


def _broadcast_in_dim_transpose(ct, x, shape, broadcast_dimensions):
    in_shape = x.aval.shape
    new_dims = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    stretched = tuple(d for i, d in enumerate(broadcast_dimensions)
                      if in_shape[i] == 1 and shape[d] != 1)
    summed = reduce_sum(ct, tuple(sorted(new_dims + stretched)))
    return [reshape(summed, in_shape)]


def _broadcast_in_dim_batch(args, dims, shape, broadcast_dimensions):
    """The batch goes into the output where it keeps ``broadcast_dimensions`` increasing."""
    (x,), (bd,) = args, dims
    bdims = tuple(broadcast_dimensions)
    out_dim = bdims[bd] if bd < len(bdims) else (bdims[-1] + 1 if bdims else 0)
    new_bdims = (*bdims[:bd], out_dim, *(d + 1 for d in bdims[bd:]))
    out_shape = (*shape[:out_dim], x.shape[bd], *shape[out_dim:])
    return broadcast_in_dim_p.bind(x, shape=out_shape,
                                   broadcast_dimensions=new_bdims), out_dim


def _broadcast_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    shape, bdims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
    in_shape = sr.shape_of(eqn.inputs[0])
    out = [None] * len(shape)
    operand = []
    for i, d in enumerate(bdims):
        if in_shape[i] == shape[d]:
            out[d] = f.new(shape[d])
            operand.append(out[d])
        else:
            operand.append(())
    out = [f.new(n) if x is None else x for x, n in zip(out, shape)]
    return f.rule([operand], [out])


broadcast_in_dim_p.define(
    jvp=linear_in_first_jvp(broadcast_in_dim_p),
    transpose=_broadcast_in_dim_transpose,
    batch=_broadcast_in_dim_batch,
    shard=sr.ShardRule(_broadcast_factors, sr.out_shape_param("shape"), linear="unary"),
    tile=tile_forms.BROADCAST, cost=no_flops, reference=ref.lax_op("broadcast_in_dim"))


# reduce_sum ------------------------------------------------------------------------------------
def reduce_abstract(name, kind, keep_weak=True):
    """Abstract eval of a reduction over ``axes`` of operand kind ``kind``; weak of a weak
    operand when ``keep_weak`` (JAX's bitwise reductions are always strong)."""
    def abstract_eval(x, axes):
        require_kind(name, x, kind)
        axes = check_axes(name, axes, x.ndim)
        return TensorType(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype,
                          x.weak_type and keep_weak)
    return abstract_eval


def sum_impl(x, axes):   # the ufunc's own reduce: np.sum's wrapper costs ~1 us a call
    if dtypes.accumulates_in_f32(x.dtype):
        return numpy_fast.add_reduce(x, axes, np.float32).astype(x.dtype)
    return numpy_fast.add_reduce(x, axes, x.dtype)


reduce_sum_p = Primitive("reduce_sum", reduce_abstract("reduce_sum", "any"), sum_impl,
                         linear=True)


def reduce_sum(x, axes):
    check_arraylike("reduce_sum", x)
    return reduce_sum_p.bind(x, axes=tuple(sorted(user_axes("reduce_sum", axes, x.ndim))))


def reduce_batch(prim):
    """Batching rule of a reduction over ``axes``: the axes shift around the batch."""
    def rule(args, dims, axes):
        (x,), (bd,) = args, dims
        axes = shift_axes(canonical_axes(axes, x.ndim - 1), bd)
        return prim.bind(x, axes=axes), bd - sum(a < bd for a in axes)
    return rule


def _reduce_sum_transpose(ct, x, axes):
    kept = tuple(d for d in range(len(x.aval.shape)) if d not in axes)
    return [broadcast_in_dim(ct, x.aval.shape, kept)]


reduce_sum_p.define(
    jvp=linear_in_first_jvp(reduce_sum_p),
    transpose=_reduce_sum_transpose,
    batch=reduce_batch(reduce_sum_p),
    shard=sr.ShardRule(sr.reduce_factors("sum"), linear="unary"),
    tile=tile_forms.reduction(column_sum=True, accumulate_f32=True),
    cost=input_size,
    reference=ref.widened(ref.lax_reduce("add", lambda dtype: 0)))


# helpers: symbolic zeros and batch dimensions ---------------------------------------------------
def zeros(aval):
    """An array of zeros of ``aval``'s shape and dtype (a broadcast scalar: no arithmetic, so
    no NaN from ``x * 0`` when ``x`` is infinite)."""
    return broadcast_in_dim(Array(np.zeros((), aval.dtype)), aval.shape, ())


def zeros_like(x):
    return zeros(x.aval.strip_weak())


def instantiate(t, aval=None):
    """A tangent as an array: a symbolic Zero becomes zeros."""
    return zeros(t.aval if aval is None else aval) if type(t) is Zero else t


def fit_shape(t, shape):
    """A rank-0 tangent broadcast to ``shape`` (elementwise ops broadcast rank-0 operands)."""
    if type(t) is Zero or tuple(t.shape) == tuple(shape):
        return t
    return broadcast_in_dim(t, shape, ())


def unbroadcast(ct, aval):
    """The cotangent of a rank-0 operand that was broadcast: sum over everything."""
    if type(ct) is Zero or tuple(ct.shape) == tuple(aval.shape):
        return ct
    return reduce_sum(ct, tuple(range(ct.ndim)))


def linear_jvp(prim):
    """A primitive linear in all its operands: its tangent is itself applied to the
    tangents (symbolic zeros materialized)."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(is_zero(t) for t in tangents):
            return out, Zero(out.aval)
        return out, prim.bind(*[instantiate(t) for t in tangents], **params)
    return rule


def broadcast_at(x, dim, size=None):
    """``x`` with a new dimension of the batch size (or ``size``) inserted at ``dim``."""
    shape = list(x.shape)
    shape.insert(dim, axis_env.batch_axis_size() if size is None else size)
    return broadcast_in_dim(x, tuple(shape), tuple(d for d in range(len(shape)) if d != dim))


def to_front(x, d):
    """``x`` with its batch dimension first (unbatched values are broadcast)."""
    return broadcast_at(x, 0) if d is None else move_axis(x, d, 0)


def broadcast_shapes(*shapes):
    """The shape NumPy broadcasting gives ``shapes`` (ranks aligned at the right), as JAX's
    ``lax.broadcast_shapes``."""
    shapes = [tuple(s) for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def broadcast_to_rank(x, rank):
    """``x`` with leading size-1 dimensions added up to ``rank``."""
    ndim = np.ndim(x)
    if ndim == rank:
        if hasattr(x, "aval"):    # an Array or a Tracer
            return x
        return Array(dtypes.canonical_value(x) if isinstance(x, (np.ndarray, np.generic))
                     else np.asarray(x, dtypes.python_scalar_dtype(x)))
    return broadcast(x, (1,) * (rank - ndim))

_add_examples(globals(), """
broadcast_shapes:
    >>> pto.lax.broadcast_shapes((2, 1), (3,))
    (2, 3)
broadcast_to_rank:
    >>> pto.lax.broadcast_to_rank(pnp.ones(3), 3).shape
    (1, 1, 3)
broadcast_in_dim: ``operand`` broadcast to ``shape``: its dimension ``i`` becomes dimension
    ``broadcast_dimensions[i]`` of the result.
    >>> pto.lax.broadcast_in_dim(pnp.array([1, 2]), (2, 2), (0,))
    Array([[1, 1],
           [2, 2]], dtype=int32)
reduce_sum: The sum of ``operand`` over ``axes``.
    >>> pto.lax.reduce_sum(pnp.arange(6).reshape(2, 3), (1,))
    Array([ 3, 12], dtype=int32)
broadcast:
    >>> pto.lax.broadcast(pnp.array([1, 2]), (3,))
    Array([[1, 2],
           [1, 2],
           [1, 2]], dtype=int32)
""")
