"""Current JAX's explicit-sharding API, mapped onto ``pto.shard``.

- ``reshard(x, sharding)``: eagerly, ``x`` placed as ``sharding`` says (``device_put``);
  inside a traced function, a ``with_sharding_constraint`` that ``pto.shard`` honours.
- ``jit`` of a function called with sharded arrays (``ShardedArray``, e.g. from
  ``device_put(x, NamedSharding(mesh, P('data')))``) partitions it with ``pto.shard``: the
  arguments' shardings are its ``in_specs`` (unsharded arguments are replicated) and the
  results stay split as propagation splits them — as JAX's jit does with committed sharded
  inputs. Values stay split between calls.

Mesh axis types (``AxisType.Explicit``/``Auto``) are recorded but partitioned alike.
"""
from __future__ import annotations

from ptojax import sharding as sharding_module
from ptojax.errors import ShardingError
from ptojax.sharding import NamedSharding, PartitionSpec, named_sharding
from ptojax.shard.api import shard
from ptojax.shard.constraint import with_sharding_constraint
from ptojax.shard.runtime.arrays import ShardedArray, device_put
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.pytree import tree_broadcast, tree_flatten


def _is_sharding(x) -> bool:
    return isinstance(x, (NamedSharding, PartitionSpec))


def reshard(xs, out_shardings):
    """``xs`` (a pytree of arrays) resplit as ``out_shardings`` (a NamedSharding or
    PartitionSpec — the mesh of ``set_mesh`` — or a pytree prefix of them).

    Eagerly the values move (``device_put``); inside ``jit``/``pto.shard`` the split is a
    constraint the partitioner reshards to.

    Args:
      xs: arrays (a pytree).
      out_shardings: NamedShardings or PartitionSpecs (a pytree prefix of ``xs``).

    Returns:
      ``xs`` with the new shardings.

    Example:
      >>> mesh = pto.make_mesh((2,), ("data",))
      >>> pto.reshard(pnp.arange(4.0), pto.NamedSharding(mesh, pto.P("data"))).sharding.spec
      P('data',)
    """
    leaves, treedef = tree_flatten(xs)
    shardings = treedef.flatten_up_to(tree_broadcast(out_shardings, xs, is_leaf=_is_sharding))
    return treedef.unflatten(_reshard_leaf(x, s) for x, s in zip(leaves, shardings))


def _reshard_leaf(x, sharding):
    if not _is_sharding(sharding):
        raise ShardingError(f"reshard: expected a NamedSharding or a PartitionSpec, got "
                            f"{sharding!r}", user_frame(3))
    if isinstance(x, Tracer):
        spec = sharding.spec if isinstance(sharding, NamedSharding) else sharding
        return with_sharding_constraint(x, spec)
    return device_put(x, named_sharding(sharding, "reshard"))


sharding_module.reshard = reshard   # pto.sharding.reshard, as jax.sharding.reshard


def mesh_of_sharded(leaves):
    """The mesh of the sharded arrays among ``leaves`` (None if there are none); they must
    share one mesh."""
    meshes = {x.sharding.mesh for x in leaves if isinstance(x, ShardedArray)}
    if len(meshes) > 1:
        raise ShardingError(f"jit: the arguments are sharded over different meshes "
                            f"{sorted(map(repr, meshes))}; reshard them onto one mesh",
                            user_frame(3))
    return next(iter(meshes), None)


def spec_of_leaf(x) -> PartitionSpec:
    """The PartitionSpec a jit argument arrives with (replicated unless it is sharded)."""
    if isinstance(x, ShardedArray):
        return x.sharding.spec
    return PartitionSpec()


def partitioned(flat_fn, mesh, leaves):
    """``pto.shard`` of ``flat_fn`` (over the flat ``leaves``) with the leaves' own splits
    as in_specs and the propagated splits as out_specs."""
    specs = tuple(spec_of_leaf(x) for x in leaves)
    return shard(flat_fn, mesh=mesh, in_specs=specs, out_specs=None)
