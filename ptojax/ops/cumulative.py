"""Cumulative primitives — cumsum cumprod cummax cummin cumlogsumexp — with every fact.

They keep the input dtype (f16/bf16/f8 accumulate in f32). ``cumsum`` is linear; the others
differentiate their log-depth associative-scan decomposition, run on (value, tangent) pairs.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.eval.leaves import check_arraylike
from ptojax.ops import references as ref, sharding_rules as sr
from ptojax.ops.arithmetic import _balanced_eq, add, max, min, mul, sub
from ptojax.ops.checks import check_axis, require_kind, user_axis
from ptojax.ops.costs import input_size
from ptojax.ops.shape import canonical_axes, shift_axes
from ptojax.ops.slicing import concatenate, rev, slice_in_dim
from ptojax.ops.tangents import Zero, is_zero, linear_in_first_jvp
from ptojax.ops.transcendental import exp, log1p
from ptojax.trace import Primitive, Unsupported
from ptojax.public import add_examples as _add_examples


def associative_scan(fn, xs, axis: int, reverse: bool = False):
    """Inclusive scan of associative ``fn`` (on tuples of equally shaped arrays) along
    ``axis`` in O(log n) steps of slices, ``fn`` and concatenations (Hillis–Steele)."""
    if reverse:
        xs = tuple(rev(x, (axis,)) for x in xs)
    n = xs[0].shape[axis]
    shift = 1
    while shift < n:
        heads = [slice_in_dim(x, 0, shift, 1, axis) for x in xs]
        combined = fn(tuple(slice_in_dim(x, 0, n - shift, 1, axis) for x in xs),
                      tuple(slice_in_dim(x, shift, n, 1, axis) for x in xs))
        xs = tuple(concatenate([h, c], axis) for h, c in zip(heads, combined))
        shift *= 2
    return tuple(rev(x, (axis,)) for x in xs) if reverse else xs


def _cumulative_abstract(name, kind):
    def abstract_eval(x, axis, reverse=False):
        require_kind(name, x, kind)
        check_axis(name, axis, x.ndim)
        return x
    return abstract_eval


def _cumulative_impl(accumulate):
    def impl(x, axis, reverse=False):
        axis = axis % x.ndim
        if reverse:
            x = np.flip(x, axis)
        if dtypes.accumulates_in_f32(x.dtype) and accumulate in (np.add, np.multiply,
                                                                np.logaddexp):
            out = accumulate.accumulate(x.astype(np.float32), axis=axis).astype(x.dtype)
        else:
            out = accumulate.accumulate(x, axis=axis, dtype=x.dtype)
        return np.flip(out, axis) if reverse else out
    return impl


def _pairs_jvp(prim, combine):
    """The tangent of a cumulative op from the scan of ``combine`` on (value, tangent)."""
    def rule(primals, tangents, axis, reverse=False):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        if is_zero(t):
            return out, Zero(out.aval)
        _, tout = associative_scan(combine, (x, t), axis % x.ndim, reverse)
        return out, tout
    return rule


def _product(a, b):
    (x, tx), (y, ty) = a, b
    return mul(x, y), add(mul(tx, y), mul(x, ty))


def _extremum(op):
    def combine(a, b):
        (x, tx), (y, ty) = a, b
        out = op(x, y)
        return out, add(mul(tx, _balanced_eq(x, out, y)), mul(ty, _balanced_eq(y, out, x)))
    return combine


def _logaddexp(a, b):
    (x, tx), (y, ty) = a, b
    m = max(x, y)
    out = add(m, log1p(exp(sub(min(x, y), m))))
    return out, add(mul(tx, exp(sub(x, out))), mul(ty, exp(sub(y, out))))


def _batch(prim):
    def rule(args, dims, axis, reverse=False):
        (x,), (bd,) = args, dims
        (axis,) = shift_axes(canonical_axes((axis,), x.ndim - 1), bd)
        return prim.bind(x, axis=axis, reverse=reverse), bd
    return rule


def _cumulative(name, accumulate, kind, jax_name, combine=None, **facts):
    prim = Primitive(name, _cumulative_abstract(name, kind), _cumulative_impl(accumulate),
                     linear=combine is None)

    def reference(jnp, lax):
        fn = getattr(lax, jax_name)
        return lambda x, axis, reverse=False: fn(x, axis % x.ndim, reverse)

    jvp = linear_in_first_jvp(prim) if combine is None else _pairs_jvp(prim, combine)
    prim.define(jvp=jvp, batch=_batch(prim),
                shard=sr.ShardRule(sr.along_axis_factors("axis"),
                                   linear="unary" if combine is None else None),
                tile=Unsupported("cumulative ops have no tile rule"), cost=input_size,
                reference=ref.widened(reference), **facts)
    return prim


cumsum_p = _cumulative("cumsum", np.add, "any", "cumsum")
cumprod_p = _cumulative("cumprod", np.multiply, "any", "cumprod", _product)
cummax_p = _cumulative("cummax", np.maximum, "any", "cummax", _extremum(max))
cummin_p = _cumulative("cummin", np.minimum, "any", "cummin", _extremum(min))
cumlogsumexp_p = _cumulative("cumlogsumexp", np.logaddexp, "float", "cumlogsumexp",
                             _logaddexp)
cumsum_p.define(transpose=lambda ct, x, axis, reverse=False: [
    cumsum_p.bind(ct, axis=axis, reverse=not reverse)])


def _lax_function(prim):
    def fn(x, axis=0, reverse=False):
        check_arraylike(prim.name, x)
        return prim.bind(x, axis=user_axis(prim.name, axis, x.ndim), reverse=bool(reverse))
    fn.__name__ = prim.name
    return fn


cumsum, cumprod, cummax, cummin, cumlogsumexp = map(_lax_function, (
    cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p))


_add_examples(globals(), """
cumlogsumexp: Cumulative ``log(sum(exp(x)))`` along ``axis`` (reversed if ``reverse``).
    >>> pto.lax.cumlogsumexp(pnp.array([0.0, 0.0, 0.0]))
    Array([0.       , 0.6931472, 1.0986123], dtype=float32)
cummax: Cumulative maximum along ``axis`` (reversed if ``reverse``).
    >>> pto.lax.cummax(pnp.array([1, 3, 2, 5]))
    Array([1, 3, 3, 5], dtype=int32)
cummin: Cumulative minimum along ``axis`` (reversed if ``reverse``).
    >>> pto.lax.cummin(pnp.array([4, 3, 5, 1]))
    Array([4, 3, 3, 1], dtype=int32)
cumprod: Cumulative product along ``axis`` (reversed if ``reverse``).
    >>> pto.lax.cumprod(pnp.array([1, 2, 3, 4]))
    Array([ 1,  2,  6, 24], dtype=int32)
cumsum: Cumulative sum along ``axis`` (reversed if ``reverse``).
    >>> pto.lax.cumsum(pnp.array([1, 2, 3, 4]))
    Array([ 1,  3,  6, 10], dtype=int32)
    >>> pto.lax.cumsum(pnp.array([1, 2, 3, 4]), reverse=True)
    Array([10,  9,  7,  4], dtype=int32)
""")
