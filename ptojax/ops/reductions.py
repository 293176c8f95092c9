"""Reductions — max min prod and or xor over axes, argmax/argmin — with every fact (``reduce_sum``,
the transpose of broadcasting, is in ``broadcast.py``).

max/min split the tangent equally among tied elements (as JAX); the product's derivative is
exact where some elements are zero.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import AxisError
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref, sharding_rules as sr, tile_forms
from ptojax.ops.arithmetic import div, mul, ones_like
from ptojax.ops.broadcast import broadcast_in_dim, reduce_abstract, reduce_batch, reduce_sum
from ptojax.ops.checks import check_axis, require_kind, user_axes, user_axis
from ptojax.ops.convert import convert_element_type
from ptojax.ops.costs import input_size
from ptojax.ops.cumulative import cumprod
from ptojax.ops.logic import eq
from ptojax.ops.shape import canonical_axes, reshape, shift_axes, transpose
from ptojax.ops.slicing import concatenate, slice_in_dim
from ptojax.ops.tangents import Zero, is_zero, zero_jvp
from ptojax.trace import Primitive, Unsupported


def _identity(x, lowest: bool):
    if x.dtype == dtypes.bool_:
        return not lowest
    if dtypes.is_inexact(x.dtype):   # complex values compare by real part first
        return -np.inf if lowest else np.inf
    info = np.iinfo(x.dtype)
    return info.min if lowest else info.max


def _lowest(dtype):
    return -np.inf if dtypes.is_inexact(dtype) else np.iinfo(dtype).min


def _highest(dtype):
    return np.inf if dtypes.is_inexact(dtype) else np.iinfo(dtype).max


def max_impl(x, axes):
    return np.maximum.reduce(x, axis=axes, initial=_identity(x, True))


def min_impl(x, axes):
    return np.minimum.reduce(x, axis=axes, initial=_identity(x, False))


def _prod(x, axes):
    if dtypes.accumulates_in_f32(x.dtype):
        return np.prod(x, axis=axes, dtype=np.float32).astype(x.dtype)
    return np.prod(x, axis=axes, dtype=x.dtype)


def _kept_dims(ndim, axes):
    return tuple(d for d in range(ndim) if d not in axes)


def _extremum_jvp(prim):
    def rule(primals, tangents, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        if is_zero(t):
            return out, Zero(out.aval)
        hit = convert_element_type(eq(x, broadcast_in_dim(out, x.shape,
                                                          _kept_dims(x.ndim, axes))), x.dtype)
        return out, div(reduce_sum(mul(t, hit), axes), reduce_sum(hit, axes))
    return rule


def _prod_jvp(primals, tangents, axes):
    """d prod = sum_j t_j * prod_{k != j} x_k, with the exclusive products computed by
    forward and reverse cumulative products (exact even where some x_k == 0)."""
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if is_zero(t) or n == 0:  # an empty product is the constant 1
        return out, Zero(out.aval)
    kept = _kept_dims(x.ndim, axes)
    perm = kept + tuple(axes)
    flat = reshape(transpose(x, perm), tuple(x.shape[d] for d in kept) + (n,))
    tflat = reshape(transpose(t, perm), tuple(x.shape[d] for d in kept) + (n,))
    last = flat.ndim - 1
    ones = ones_like(slice_in_dim(flat, 0, 1, 1, last))
    before = concatenate([ones, slice_in_dim(cumprod(flat, last), 0, n - 1, 1, last)], last)
    after = concatenate([slice_in_dim(cumprod(flat, last, reverse=True), 1, n, 1, last), ones],
                        last)
    return out, reduce_sum(mul(tflat, mul(before, after)), (last,))


def _reduction(name, impl, kind, shard_kind, reference, **facts):
    prim = Primitive(name, reduce_abstract(name, kind), impl)
    prim.define(batch=reduce_batch(prim), shard=sr.ShardRule(sr.reduce_factors(shard_kind)),
                cost=input_size, reference=reference, **facts)
    return prim


reduce_max_p = _reduction("reduce_max", max_impl, "any", "max", ref.lax_reduce("max", _lowest),
                          tile=tile_forms.reduction())
reduce_min_p = _reduction("reduce_min", min_impl, "any", "min", ref.lax_reduce("min", _highest),
                          tile=tile_forms.reduction())
reduce_max_p.define(jvp=_extremum_jvp(reduce_max_p))
reduce_min_p.define(jvp=_extremum_jvp(reduce_min_p))
reduce_prod_p = _reduction("reduce_prod", _prod, "any", "",
                           ref.widened(ref.lax_reduce("mul", lambda d: 1)), jvp=_prod_jvp,
                           tile=Unsupported("product reductions have no PTO row instruction"))
_BITS = Unsupported("bitwise and boolean reductions have no tile rule")


def _bitwise_reduction(name, ufunc, identity):
    """reduce_and/or/xor: logical on bools, bitwise on integers (as JAX)."""
    prim = _reduction(name, lambda x, axes: ufunc.reduce(x, axis=axes), "int_or_bool", "",
                      ref.lax_reduce(f"bitwise_{name[len('reduce_'):]}", identity), tile=_BITS)
    prim.define(jvp=zero_jvp(prim))
    return prim


reduce_and_p = _bitwise_reduction("reduce_and", np.bitwise_and,
                                  lambda d: True if d == dtypes.bool_ else -1)
reduce_or_p = _bitwise_reduction("reduce_or", np.bitwise_or, lambda d: 0)
reduce_xor_p = _bitwise_reduction("reduce_xor", np.bitwise_xor, lambda d: 0)


def _lax_reduction(prim):
    def fn(x, axes):
        return prim.bind(x, axes=tuple(sorted(user_axes(prim.name, axes, x.ndim))))
    fn.__name__ = prim.name
    fn.__doc__ = f"``{prim.name}`` over ``axes`` (negative axes count from the end)."
    return fn


reduce_max, reduce_min, reduce_prod, reduce_and, reduce_or, reduce_xor = map(_lax_reduction, (
    reduce_max_p, reduce_min_p, reduce_prod_p, reduce_and_p, reduce_or_p, reduce_xor_p))


# arg-reductions ----------------------------------------------------------------------------------
def _arg_abstract(name):
    def abstract_eval(x, axis, index_dtype):
        require_kind(name, x, "ordered")
        axis = check_axis(name, axis, x.ndim)
        if x.shape[axis] == 0:
            raise AxisError(f"{name}: axis {axis} has size 0; there is no extremum")
        index_dtype = dtypes.canonicalize(index_dtype)
        if not dtypes.is_integer(index_dtype):
            raise TypeError(f"{name}: index_dtype must be an integer dtype")
        return TensorType(tuple(d for i, d in enumerate(x.shape) if i != axis), index_dtype)
    return abstract_eval


def _arg_batch(prim):
    def rule(args, dims, axis, index_dtype):
        (x,), (bd,) = args, dims
        (axis,) = shift_axes(canonical_axes((axis,), x.ndim - 1), bd)
        return prim.bind(x, axis=axis, index_dtype=index_dtype), bd - (axis < bd)
    return rule


def _arg_reduction(name, np_fn):
    prim = Primitive(name, _arg_abstract(name),
                     lambda x, axis, index_dtype: np_fn(x, axis=axis).astype(index_dtype))

    def reference(jnp, lax):
        fn = getattr(jnp, name)
        return lambda x, axis, index_dtype: fn(x, axis).astype(index_dtype)

    prim.define(jvp=zero_jvp(prim), batch=_arg_batch(prim),
                shard=sr.ShardRule(sr.along_axis_factors("axis")),
                tile=Unsupported("arg-reductions have no tile rule"), cost=input_size,
                reference=reference)
    return prim


argmax_p = _arg_reduction("argmax", np.argmax)
argmin_p = _arg_reduction("argmin", np.argmin)


def argmax(x, axis, index_dtype=dtypes.int32):
    return argmax_p.bind(x, axis=user_axis("argmax", axis, x.ndim),
                         index_dtype=dtypes.canonicalize(index_dtype))


def argmin(x, axis, index_dtype=dtypes.int32):
    return argmin_p.bind(x, axis=user_axis("argmin", axis, x.ndim),
                         index_dtype=dtypes.canonicalize(index_dtype))
