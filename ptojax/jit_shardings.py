"""``jit(fn, in_shardings=..., out_shardings=...)``: where a jitted function's arguments and
results are placed, as JAX's arguments of those names.

Each is a sharding (``NamedSharding``, ``PartitionSpec`` on the mesh of ``pto.set_mesh``,
``None`` for "as they come") or a pytree prefix of them: of the positional non-static
arguments for ``in_shardings``, of the result for ``out_shardings``. Called at the top level,
arguments are placed with ``device_put`` before the call (so the call partitions as for
arguments the caller placed) and results after it; inside another trace both become
``with_sharding_constraint`` hints for ``pto.shard``. Values never change, only placement.
"""
from __future__ import annotations

import functools

from ptojax.shard.constraint import with_sharding_constraint
from ptojax.shard.runtime.arrays import device_put
from ptojax.sharding import NamedSharding, PartitionSpec
from ptojax.trace import tracing
from ptojax.pytree import tree_broadcast, tree_flatten


def _constrained(x, shardings):
    """``x`` with a sharding constraint on every leaf whose sharding is given."""
    leaves, treedef = tree_flatten(x)
    if treedef.is_leaf:
        per_leaf = [shardings]
    else:
        per_leaf = treedef.flatten_up_to(tree_broadcast(shardings, x, is_leaf=_is_sharding))
    return treedef.unflatten(
        with_sharding_constraint(v, s) if isinstance(s, (NamedSharding, PartitionSpec)) else v
        for v, s in zip(leaves, per_leaf))


def _is_sharding(x) -> bool:
    return x is None or isinstance(x, (NamedSharding, PartitionSpec)) or \
        hasattr(x, "device_set")


def _placed(x, shardings):
    return _constrained(x, shardings) if tracing() else device_put(x, shardings)


class PlacedJit:
    """A ``Jitted`` function whose positional arguments and results are placed as given."""

    def __init__(self, jitted, in_shardings, out_shardings, static_argnums):
        functools.update_wrapper(self, jitted)
        self._jitted = jitted
        self._in = in_shardings
        self._out = out_shardings
        self._static = set(static_argnums)

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if self._in is not None:
            positions = [i for i in range(len(args)) if i not in self._static]
            dynamic = _placed(tuple(args[i] for i in positions), _prefix(self._in, positions))
            args = list(args)
            for i, v in zip(positions, dynamic):
                args[i] = v
        out = self._jitted(*args, **kwargs)
        return out if self._out is None else _placed(out, self._out)

    def __getattr__(self, name):   # lower, trace, clear_cache, ... of the jitted function
        return getattr(self._jitted, name)


def _prefix(in_shardings, positions):
    """``in_shardings`` as a prefix of the tuple of dynamic positional arguments: one sharding
    for all, or a tuple/list with one entry per argument."""
    if isinstance(in_shardings, (tuple, list)):
        if len(in_shardings) != len(positions):
            raise ValueError(f"jit: in_shardings has {len(in_shardings)} entries but the "
                             f"function was called with {len(positions)} positional "
                             f"non-static arguments")
        return tuple(in_shardings)
    return tuple(in_shardings for _ in positions)
