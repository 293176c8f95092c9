"""The ``bucket`` facts of the ops: how each primitive runs on arrays padded to a bucket.

A program with symbolic dimensions is run at a static *bucket* size (``lower/bucketing.py``):
every symbolic dimension is padded to its value at the bucket (e.g. the next power of two),
and every value keeps its true elements in the leading part of each padded dimension (the
*valid prefix*); what lies beyond is garbage, possibly inf or NaN, which must never reach a
valid element. A primitive's rule ``rule(ctx, eqn, *args) -> result`` computes ``eqn`` on
padded ``args`` so that this stays true:

- elementwise primitives need nothing (prefixes stay prefixes); so do layout primitives
  whose params are only evaluated at the bucket (``padded_params``);
- what mixes elements along a symbolic dimension masks the padding first with an identity
  (reductions, contractions, sorts, reverse scans), or moves values to where the true size
  puts them (concatenate, pad, rev, a slice starting at a symbolic offset);
- everything else has no rule: the program then runs unpadded on the numpy executor.

``ctx`` gives ``ctx.padded(value)`` (dims and params at the bucket), ``ctx.valid(dim)`` (the
dim's size in this call: an int32 scalar, traced when the dim is symbolic) and, for
sub-IRs, ``ctx.sub_ir(closed)`` (the sub-IR on padded types, taking ``ctx.size_args`` first).
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import UnsupportedError
from ptojax.ir.symbolic import is_symbolic, is_symbolic_shape
from ptojax.ops.arithmetic import add, max as max_, min as min_, sub
from ptojax.ops.broadcast import broadcast_in_dim, broadcast_in_dim_p, reduce_sum_p
from ptojax.ops.convert import convert_element_type
from ptojax.ops.elementwise import zero_like
from ptojax.ops.cumulative import cumlogsumexp_p, cummax_p, cummin_p, cumprod_p, cumsum_p
from ptojax.ops.dimension_size import dimension_size_p
from ptojax.ops.dynamic_slicing import dynamic_slice_p, dynamic_update_slice_p
from ptojax.ops.gather_scatter import gather_p, scatter_p
from ptojax.ops.linalg import dot_general_p
from ptojax.ops.logic import lt, select
from ptojax.ops.reductions import (argmax_p, argmin_p, reduce_and_p, reduce_max_p, reduce_min_p,
                                   reduce_or_p, reduce_prod_p, reduce_xor_p)
from ptojax.ops.shape import expand_dims_p, reshape_p, squeeze_p, transpose_p
from ptojax.ops.slicing import (broadcasted_iota, concatenate, concatenate_p, iota_p, pad, pad_p,
                                rev, rev_p, slice_in_dim, slice_p)
from ptojax.ops.sorting import sort_p


class Unbucketable(UnsupportedError):
    """This equation cannot run on padded arrays; the program runs unpadded."""


# masks -------------------------------------------------------------------------------------
def lowest(dtype):
    if dtypes.is_inexact(dtype):
        return -np.inf
    return False if dtype == dtypes.bool_ else np.iinfo(dtype).min


def highest(dtype):
    if dtypes.is_inexact(dtype):
        return np.inf
    return True if dtype == dtypes.bool_ else np.iinfo(dtype).max


def valid_mask(ctx, shape, axis, dim):
    """bool[shape]: True where the index along ``axis`` is below ``dim``'s size this call."""
    return lt(broadcasted_iota(dtypes.int32, shape, axis), ctx.valid(dim))


def mask(ctx, x, axis, dim, fill):
    """``x`` with the padding along ``axis`` (of true size ``dim``) replaced by ``fill``."""
    if not is_symbolic(dim):
        return x
    filler = broadcast_in_dim(convert_element_type(fill, x.dtype), x.shape, ())
    return select(valid_mask(ctx, x.shape, axis, dim), x, filler)


def padded_params(ctx, eqn, *args):
    """Bind with the params evaluated at the bucket: right for primitives that keep each
    dimension's valid prefix where it is."""
    return eqn.prim.bind(*args, **ctx.padded(eqn.params))


def _symbolic_in(eqn, i, axes):
    shape = eqn.inputs[i].type.shape
    return [(a, shape[a]) for a in axes if is_symbolic(shape[a])]


# reductions and contractions -----------------------------------------------------------------
def _reduction(identity):
    def rule(ctx, eqn, x):
        for a, dim in _symbolic_in(eqn, 0, eqn.params["axes"]):
            x = mask(ctx, x, a, dim, identity(x.dtype))
        return padded_params(ctx, eqn, x)
    return rule


def _arg_reduction(identity):
    def rule(ctx, eqn, x):
        for a, dim in _symbolic_in(eqn, 0, (eqn.params["axis"],)):
            x = mask(ctx, x, a, dim, identity(x.dtype))
        return padded_params(ctx, eqn, x)
    return rule


def _dot_general(ctx, eqn, lhs, rhs):
    (lc, rc), _ = eqn.params["dimension_numbers"]
    for a, b in zip(lc, rc):
        dim = eqn.inputs[0].type.shape[a]
        lhs, rhs = mask(ctx, lhs, a, dim, 0), mask(ctx, rhs, b, dim, 0)
    return padded_params(ctx, eqn, lhs, rhs)


def _cumulative(identity):
    def rule(ctx, eqn, x):
        if eqn.params["reverse"]:
            for a, dim in _symbolic_in(eqn, 0, (eqn.params["axis"],)):
                x = mask(ctx, x, a, dim, identity(x.dtype))
        return padded_params(ctx, eqn, x)
    return rule


def _sort(ctx, eqn, *operands):
    axis, keys = eqn.params["dimension"], eqn.params["num_keys"]
    dim = eqn.inputs[0].type.shape[axis]
    operands = list(operands)
    for k in range(keys):   # padding sorts last (NaN last, as the sort orders floats)
        last = np.nan if dtypes.is_inexact(operands[k].dtype) else highest(operands[k].dtype)
        operands[k] = mask(ctx, operands[k], axis, dim, last)
    return padded_params(ctx, eqn, *operands)


# layout ------------------------------------------------------------------------------------
def _reshape(ctx, eqn, x):
    """Prefixes survive a reshape whose symbolic dimensions lead their groups: leaving out
    unit dimensions and the dimensions both shapes share first, only the first may be
    symbolic, in both."""
    old, new = (tuple(d for d in shape if not (type(d) is int and d == 1))   # unit dims
                for shape in (eqn.inputs[0].type.shape, eqn.params["new_sizes"]))  # move nothing
    k = 0
    while k < min(len(old), len(new)) and old[k] == new[k]:
        k += 1
    if is_symbolic_shape(old[k + 1:]) or is_symbolic_shape(new[k + 1:]):
        raise Unbucketable(f"reshape {eqn.inputs[0].type} -> {tuple(new)} interleaves padding")
    return padded_params(ctx, eqn, x)


def _slice(ctx, eqn, x):
    starts, limits = eqn.params["start_indices"], eqn.params["limit_indices"]
    if not any(is_symbolic(s) for s in starts):
        return padded_params(ctx, eqn, x)
    if eqn.params["strides"] is not None:
        raise Unbucketable("a strided slice at a symbolic offset")
    sizes = [lim - s for s, lim in zip(starts, limits)]
    if any(is_symbolic(s) and is_symbolic(n) for s, n in zip(starts, sizes)):
        raise Unbucketable("a slice of symbolic size at a symbolic offset")
    begin = [ctx.valid(s) for s in starts]
    return dynamic_slice_p.bind(x, *begin, slice_sizes=tuple(ctx.padded(sizes)))


def _pad(ctx, eqn, x, value):
    config = eqn.params["padding_config"]
    shape = eqn.inputs[0].type.shape
    if any(it and (is_symbolic(n) or is_symbolic(lo) or is_symbolic(hi))
           for n, (lo, hi, it) in zip(shape, config)):
        raise Unbucketable("interior padding of a symbolic dimension")
    if any(is_symbolic(lo) or is_symbolic(hi) for lo, hi, _ in config):
        out = _placed(ctx, eqn, x, value)
    else:
        out = padded_params(ctx, eqn, x, value)
    for axis, (dim, (lo, hi, _)) in enumerate(zip(shape, config)):
        if is_symbolic(dim) and (is_symbolic(hi) or hi > 0):
            # the high padding belongs right after the true elements
            keep = lt(broadcasted_iota(dtypes.int32, out.shape, axis),
                      add(ctx.valid(dim), ctx.valid(lo)))
            out = select(keep, out, broadcast_in_dim(value, out.shape, ()))
    return out


def _placed(ctx, eqn, x, value):
    """A pad by symbolic amounts: ``x`` written at its true offset into the padding value
    (amounts that grow with the sizes, so the padded offset is never smaller)."""
    for lo, hi, _ in eqn.params["padding_config"]:
        for amount in (lo, hi):
            if is_symbolic(amount) and (amount.bounds()[0] < 0 or any(
                    c < 0 for mono, c in amount.terms.items() if mono)):
                raise Unbucketable(f"padding by {amount}, which may shrink or be negative")
            if not is_symbolic(amount) and amount < 0:
                raise Unbucketable("cropping next to symbolic padding")
    shape = ctx.padded(eqn.outputs[0].type.shape)
    out = broadcast_in_dim(value, tuple(shape), ())
    starts = [ctx.valid(lo) for lo, _, _ in eqn.params["padding_config"]]
    return dynamic_update_slice_p.bind(out, x, *starts)


def _concatenate(ctx, eqn, *parts):
    axis = eqn.params["dimension"]
    out = padded_params(ctx, eqn, *parts)
    if not any(is_symbolic(a.type.shape[axis]) for a in eqn.inputs):
        return out
    # each part written right after the true elements of the parts before it; its padding
    # is overwritten by the next part or lies beyond the result's true size. Parts up to the
    # first of symbolic size are already at their true offsets.
    first = next(i for i, a in enumerate(eqn.inputs) if is_symbolic(a.type.shape[axis]))
    offset = np.int32(0)
    for i, (atom, part) in enumerate(zip(eqn.inputs, parts)):
        if i > first:
            starts = [np.int32(0)] * part.ndim
            starts[axis] = offset
            out = dynamic_update_slice_p.bind(out, part, *starts)
        offset = add(offset, ctx.valid(atom.type.shape[axis]))
    return out


def _rev(ctx, eqn, x):
    dims = eqn.params["dimensions"]
    shape = eqn.inputs[0].type.shape
    static = tuple(d for d in dims if not is_symbolic(shape[d]))
    if static:
        x = rev(x, static)
    for d in dims:
        if not is_symbolic(shape[d]):
            continue
        # reversed, the prefix ends the padded axis: shift it back to the front
        n = x.shape[d]
        config = [(0, n if i == d else 0, 0) for i in range(x.ndim)]
        doubled = pad(rev(x, (d,)), zero_like(x), config)
        begin = [np.int32(0)] * x.ndim
        begin[d] = sub(np.int32(n), ctx.valid(shape[d]))
        x = dynamic_slice_p.bind(doubled, *begin, slice_sizes=tuple(x.shape))
    return x


def _clamped_starts(ctx, shape, sizes, starts):
    """Start indices clamped as the true (unpadded) operand would clamp them."""
    out = []
    for dim, size, s in zip(shape, sizes, starts):
        if is_symbolic(dim) and not (is_symbolic(size) and size == dim):
            if is_symbolic(size):
                raise Unbucketable("a dynamic slice of symbolic size")
            top = sub(convert_element_type(ctx.valid(dim), s.dtype),
                      convert_element_type(size, s.dtype))
            s = min_(max_(s, convert_element_type(0, s.dtype)), top)
        elif is_symbolic(dim):   # the whole dimension: it starts at 0
            s = convert_element_type(0, s.dtype)
        out.append(s)
    return out


def _dynamic_slice(ctx, eqn, x, *starts):
    sizes = eqn.params["slice_sizes"]
    starts = _clamped_starts(ctx, eqn.inputs[0].type.shape, sizes, starts)
    return padded_params(ctx, eqn, x, *starts)


def _dynamic_update_slice(ctx, eqn, x, update, *starts):
    starts = _clamped_starts(ctx, eqn.inputs[0].type.shape, eqn.inputs[1].type.shape, starts)
    return padded_params(ctx, eqn, x, update, *starts)


def _indices_in_true_bounds(ctx, eqn, indices, clamp: bool):
    """Index columns into symbolic operand axes, bounded by the true sizes: clamped to the
    last true element (a clipping gather), or sent past the padded end where the true array
    would be out of bounds (a filling gather, or a scatter, which drops them)."""
    nbatch, shape = eqn.params["nbatch"], eqn.inputs[0].type.shape
    last = indices.ndim - 1
    cols = []
    for j, a in enumerate(eqn.params["axes"]):
        col = slice_in_dim(indices, j, j + 1, 1, last)
        dim = shape[nbatch + a]
        if is_symbolic(dim):
            top = convert_element_type(ctx.valid(dim), indices.dtype)
            if clamp:
                col = min_(col, sub(top, convert_element_type(1, indices.dtype)))
            else:
                beyond = convert_element_type(ctx.padded(dim), indices.dtype)
                col = select(lt(col, top), col, broadcast_in_dim(beyond, col.shape, ()))
        cols.append(col)
    return concatenate(cols, last) if cols else indices


def _gather(ctx, eqn, operand, indices):
    indices = _indices_in_true_bounds(ctx, eqn, indices, eqn.params["mode"] != "fill")
    return padded_params(ctx, eqn, operand, indices)


def _scatter(ctx, eqn, operand, indices, updates):
    indices = _indices_in_true_bounds(ctx, eqn, indices, clamp=False)
    return padded_params(ctx, eqn, operand, indices, updates)


def _dimension_size(ctx, eqn):
    p = eqn.params
    return convert_element_type(ctx.valid(p["size"]), p["dtype"], weak_type=p["weak_type"])


for _prim, _identity in ((reduce_sum_p, lambda d: 0), (reduce_prod_p, lambda d: 1),
                         (reduce_max_p, lowest), (reduce_min_p, highest),
                         (reduce_and_p, lambda d: True), (reduce_or_p, lambda d: False),
                         (reduce_xor_p, lambda d: False)):
    _prim.define(bucket=_reduction(_identity))
argmax_p.define(bucket=_arg_reduction(lowest))
argmin_p.define(bucket=_arg_reduction(highest))
for _prim, _identity in ((cumsum_p, lambda d: 0), (cumprod_p, lambda d: 1),
                         (cummax_p, lowest), (cummin_p, highest),
                         (cumlogsumexp_p, lambda d: -np.inf)):
    _prim.define(bucket=_cumulative(_identity))
dot_general_p.define(bucket=_dot_general)
sort_p.define(bucket=_sort)
for _prim in (iota_p, transpose_p, squeeze_p, expand_dims_p, broadcast_in_dim_p):
    _prim.define(bucket=padded_params)
reshape_p.define(bucket=_reshape)
slice_p.define(bucket=_slice)
pad_p.define(bucket=_pad)
concatenate_p.define(bucket=_concatenate)
rev_p.define(bucket=_rev)
dynamic_slice_p.define(bucket=_dynamic_slice)
dynamic_update_slice_p.define(bucket=_dynamic_update_slice)
gather_p.define(bucket=_gather)
scatter_p.define(bucket=_scatter)
dimension_size_p.define(bucket=_dimension_size)
