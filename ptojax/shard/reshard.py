"""Collective insertion: turn a per-device value from one split into another.

A per-device value is a ``Local``: the traced local block, the mesh axes splitting each of its
dimensions (``dims``) and the mesh axes over which it is a *partial sum* (``partial``: the
global value is the sum of the group members' blocks). ``reshard_steps`` plans, on shapes
alone, the steps from one split to another, in this order:

1. partial sums: ``psum_scatter`` along a dimension the target splits over exactly those axes
   (reduce and split in one collective), ``psum`` for the rest — unless the caller may keep
   them partial (a linear consumer) and the target does not use those axes;
2. a split moving from one dimension to another: ``all_to_all``;
3. splits the target drops (the minor axes not shared with the target): ``all_gather``;
4. splits the target adds: a local ``dynamic_slice`` at this device's block — no
   communication, the offset comes from ``axis_index``.

Steps over mesh axes of size 1 are no-ops and are left out.

``reshard`` emits the steps; ``reshard_cost`` counts the bytes they send (the partitioner
uses it to choose between ways of splitting an equation).
"""
from __future__ import annotations

from typing import NamedTuple

from ptojax.ops.arithmetic import mul
from ptojax.ops.dynamic_slicing import dynamic_slice
from ptojax.ops.sharding_rules import Local
from ptojax.shard.collectives import (all_gather_p, all_to_all_p, axis_index_p, psum_p,
                                      psum_scatter_p)
from ptojax.shard.runtime.cost import bytes_sent


class Step(NamedTuple):
    kind: str     # psum | psum_scatter | all_to_all | all_gather | slice
    axes: tuple   # mesh axes of the collective (slice: per dimension, the axes to add)
    dim: int = 0  # dimension it acts on (all_to_all: the one that loses the split)
    other: int = 0  # all_to_all: the dimension that gains the split


def device_index(axes):
    """This device's position along ``axes`` (int32, traced)."""
    return axis_index_p.bind(axes=tuple(axes))


def _in_mesh_order(mesh, axes) -> tuple:
    return tuple(a for a in mesh.axis_names if a in axes)


def _common_prefix(a, b) -> tuple:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return tuple(a[:n])


def reshard_steps(mesh, shape, dims, partial, dst, keep_partial=False) -> tuple:
    """(steps, partial kept) to take a block of local ``shape`` split as ``dims`` (pending
    sum over ``partial``) to the split ``dst``."""
    shape, dims, partial = list(shape), list(dims), tuple(partial)
    steps = []
    wanted = {a for ax in dst for a in ax}
    if partial and not (keep_partial and not wanted.intersection(partial)):
        for d, ax in enumerate(dst):
            if ax and not dims[d] and set(ax) <= set(partial) and \
                    shape[d] % mesh.axis_size(ax) == 0:
                steps.append(Step("psum_scatter", ax, d))
                shape[d] //= mesh.axis_size(ax)
                dims[d] = ax
                partial = tuple(a for a in partial if a not in ax)
        rest = tuple(a for a in partial if a in wanted or not keep_partial)
        partial = tuple(a for a in partial if a not in rest)
        if rest:
            steps.append(Step("psum", _in_mesh_order(mesh, rest)))
    for i, ax in enumerate(dims):  # a split moving between dimensions
        if not ax or dst[i]:
            continue
        for j in range(len(dims)):
            if j != i and not dims[j] and dst[j] == ax and shape[j] % mesh.axis_size(ax) == 0:
                steps.append(Step("all_to_all", ax, i, j))
                shape[i] *= mesh.axis_size(ax)
                shape[j] //= mesh.axis_size(ax)
                dims[i], dims[j] = (), ax
                break
    for d, ax in enumerate(dims):  # splits the target drops
        extra = tuple(ax[len(_common_prefix(ax, dst[d])):])
        if extra:
            steps.append(Step("all_gather", extra, d))
            shape[d] *= mesh.axis_size(extra)
            dims[d] = tuple(ax[:len(ax) - len(extra)])
    added = tuple(tuple(dst[d][len(ax):]) for d, ax in enumerate(dims))
    if any(mesh.axis_size(ax) > 1 for ax in added):
        steps.append(Step("slice", added))
    return [s for s in steps if s.kind == "slice" or mesh.axis_size(s.axes) > 1], partial


def reshard_cost(mesh, aval, x_dims, partial, dst, keep_partial=False) -> int:
    """Bytes one device sends to reshard a value of global type ``aval``."""
    shape = [n // mesh.axis_size(ax) for n, ax in zip(aval.shape, x_dims)]
    steps, _ = reshard_steps(mesh, shape, x_dims, partial, dst, keep_partial)
    total = 0
    itemsize = aval.dtype.itemsize
    for step in steps:
        nbytes = itemsize * _prod(shape)
        if step.kind == "slice":
            continue
        total += bytes_sent(step.kind, nbytes, mesh.axis_size(step.axes), {}, 0)
        if step.kind == "psum_scatter":
            shape[step.dim] //= mesh.axis_size(step.axes)
        elif step.kind == "all_to_all":
            shape[step.dim] *= mesh.axis_size(step.axes)
            shape[step.other] //= mesh.axis_size(step.axes)
        elif step.kind == "all_gather":
            shape[step.dim] *= mesh.axis_size(step.axes)
    return total


def _prod(shape) -> int:
    out = 1
    for n in shape:
        out *= n
    return out


def reshard(mesh, x: Local, dst: tuple, keep_partial: bool = False) -> Local:
    steps, partial = reshard_steps(mesh, x.value.shape, x.dims, x.partial, dst, keep_partial)
    value = x.value
    for step in steps:
        value = _emit(mesh, value, step)
    return Local(value, tuple(dst), partial)


def _emit(mesh, value, step: Step):
    n = mesh.axis_size(step.axes) if step.kind != "slice" else 0
    if step.kind == "psum":
        return psum_p.bind(value, axes=step.axes)
    if step.kind == "psum_scatter":
        return psum_scatter_p.bind(value, axes=step.axes, axis_size=n, dim=step.dim,
                                   tiled=True)
    if step.kind == "all_to_all":
        return all_to_all_p.bind(value, axes=step.axes, axis_size=n, split_dim=step.other,
                                 concat_dim=step.dim, tiled=True)
    if step.kind == "all_gather":
        return all_gather_p.bind(value, axes=step.axes, axis_size=n, dim=step.dim, tiled=True)
    starts, sizes = [0] * value.ndim, list(value.shape)
    for d, extra in enumerate(step.axes):
        if extra:
            sizes[d] = value.shape[d] // mesh.axis_size(extra)
            starts[d] = mul(device_index(extra), sizes[d])
    return dynamic_slice(value, starts, sizes)
