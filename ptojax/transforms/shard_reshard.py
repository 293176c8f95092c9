"""Collective insertion: turn a per-device value from one split into another.

A per-device value is a ``Local``: the traced local block, the mesh axes splitting each of its
dimensions (``dims``) and the mesh axes over which it is a *partial sum* (``partial``: the
global value is the sum of the group members' blocks). ``reshard`` emits, in this order:

1. partial sums: ``psum_scatter`` along a dimension the target splits over exactly those axes
   (reduce and split in one collective), ``psum`` for the rest — unless the caller may keep
   them partial (a linear consumer) and the target does not use those axes;
2. a split moving from one dimension to another: ``all_to_all``;
3. splits the target drops (the minor axes not shared with the target): ``all_gather``;
4. splits the target adds: a local ``dynamic_slice`` at this device's block — no
   communication, the offset comes from ``axis_index``.
"""
from __future__ import annotations

from typing import NamedTuple

from ptojax import lax
from ptojax.ops.collectives import (all_gather_p, all_to_all_p, axis_index_p, psum_p,
                                    psum_scatter_p)


class Local(NamedTuple):
    value: object          # the traced per-device block (or a Literal)
    dims: tuple            # mesh axes splitting each dimension
    partial: tuple = ()    # mesh axes it is a pending sum over


def device_index(axes):
    """This device's position along ``axes`` (int32, traced)."""
    return axis_index_p.bind(axes=tuple(axes))


def reshard(mesh, x: Local, dst: tuple, keep_partial: bool = False) -> Local:
    value, dims, partial = x.value, list(x.dims), tuple(x.partial)
    if partial:
        value, dims, partial = _resolve_partial(mesh, value, dims, partial, dst, keep_partial)
    if tuple(dims) != tuple(dst):
        value, dims = _move_splits(mesh, value, dims, dst)
        value, dims = _gather_splits(mesh, value, dims, dst)
        value = _slice_splits(mesh, value, dims, dst)
    return Local(value, tuple(dst), partial)


def _in_mesh_order(mesh, axes) -> tuple:
    return tuple(a for a in mesh.axis_names if a in axes)


def _resolve_partial(mesh, value, dims, partial, dst, keep_partial):
    wanted = {a for ax in dst for a in ax}
    if keep_partial and not wanted.intersection(partial):
        return value, dims, partial
    for d, ax in enumerate(dst):
        if ax and not dims[d] and set(ax) <= set(partial) and \
                value.shape[d] % mesh.axis_size(ax) == 0:
            value = psum_scatter_p.bind(value, axes=ax, axis_size=mesh.axis_size(ax), dim=d,
                                        tiled=True)
            dims[d] = ax
            partial = tuple(a for a in partial if a not in ax)
    if keep_partial:
        rest = tuple(a for a in partial if a in wanted)
        partial = tuple(a for a in partial if a not in wanted)
    else:
        rest, partial = partial, ()
    if rest:
        value = psum_p.bind(value, axes=_in_mesh_order(mesh, rest))
    return value, dims, partial


def _move_splits(mesh, value, dims, dst):
    for i, ax in enumerate(dims):
        if not ax or dst[i]:
            continue
        for j in range(len(dims)):
            if j != i and not dims[j] and dst[j] == ax and \
                    value.shape[j] % mesh.axis_size(ax) == 0:
                value = all_to_all_p.bind(value, axes=ax, axis_size=mesh.axis_size(ax),
                                          split_dim=j, concat_dim=i, tiled=True)
                dims[i], dims[j] = (), ax
                break
    return value, dims


def _common_prefix(a, b) -> tuple:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return tuple(a[:n])


def _gather_splits(mesh, value, dims, dst):
    for d, ax in enumerate(dims):
        if ax == dst[d]:
            continue
        keep = _common_prefix(ax, dst[d])
        extra = tuple(ax[len(keep):])
        if extra:
            value = all_gather_p.bind(value, axes=extra, axis_size=mesh.axis_size(extra),
                                      dim=d, tiled=True)
            dims[d] = keep
    return value, dims


def _slice_splits(mesh, value, dims, dst):
    starts, sizes = [0] * len(dims), list(value.shape)
    for d, ax in enumerate(dims):
        if ax == dst[d]:
            continue
        extra = tuple(dst[d][len(ax):])
        piece = value.shape[d] // mesh.axis_size(extra)
        starts[d] = lax.mul(device_index(extra), piece)
        sizes[d] = piece
    if sizes == list(value.shape):
        return value
    return lax.dynamic_slice(value, starts, sizes)
