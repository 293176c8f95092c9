"""Reductions — max min prod and or xor over axes, argmax/argmin — with every fact
(``reduce_sum``, the transpose of broadcasting, is in ``broadcast.py``); ``lax.reduce`` with a
Python combiner.

max/min split the tangent equally among tied elements (as JAX); the product's derivative is
exact where some elements are zero.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import AxisError, ShapeError
from ptojax.eval.leaves import check_arraylike
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref, sharding_rules as sr, tile_forms
from ptojax.ops import arithmetic
from ptojax.ops.arithmetic import add, div, mul, ones_like
from ptojax.ops.broadcast import broadcast_in_dim, reduce_abstract, reduce_batch, reduce_sum
from ptojax.ops.checks import check_axis, require_kind, user_axes, user_axis
from ptojax.ops.convert import convert_element_type
from ptojax.ops.costs import input_size
from ptojax.ops.cumulative import cumprod
from ptojax.ops.logic import bitwise_and, bitwise_or, bitwise_xor, eq
from ptojax.ops.shape import canonical_axes, reshape, shift_axes, transpose
from ptojax.ops.slicing import concatenate, slice_in_dim
from ptojax.ops.tangents import Zero, is_zero, zero_jvp
from ptojax.source_info import user_frame
from ptojax.trace import Primitive, Tracer, Unsupported
from ptojax.pytree import tree_flatten
from ptojax.public import add_examples as _add_examples


def _identity(x, lowest: bool):
    if x.dtype == dtypes.bool_:
        return not lowest
    # complex values compare by real part first; a float without inf starts at its extreme
    return dtypes.lowest(x.dtype) if lowest else dtypes.highest(x.dtype)


def _lowest(dtype):
    return dtypes.lowest(dtype)


def _highest(dtype):
    return dtypes.highest(dtype)


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


def _reduction(name, impl, kind, shard_kind, reference, keep_weak=True, **facts):
    prim = Primitive(name, reduce_abstract(name, kind, keep_weak), impl)
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
    """reduce_and/or/xor: logical on bools, bitwise on integers, strongly typed (as JAX)."""
    prim = _reduction(name, lambda x, axes: ufunc.reduce(x, axis=axes), "int_or_bool", "",
                      ref.lax_reduce(f"bitwise_{name[len('reduce_'):]}", identity),
                      keep_weak=False, tile=_BITS)
    prim.define(jvp=zero_jvp(prim))
    return prim


reduce_and_p = _bitwise_reduction("reduce_and", np.bitwise_and,
                                  lambda d: True if d == dtypes.bool_ else -1)
reduce_or_p = _bitwise_reduction("reduce_or", np.bitwise_or, lambda d: 0)
reduce_xor_p = _bitwise_reduction("reduce_xor", np.bitwise_xor, lambda d: 0)


def _lax_reduction(prim):
    def fn(x, axes):
        check_arraylike(prim.name, x)
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
    check_arraylike("argmax", x)
    return argmax_p.bind(x, axis=user_axis("argmax", axis, x.ndim),
                         index_dtype=dtypes.user_dtype(index_dtype, "argmax"))


def argmin(x, axis, index_dtype=dtypes.int32):
    check_arraylike("argmin", x)
    return argmin_p.bind(x, axis=user_axis("argmin", axis, x.ndim),
                         index_dtype=dtypes.user_dtype(index_dtype, "argmin"))


# lax.reduce: a Python combiner -----------------------------------------------------------------
def _all_ones(dtype):
    return True if dtype == dtypes.bool_ else -1


# the monoids lax.reduce recognises, as JAX: combiner -> (reduction, its identity for a dtype)
MONOIDS = {
    add: (reduce_sum, lambda d: 0), mul: (reduce_prod, lambda d: 1),
    arithmetic.max: (reduce_max, lambda d: _identity(np.zeros((), d), True)),
    arithmetic.min: (reduce_min, lambda d: _identity(np.zeros((), d), False)),
    bitwise_and: (reduce_and, _all_ones), bitwise_or: (reduce_or, lambda d: False),
    bitwise_xor: (reduce_xor, lambda d: False),
}


def _monoid(computation, operand, init):
    """The named reduction when ``computation`` is a known monoid and ``init`` a concrete
    scalar equal to its identity (else None)."""
    entry = MONOIDS.get(computation)
    if entry is None or type(init) is Tracer or np.ndim(init) != 0:
        return None
    reduction, identity = entry
    value = np.asarray(init, operand.dtype)
    return reduction if np.array_equal(value, np.asarray(identity(operand.dtype),
                                                         operand.dtype)) else None


def reduce(operands, init_values, computation, dimensions):
    """JAX's ``lax.reduce``: ``computation`` (a binary function on pytrees shaped like
    ``operands``) folds ``dimensions`` away, starting from ``init_values``. A known monoid with
    its identity becomes the named reduction (reduce_sum, reduce_max, ...); anything else is a
    pairwise tree of ``computation`` calls, then one with the initial values, which is the
    result for an associative ``computation`` (XLA requires one)."""
    flat, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ShapeError(f"reduce: init_values {init_tree} must have the structure of the "
                         f"operands {tree}", user_frame())
    dims = tuple(sorted(user_axes("reduce", dimensions, flat[0].ndim)))
    if len(flat) == 1:
        reduction = _monoid(computation, flat[0], inits[0])
        if reduction is not None:
            return tree.unflatten([reduction(flat[0], dims)])
    return tree.unflatten(_tree_reduce(flat, inits, computation, dims, tree))


def _tree_reduce(xs, inits, computation, dims, tree):
    ndim = xs[0].ndim
    kept = [d for d in range(ndim) if d not in dims]
    kept_shape = tuple(xs[0].shape[d] for d in kept)
    n = int(np.prod([xs[0].shape[d] for d in dims]))
    xs = [reshape(transpose(x, (*kept, *dims)), (*kept_shape, n)) for x in xs]
    last = len(kept_shape)

    def combine(a, b):
        out, out_tree = tree_flatten(computation(tree.unflatten(a), tree.unflatten(b)))
        if out_tree != tree:
            raise ShapeError(f"reduce: computation returned {out_tree}, expected {tree}",
                             user_frame())
        return out

    while n > 1:
        half = n // 2
        pairs = combine([slice_in_dim(x, 0, half, 1, last) for x in xs],
                        [slice_in_dim(x, half, 2 * half, 1, last) for x in xs])
        if n % 2:
            pairs = [concatenate([p, slice_in_dim(x, n - 1, n, 1, last)], last)
                     for p, x in zip(pairs, xs)]
        xs, n = pairs, half + n % 2
    starts = [broadcast_in_dim(convert_element_type(v, x.dtype), kept_shape, ())
              for v, x in zip(inits, xs)]
    if n == 0:
        return starts
    return combine(starts, [reshape(x, kept_shape) for x in xs])


_add_examples(globals(), """
argmax: The index of the largest element of ``operand`` along ``axis``, as ``index_dtype`` (the
    first one on ties).
    >>> pto.lax.argmax(pnp.array([[1, 5, 5], [7, 0, 2]]), 1, pnp.int32)
    Array([1, 0], dtype=int32)
argmin: The index of the smallest element of ``operand`` along ``axis``, as ``index_dtype``.
    >>> pto.lax.argmin(pnp.array([[1, 5, 5], [7, 0, 2]]), 1, pnp.int32)
    Array([0, 1], dtype=int32)
reduce:
    >>> pto.lax.reduce(pnp.array([1, 2, 3]), 0, pto.lax.add, (0,))
    Array(6, dtype=int32)
reduce_and:
    >>> pto.lax.reduce_and(pnp.array([[True, False], [True, True]]), (1,))
    Array([False,  True], dtype=bool)
reduce_max:
    >>> pto.lax.reduce_max(pnp.array([[1, 5, 2], [4, 0, 3]]), (1,))
    Array([5, 4], dtype=int32)
reduce_min:
    >>> pto.lax.reduce_min(pnp.array([[1, 5, 2], [4, 0, 3]]), (0,))
    Array([1, 0, 2], dtype=int32)
reduce_or:
    >>> pto.lax.reduce_or(pnp.array([[True, False], [False, False]]), (1,))
    Array([ True, False], dtype=bool)
reduce_prod:
    >>> pto.lax.reduce_prod(pnp.array([[1, 5, 2], [4, 0, 3]]), (0,))
    Array([4, 0, 6], dtype=int32)
reduce_xor:
    >>> pto.lax.reduce_xor(pnp.array([[True, True], [True, False]]), (1,))
    Array([False,  True], dtype=bool)
""")
