"""vmap rows of the collectives (``ptojax/ops/collectives.py``).

Inside ``pto.vmap(f, axis_name="i")`` the members of axis ``"i"`` are the batch elements, so
a collective over ``"i"`` becomes local arithmetic on the batch dimension:

    psum / pmax / pmin   a reduction over the batch dimension (the result is unbatched)
    all_gather           the batch dimension moved to the gather dimension (unbatched)
    psum_scatter         a sum over the batch, whose scatter dimension becomes the batch
    all_to_all           a transpose swapping the batch with the split dimension
    ppermute             a gather of batch elements (zeros where nothing is received)
    axis_index           an iota over the batch

Collectives over other axes pass through with the batch carried along. ``psum``/``pmax``/
``pmin``/``all_gather``/``axis_index`` over several axes including ours reduce ours locally and
leave the rest to the collective over the remaining axes.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import UnsupportedError
from ptojax.shard import collectives as coll
from ptojax.eval.array import Array
from ptojax.batching.vmap import (batch_rules, canonical_axes, current_axis_name,
                                    current_axis_size, example_ndim, move_axis, to_front)


def _split_axes(axes):
    """(axes before ours, axes after ours) in a collective's group, or None if ours is not
    among them. The group is numbered with the first axis major."""
    name = current_axis_name()
    if name not in axes:
        return None
    k = axes.index(name)
    return axes[:k], axes[k + 1:]


def _strong(x):
    """Collectives return strongly typed values; local arithmetic may leave a weak type."""
    return lax.convert_element_type(x, x.dtype, weak_type=False)


def _only_ours(prim, axes):
    if axes != (current_axis_name(),):
        raise UnsupportedError(f"vmap of `{prim}` over axes {axes}, which combine the vmapped "
                               f"axis {current_axis_name()!r} with other axes, is not "
                               f"supported; apply it to one axis at a time")


def _merge_dims(x, start, count):
    """``x`` with dimensions ``start .. start+count-1`` merged into one."""
    shape = x.shape
    return lax.reshape(x, (*shape[:start], math.prod(shape[start:start + count]),
                           *shape[start + count:]))


# reductions over the group ---------------------------------------------------------------------
def _reduction_rule(prim, reduce, replicate):
    def rule(args, dims, axes):
        (x,), (d,) = args, dims
        split = _split_axes(axes)
        if split is None:
            return prim.bind(x, axes=axes), d
        local = replicate(x) if d is None else reduce(x, (d,))
        others = split[0] + split[1]
        return (prim.bind(local, axes=others) if others else _strong(local)), None
    return rule


batch_rules[coll.psum_p] = _reduction_rule(
    coll.psum_p, lax.reduce_sum, lambda x: lax.mul(x, current_axis_size()))
batch_rules[coll.pmax_p] = _reduction_rule(coll.pmax_p, lax.reduce_max, lambda x: x)
batch_rules[coll.pmin_p] = _reduction_rule(coll.pmin_p, lax.reduce_min, lambda x: x)


def _axis_index_rule(args, dims, axes):
    major, minor = _split_axes(axes)  # only called when our axis is among ``axes``
    n = current_axis_size()
    minor_size = coll.axis_size(minor) if minor else 1
    index = lax.iota(dtypes.int32, n)
    if minor:
        index = lax.add(lax.mul(index, minor_size), coll.axis_index_p.bind(axes=minor))
    if major:
        index = lax.add(index, lax.mul(coll.axis_index_p.bind(axes=major), n * minor_size))
    return index, 0


batch_rules[coll.axis_index_p] = _axis_index_rule


# data movement -----------------------------------------------------------------------------------
def _all_gather_rule(args, dims, axes, axis_size, dim, tiled):
    (x,), (d,) = args, dims
    (dim,) = canonical_axes((dim,), example_ndim(x, d) + (not tiled))
    split = _split_axes(axes)
    x = to_front(x, d)
    if split is None:
        return coll.all_gather_p.bind(x, axes=axes, axis_size=axis_size, dim=dim + 1,
                                      tiled=tiled), 0
    major, minor = split
    n = current_axis_size()
    minor_size = coll.axis_size(minor) if minor else 1
    # stack the group as separate dimensions (major, ours, minor) at ``dim``, then merge them
    if minor:
        x = coll.all_gather_p.bind(x, axes=minor, axis_size=minor_size, dim=dim + 1,
                                   tiled=False)
    x = move_axis(x, 0, dim)
    if major:
        x = coll.all_gather_p.bind(x, axes=major, axis_size=axis_size // (n * minor_size),
                                   dim=dim, tiled=False)
    x = _merge_dims(x, dim, 1 + bool(minor) + bool(major) + bool(tiled))
    return _strong(x), None


def _psum_scatter_rule(args, dims, axes, axis_size, dim, tiled):
    (x,), (d,) = args, dims
    (dim,) = canonical_axes((dim,), example_ndim(x, d))
    if _split_axes(axes) is None:
        return coll.psum_scatter_p.bind(to_front(x, d), axes=axes, axis_size=axis_size,
                                        dim=dim + 1, tiled=tiled), 0
    _only_ours(coll.psum_scatter_p, axes)
    n = current_axis_size()
    total = lax.mul(x, n) if d is None else lax.reduce_sum(x, (d,))
    if tiled:  # member i keeps block i: split the dimension into (member, block)
        shape = total.shape
        total = lax.reshape(total, (*shape[:dim], n, shape[dim] // n, *shape[dim + 1:]))
    return _strong(total), dim


def _all_to_all_rule(args, dims, axes, axis_size, split_dim, concat_dim, tiled):
    (x,), (d,) = args, dims
    split_dim, concat_dim = canonical_axes((split_dim, concat_dim), example_ndim(x, d))
    x = to_front(x, d)
    if _split_axes(axes) is None:
        return coll.all_to_all_p.bind(x, axes=axes, axis_size=axis_size,
                                      split_dim=split_dim + 1, concat_dim=concat_dim + 1,
                                      tiled=tiled), 0
    _only_ours(coll.all_to_all_p, axes)
    n = current_axis_size()
    if tiled:  # split the split dimension into (destination, block)
        shape = x.shape
        x = lax.reshape(x, (*shape[:split_dim + 1], n, shape[split_dim + 1] // n,
                            *shape[split_dim + 2:]))
    # out[j][.., i at concat_dim, ..] = x[i][.., j at split_dim, ..]
    rest = [1 + k for k in range(x.ndim - 1) if k != split_dim]
    rest.insert(concat_dim, 0)
    out = lax.transpose(x, (1 + split_dim, *rest))
    if tiled:  # the sources become the major part of the concatenation dimension
        out = _merge_dims(out, 1 + concat_dim, 2)
    return _strong(out), 0


def _ppermute_rule(args, dims, axes, perm):
    (x,), (d,) = args, dims
    if _split_axes(axes) is None:
        return coll.ppermute_p.bind(x, axes=axes, perm=perm), d
    _only_ours(coll.ppermute_p, axes)
    n = current_axis_size()
    x = to_front(x, d)
    source = np.zeros((n, 1), np.int32)
    receives = np.zeros(n, bool)
    for src, dst in perm:
        source[dst, 0], receives[dst] = src, True
    out = lax.gather(x, Array(source), (0,))
    if not receives.all():
        mask = lax.broadcast_in_dim(Array(receives), out.shape, (0,))
        zeros = lax.broadcast_in_dim(Array(np.zeros((), x.dtype)), out.shape, ())
        out = lax.select(mask, out, zeros)
    return _strong(out), 0


batch_rules[coll.all_gather_p] = _all_gather_rule
batch_rules[coll.psum_scatter_p] = _psum_scatter_rule
batch_rules[coll.all_to_all_p] = _all_to_all_rule
batch_rules[coll.ppermute_p] = _ppermute_rule
