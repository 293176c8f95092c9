"""``pto.pmap``: JAX's ``jax.pmap``, one program per device over a mapped leading axis.

    pto.pmap(f, axis_name="i")(x)       # x: [n, ...] with n <= pto.device_count()

is ``shard_map`` over a one-axis mesh of the first ``n`` devices (or ``devices=``), under
``jit``: each device gets one slice of every mapped argument (``in_axes``; None broadcasts),
``f`` sees the slice without the mapped axis and communicates through ``pto.lax``
collectives by ``axis_name``, and its per-device results are stacked along ``out_axes``
(None: the value of device 0, which ``f`` should have made the same everywhere, e.g. with
``psum``). Composes with grad and vmap through ``shard_map``'s rules.
"""
from __future__ import annotations

import functools

from ptojax.devices import devices as all_devices
from ptojax.errors import ShardingError
from ptojax.eval.leaves import leaf_type
from ptojax.jit import jit
from ptojax.numpy.manipulation import expand_dims, moveaxis, squeeze
from ptojax.public import add_examples
from ptojax.sharding import Mesh, P
from ptojax.shard.map import shard_map
from ptojax.source_info import user_frame
from ptojax.pytree import tree_broadcast, tree_flatten, tree_leaves, tree_unflatten

ANONYMOUS_AXIS = "_pmap"


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
    """Map ``fun`` over axis ``in_axes`` of its arguments, one slice per device (JAX's
    ``pmap``). ``static_broadcasted_argnums`` are hashable arguments every device gets as
    Python values; ``backend`` is accepted for JAX's signature (one platform here)."""
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes,
                                 out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums,
                                 devices=devices, backend=backend, axis_size=axis_size,
                                 donate_argnums=donate_argnums)
    name = ANONYMOUS_AXIS if axis_name is None else axis_name
    statics = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
               else tuple(static_broadcasted_argnums))

    @functools.wraps(fun)
    def per_device_program(*args):
        source = user_frame()
        dynamic = [a for i, a in enumerate(args) if i not in statics]
        axes = _leaf_axes(_without_statics(in_axes, len(args), statics), dynamic, source)
        leaves, tree = tree_flatten(dynamic)
        size = _mapped_size(leaves, axes, axis_size, source)
        mesh = Mesh(_devices_for(size, devices, source), (name,))
        traced = {}

        def on_device(*local):
            local = [x if ax is None else squeeze(x, 0) for x, ax in zip(local, axes)]
            out = fun(*_with_statics(tree_unflatten(tree, local), args, statics))
            out_leaves, traced["tree"] = tree_flatten(out)
            traced["axes"] = _leaf_axes_of_outputs(out_axes, out, source)
            return [expand_dims(y, 0) for y in out_leaves]

        outs = shard_map(on_device, mesh=mesh, in_specs=tuple(
            P() if ax is None else P(name) for ax in axes), out_specs=P(name),
            check_rep=False)(*[x if ax is None else moveaxis(x, ax, 0)
                               for x, ax in zip(leaves, axes)])
        return tree_unflatten(traced["tree"], [
            y[0] if ax is None else moveaxis(y, 0, ax) for y, ax in zip(outs, traced["axes"])])

    return jit(per_device_program, static_argnums=statics, donate_argnums=donate_argnums)


def _is_none(x) -> bool:
    return x is None


def _leaf_axes(in_axes, args, source) -> list:
    """The mapped axis (or None) of every leaf of ``args``: ``in_axes`` is one entry for all,
    or a tuple/list with a pytree prefix per (non-static) positional argument."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
        raise ShardingError(f"pmap in_axes has {len(in_axes)} entries but the function got "
                            f"{len(args)} mapped-or-broadcast positional arguments; give one "
                            f"entry per argument", source)
    prefix = in_axes if isinstance(in_axes, tuple) else tuple(in_axes for _ in args)
    try:
        full = tree_broadcast(list(prefix), list(args), is_leaf=_is_none)
    except ValueError as e:
        raise ShardingError(f"pmap in_axes={in_axes!r} is not a pytree prefix of the "
                            f"arguments: {e}", source) from None
    axes = tree_leaves(full, is_leaf=_is_none)
    return [None if ax is None else _axis(ax, leaf_type(x).ndim, "in_axes", source)
            for ax, x in zip(axes, tree_leaves(list(args)))]


def _leaf_axes_of_outputs(out_axes, out, source) -> list:
    try:
        full = tree_broadcast(out_axes, out, is_leaf=_is_none)
    except ValueError as e:
        raise ShardingError(f"pmap out_axes={out_axes!r} is not a pytree prefix of the "
                            f"outputs: {e}", source) from None
    return [None if ax is None else _axis(ax, leaf_type(y).ndim + 1, "out_axes", source)
            for ax, y in zip(tree_leaves(full, is_leaf=_is_none), tree_leaves(out))]


def _axis(ax, ndim, what, source) -> int:
    if isinstance(ax, bool) or not isinstance(ax, int) or not -ndim <= ax < ndim:
        raise ShardingError(f"pmap {what} entry {ax!r} is not an axis of a rank-{ndim} "
                            f"value (an int in {-ndim}..{ndim - 1}, or None)", source)
    return ax % ndim


def _mapped_size(leaves, axes, axis_size, source) -> int:
    sizes = {leaf_type(x).shape[ax] for x, ax in zip(leaves, axes) if ax is not None}
    if axis_size is not None:
        sizes.add(axis_size)
    if len(sizes) != 1:
        raise ShardingError(
            "pmap got inconsistent sizes for the mapped axes: " + str(sorted(sizes))
            if sizes else "pmap needs at least one mapped argument (an in_axes entry that is "
            "not None) or axis_size", source)
    return sizes.pop()


def _devices_for(size, devices, source) -> list:
    available = list(all_devices()) if devices is None else list(devices)
    if devices is not None and len(available) != size:
        raise ShardingError(f"pmap was given {len(available)} devices but the mapped axis "
                            f"has size {size}; they must be equal", source)
    if size > len(available):
        raise ShardingError(f"pmap maps an axis of size {size}, which needs {size} devices, "
                            f"but only {len(available)} are available; map fewer slices, or "
                            f"set ptojax_num_devices (PTOJAX_NUM_DEVICES) before first use",
                            source)
    return available[:size]


def _without_statics(in_axes, n_args, statics):
    """``in_axes`` given for every positional argument, less the static arguments' entries."""
    if isinstance(in_axes, (tuple, list)) and statics and len(in_axes) == n_args:
        return tuple(ax for i, ax in enumerate(in_axes) if i not in statics)
    return in_axes


def _with_statics(dynamic, args, statics) -> list:
    """The positional arguments with the static ones put back at their places."""
    it = iter(dynamic)
    return [args[i] if i in statics else next(it) for i in range(len(args))]


add_examples(globals(), """
pmap:
    >>> centered = pto.pmap(lambda x: x - pto.lax.pmean(x, "i"), axis_name="i")
    >>> centered(pnp.arange(4.0))
    Array([-1.5, -0.5,  0.5,  1.5], dtype=float32)
""")
