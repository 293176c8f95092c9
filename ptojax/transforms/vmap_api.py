"""Public ``vmap``: pytree handling of in_axes/out_axes around the flat ``vmap_ir`` core."""
from __future__ import annotations

import functools
from typing import Callable

from ptojax import lax
from ptojax.errors import BatchingError
from ptojax.jit import leaf_type
from ptojax.runtime.interpreter import eval_ir
from ptojax.source_info import user_frame
from ptojax.trace import trace_flat
from ptojax.transforms.vmap import move_axis, vmap_ir
from ptojax.tree_util import (keystr, tree_flatten, tree_flatten_with_path, tree_structure)


def _prefix_leaves(prefix, tree, what):
    """One entry of ``prefix`` per leaf of ``tree`` (``prefix`` is a pytree prefix of it)."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    prefix_tree = tree_structure(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = prefix_tree.flatten_up_to(tree)
    except ValueError as e:
        raise BatchingError(f"vmap {what} {prefix!r} is not a prefix of the structure "
                            f"{tree_structure(tree)}: {e}", user_frame(4)) from None
    axes = tree_flatten(prefix, is_leaf=lambda x: x is None)[0]
    out = []
    for ax, sub in zip(axes, subtrees):
        if ax is not None and not isinstance(ax, int):
            raise BatchingError(f"vmap {what} entries must be int or None, got {ax!r}",
                                user_frame(4))
        out += [ax] * len(tree_flatten(sub)[0])
    return out


def _normalize(axis, ndim, where, what):
    if axis is None:
        return None
    if not -ndim <= axis < ndim:
        raise BatchingError(f"vmap {what} {axis} is out of range for {where} of rank {ndim}",
                            user_frame(4))
    return axis % ndim


def vmap(fn: Callable, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
    """Vectorize ``fn`` over the axes ``in_axes`` of its arguments (an int, None, or a pytree
    prefix of the arguments); outputs carry the batch at ``out_axes``."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(fn)
    def vmapped(*args):
        pairs, in_tree = tree_flatten_with_path(args)
        leaves = [x for _, x in pairs]
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise BatchingError(f"vmap in_axes {in_axes!r} has {len(in_axes)} entries but the "
                                f"function got {len(args)} positional arguments",
                                user_frame(2))
        axes = _prefix_leaves(in_axes, args, "in_axes")
        dims = []
        for (path, x), ax in zip(pairs, axes):
            where = f"argument {keystr(path)}"
            dims.append(_normalize(ax, leaf_type(x).ndim, where, "in_axes"))
        size = _axis_size(pairs, dims, axis_size)
        example_types = []
        for x, d in zip(leaves, dims):
            t = leaf_type(x)
            if d is not None:
                t = t.update(shape=t.shape[:d] + t.shape[d + 1:])
            example_types.append(t)
        trees = {}

        def flat_fn(*xs):
            out = fn(*in_tree.unflatten(xs))
            out_leaves, trees["out"] = tree_flatten(out)
            return out_leaves

        closed = trace_flat(flat_fn, example_types, getattr(fn, "__name__", "fn"))
        batched, out_dims = vmap_ir(closed, dims, size, axis_name)
        outs = eval_ir(batched, leaves)
        out_tree = trees["out"]
        targets = _prefix_leaves(out_axes, out_tree.unflatten(outs), "out_axes")
        final = []
        for i, (o, d, t) in enumerate(zip(outs, out_dims, targets)):
            if t is None:
                if d is not None:
                    raise BatchingError(
                        f"vmap out_axes=None for output {i}, but that output depends on the "
                        f"mapped input (it differs across the batch); give it an axis",
                        user_frame(2))
                final.append(o)
                continue
            t = _normalize(t, o.ndim + (d is None), f"output {i}", "out_axes")
            final.append(lax.broadcast_in_dim(o, _insert(o.shape, t, size),
                                              tuple(k for k in range(o.ndim + 1) if k != t))
                         if d is None else move_axis(o, d, t))
        return out_tree.unflatten(final)

    return vmapped


def _insert(shape, pos, size):
    shape = list(shape)
    shape.insert(pos, size)
    return tuple(shape)


def _axis_size(pairs, dims, axis_size):
    sizes = {}
    for (path, x), d in zip(pairs, dims):
        if d is not None:
            sizes[keystr(path) or "argument"] = leaf_type(x).shape[d]
    distinct = set(sizes.values())
    if axis_size is not None:
        distinct.add(axis_size)
    if len(distinct) > 1:
        listing = ", ".join(f"argument {p} has size {n}" for p, n in sizes.items())
        extra = f" and axis_size={axis_size}" if axis_size is not None else ""
        raise BatchingError(f"vmap got inconsistent sizes for the mapped axis: {listing}{extra}",
                            user_frame(3))
    if not distinct:
        raise BatchingError("vmap needs at least one mapped argument (an in_axes entry that is "
                            "not None) or an explicit axis_size", user_frame(3))
    return distinct.pop()
