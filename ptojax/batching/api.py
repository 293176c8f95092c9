"""Public ``vmap``: pytree handling of in_axes/out_axes around the flat ``vmap_ir`` core.

``vmap(fn)(*args)`` traces ``fn`` once on per-example types (with its axis name bound, so
collectives inside can look it up), rewrites the IR with ``vmap_ir`` and evaluates the result
— eagerly, or into the enclosing trace, so ``make_ir(vmap(f))`` is one batched IR.
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable

import numpy as np

from ptojax import dtypes
from ptojax.errors import BatchingError
from ptojax.eval.leaves import leaf_type
from ptojax.eval.interpreter import eval_ir
from ptojax.source_info import user_frame
from ptojax.trace import ABSTRACT, state_of, trace_flat
from ptojax.batching.vmap import vmap_ir
from ptojax.eval import axis_env
from ptojax.ops.broadcast import broadcast_at
from ptojax.ops.shape import move_axis
from ptojax.pytree import (keystr, tree_flatten, tree_flatten_with_path, tree_leaves,
                              tree_structure)
from ptojax.public import add_examples as _add_examples


def vmap(fn: Callable, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
    """Vectorize ``fn`` over axes of its arguments.

    ``in_axes``: an int (negative counts from the end), None (not mapped), or a tuple with one
    entry per positional argument, each a pytree prefix of that argument. Keyword arguments
    are mapped over axis 0. ``out_axes``: where each output carries the batch (an int, None
    for outputs that do not depend on the mapped inputs, or a pytree prefix of the output).
    ``axis_name`` names the mapped axis for collectives (``pto.lax.psum(x, axis_name)``...);
    ``axis_size`` gives the size when no argument is mapped."""
    if isinstance(in_axes, list):  # JAX accepts a list for the tuple of positional entries
        in_axes = tuple(in_axes)
    _check_definition(in_axes, out_axes, axis_name, axis_size)
    names = _parameter_names(fn)

    @functools.wraps(fn)
    def vmapped(*args, **kwargs):
        source = user_frame()
        pairs, in_tree = tree_flatten_with_path((args, kwargs))
        leaves = [x for _, x in pairs]
        types = [leaf_type(x, path) for path, x in pairs]
        axes = _input_axes(in_axes, args, kwargs, source)
        dims = [_normalize(ax, t.ndim, lambda: f"{_describe_input(path, names)} of type {t}",
                           "in_axes", source) for ax, t, (path, _) in zip(axes, types, pairs)]
        size = _mapped_size(pairs, names, types, dims, axis_size, source)
        example_types = [t if d is None else t.update(shape=t.shape[:d] + t.shape[d + 1:])
                         for t, d in zip(types, dims)]
        with axis_env.bound_batch_axis(axis_name, size):
            closed, out_tree = _trace(fn, in_tree, example_types, leaves, dims)
        batched, out_dims = vmap_ir(closed, dims, size, axis_name)
        outs = eval_ir(batched, leaves)
        return _place_outputs(outs, out_dims, out_tree, out_axes, size, source)

    return vmapped


def _trace(fn, in_tree, types, leaves, dims):
    """Trace ``fn`` on per-example types. Outside jit the trace is eager: Python may use the
    values of unmapped arguments (as in JAX), never those of mapped ones. An unmapped Python
    scalar reaches ``fn`` as itself, as in JAX (so it can be a static argument of an inner jit)."""
    trees = []
    python_scalars = {i: x for i, (x, d) in enumerate(zip(leaves, dims))
                      if d is None and type(x) in dtypes.PYTHON_SCALARS}

    def flat_fn(*xs):
        xs = [python_scalars.get(i, x) for i, x in enumerate(xs)]
        args, kwargs = in_tree.unflatten(xs)
        out_leaves, out_tree = tree_flatten(fn(*args, **kwargs))
        trees.append(out_tree)
        return out_leaves

    states = [ABSTRACT if d is not None else state_of(x) for x, d in zip(leaves, dims)]
    closed = trace_flat(flat_fn, types, getattr(fn, "__name__", "fn"), leaves, states,
                        "it depends on an argument mapped by vmap, which has one value per "
                        "example")
    return closed, trees[0]


# checks and messages -------------------------------------------------------------------------
def _is_axis(ax) -> bool:
    return isinstance(ax, (int, np.integer)) and not isinstance(ax, (bool, np.bool_))


def _check_definition(in_axes, out_axes, axis_name, axis_size):
    source = user_frame()
    if not (in_axes is None or _is_axis(in_axes) or isinstance(in_axes, tuple)):
        raise BatchingError(f"vmap in_axes must be an int, None, or a tuple with one entry "
                            f"per positional argument, got {in_axes!r}", source)
    for what, spec in (("in_axes", in_axes), ("out_axes", out_axes)):
        for ax in tree_leaves(spec, is_leaf=lambda x: x is None):
            if ax is not None and not _is_axis(ax):
                raise BatchingError(f"vmap {what} entries must be ints or None, got {ax!r} "
                                    f"in {spec!r}", source)
    if axis_name is not None and not isinstance(axis_name, str):
        raise BatchingError(f"vmap axis_name must be a string, got {axis_name!r}", source)
    if axis_size is not None and not (_is_axis(axis_size) and axis_size >= 0):
        raise BatchingError(f"vmap axis_size must be a non-negative int, got {axis_size!r}",
                            source)


def _parameter_names(fn) -> list:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    names = []
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            break
        names.append(p.name)
    return names


def _describe_input(path, names) -> str:
    """``x``, ``params['w']`` or ``args[2]``: where a leaf sits in the call's arguments."""
    group, key, rest = path[0].idx, path[1], keystr(path[2:])
    if group == 1:
        return f"{key.key}{rest}"
    return f"{names[key.idx] if key.idx < len(names) else f'args[{key.idx}]'}{rest}"


def _input_axes(in_axes, args, kwargs, source) -> list:
    """The in_axes entry of every leaf of ``(args, kwargs)``; keyword leaves map over 0."""
    n_kw = len(tree_leaves(kwargs))
    if not isinstance(in_axes, tuple):
        return [in_axes] * len(tree_leaves(args)) + [0] * n_kw
    if len(in_axes) != len(args):
        raise BatchingError(f"vmap in_axes has {len(in_axes)} entries but the function was "
                            f"called with {len(args)} positional arguments; give one entry "
                            f"per positional argument", source)
    return _prefix_leaves(in_axes, args, "in_axes", "the positional arguments", source) \
        + [0] * n_kw


def _prefix_leaves(prefix, tree, what, whose, source) -> list:
    """One entry of ``prefix`` per leaf of ``tree``, of which it must be a pytree prefix."""
    prefix_def = tree_structure(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = prefix_def.flatten_up_to(tree)
    except ValueError as e:
        raise BatchingError(f"vmap {what}={prefix!r} is not a pytree prefix of {whose} "
                            f"(structure {tree_structure(tree)}): {e}", source) from None
    entries = tree_leaves(prefix, is_leaf=lambda x: x is None)
    out = []
    for ax, sub in zip(entries, subtrees):
        out += [ax] * len(tree_leaves(sub))
    return out


def _normalize(ax, ndim, where, what, source):
    """``ax`` (an entry of in_axes/out_axes) in ``0..ndim-1``, or a BatchingError that names
    the value (``where()`` describes it)."""
    if ax is None:
        return None
    ax = int(ax)
    if not -ndim <= ax < ndim:
        valid = f"valid axes are {-ndim}..{ndim - 1}" if ndim else "it has no axes"
        raise BatchingError(f"vmap {what}={ax} is out of range for {where()} (rank {ndim}); "
                            f"{valid}", source)
    return ax % ndim


def _mapped_size(pairs, names, types, dims, axis_size, source) -> int:
    mapped = [(path, t, d) for (path, _), t, d in zip(pairs, types, dims) if d is not None]
    sizes = {t.shape[d] for _, t, d in mapped}
    if axis_size is not None:
        sizes.add(int(axis_size))
    if len(sizes) > 1:
        lines = [f"  {_describe_input(path, names)}: axis {d} of {t} has size {t.shape[d]}"
                 for path, t, d in mapped]
        if axis_size is not None:
            lines.append(f"  axis_size={axis_size}")
        raise BatchingError("vmap got mapped axes of different sizes:\n" + "\n".join(lines),
                            source)
    if not sizes:
        raise BatchingError("vmap needs at least one mapped argument (an in_axes entry that "
                            "is not None) or an explicit axis_size", source)
    return sizes.pop()


# outputs -------------------------------------------------------------------------------------
def _place_outputs(outs, out_dims, out_tree, out_axes, size, source):
    tree = out_tree.unflatten(outs)
    targets = _prefix_leaves(out_axes, tree, "out_axes", "the outputs", source)
    paths = [path for path, _ in tree_flatten_with_path(tree)[0]]
    final = []
    for o, d, t, path in zip(outs, out_dims, targets, paths):
        where = f"output{keystr(path)}"
        if t is None:
            if d is not None:
                raise BatchingError(
                    f"vmap out_axes=None for {where}, but it depends on the mapped inputs "
                    f"(it differs across the batch); give it an axis, or make it the same "
                    f"for every example (e.g. pto.lax.psum over the axis_name)", source)
            final.append(o)
            continue
        rank = len(o.shape) + (d is None)
        t = _normalize(t, rank, lambda: f"{where} (batched shape {_batched_shape(o, d, size)})",
                       "out_axes", source)
        final.append(broadcast_at(o, t, size) if d is None else move_axis(o, d, t))
    return out_tree.unflatten(final)


def _batched_shape(o, d, size) -> tuple:
    return tuple(o.shape) if d is not None else (size, *o.shape)


_add_examples(globals(), """
vmap:
    >>> pto.vmap(pnp.dot)(pnp.ones((3, 2)), pnp.arange(6.0).reshape(3, 2))
    Array([1., 5., 9.], dtype=float32)
    >>> pto.vmap(lambda x, y: x + y, in_axes=(0, None))(pnp.arange(3), 10)
    Array([10, 11, 12], dtype=int32)
""")
