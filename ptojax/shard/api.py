"""``pto.shard``: automatic SPMD partitioning of a global-view function.

    step = pto.shard(train_step, mesh=mesh, in_specs=(P(), P('data')), out_specs=P())

The user writes the program on whole arrays. ``shard`` traces it to a global IR, partitions it
(``shard_propagate`` chooses every value's split, ``shard_partition`` emits the per-device
program with its collectives) and runs that program on every device of the mesh — as a
``shard_map`` equation, so ``make_ir(pto.shard(f))`` shows the per-device program, and
``grad``/``jit``/``vmap`` compose with it. Like ``jit``, the partitioned program is cached
per argument signature; called outside any trace it takes and returns ``ShardedArray``s, so
values stay split between calls.
"""
from __future__ import annotations

import functools

from ptojax.errors import ShardingError
from ptojax.ir.core import consts_as_args
from ptojax.eval.leaves import leaf_type
from ptojax.sharding import spec_dims, spec_of_dims
from ptojax.source_info import user_frame
from ptojax.trace import trace_flat, tracing
from ptojax.shard.map import (apply_shard_map, check_mesh, leaf_dims,
                                         specs_for_leaves)
from ptojax.shard.partition import partition, partition_as_propagated
from ptojax.pytree import tree_flatten, tree_flatten_with_path
from ptojax.public import add_examples as _add_examples


def shard(fn=None, *, mesh, in_specs, out_specs):
    """Partition ``fn`` (written on whole arrays) over ``mesh``: arguments arrive split as
    ``in_specs`` say (pytree prefixes of PartitionSpecs), results leave split as
    ``out_specs`` say (None: as propagation splits them); collectives are inserted where the
    program needs them."""
    if fn is None:
        return functools.partial(shard, mesh=mesh, in_specs=in_specs, out_specs=out_specs)
    check_mesh(mesh, "shard")
    cache: dict = {}

    @functools.wraps(fn)
    def sharded(*args):
        source = user_frame(2)
        pairs, in_tree = tree_flatten_with_path(args)
        leaves = [x for _, x in pairs]
        dims = leaf_dims(pairs, specs_for_leaves(in_specs, args, "shard in_specs"), mesh,
                         "shard argument")
        key = (in_tree, tuple(leaf_type(x) for x in leaves), tuple(dims))
        entry = None if tracing() else cache.get(key)
        if entry is None:
            entry = _partitioned(fn, mesh, leaves, in_tree, dims, out_specs, source)
            if not tracing():
                cache[key] = entry
        body, consts, specs_in, specs_out, out_tree = entry
        outs = apply_shard_map([*consts, *leaves], body, mesh, specs_in, specs_out)
        return out_tree.unflatten(outs)

    return sharded


def _partitioned(fn, mesh, leaves, in_tree, dims, out_specs, source):
    trees = {}

    def flat_fn(*xs):
        out_leaves, trees["out"] = tree_flatten(fn(*in_tree.unflatten(xs)))
        return out_leaves

    closed = trace_flat(flat_fn, [leaf_type(x) for x in leaves], getattr(fn, "__name__", "fn"))
    out_tree = trees["out"]
    body, consts = consts_as_args(closed)
    in_dims = [((),) * len(t.shape) for t in body.in_types[:len(consts)]] + list(dims)
    if out_specs is None:
        local, out_dims = partition_as_propagated(body, mesh, in_dims)
    else:
        out_dims = _out_dims(closed, out_tree, out_specs, mesh, source)
        local = partition(body, mesh, in_dims, out_dims)
    in_specs = tuple(spec_of_dims(d) for d in in_dims)
    return local, list(consts), in_specs, tuple(spec_of_dims(d) for d in out_dims), out_tree


def _out_dims(closed, out_tree, out_specs, mesh, source) -> list:
    out_flat = specs_for_leaves(out_specs, out_tree.unflatten(closed.out_types),
                                "shard out_specs")
    out_dims = []
    for i, (t, spec) in enumerate(zip(closed.out_types, out_flat)):
        try:
            out_dims.append(spec_dims(spec, t.shape, mesh, f"shard output {i} {t}"))
        except ShardingError as e:
            raise e.with_source(source) from None
    return out_dims


_add_examples(globals(), """
shard:
    >>> mesh = pto.make_mesh((4,), ('i',))
    >>> f = pto.shard(lambda x: pnp.sin(x) * 2.0, mesh=mesh, in_specs=pto.P('i'),
    ...               out_specs=pto.P('i'))
    >>> f(pnp.zeros(8)).sharding.spec
    P('i',)
""")
