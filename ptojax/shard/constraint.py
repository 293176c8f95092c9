"""``with_sharding_constraint(x, spec)``: a hint for ``pto.shard`` that ``x`` be split as
``spec`` says at this point of the program.

It is the identity primitive ``sharding_constraint[spec]``. The partitioner fixes the value's
split to ``spec`` (and propagates it forward and backward from there) and reshards to it
where the value is computed; everywhere else — eagerly, under ``jit``, in a ``shard_map`` —
it does nothing. Its tangent and cotangent carry the same constraint.
"""
from __future__ import annotations

from ptojax.errors import ShardingError
from ptojax.ops import references as ref, sharding_rules as sr
from ptojax.ops.costs import no_flops
from ptojax.ops.tangents import Zero, is_zero
from ptojax.shard.map import specs_for_leaves
from ptojax.sharding import NamedSharding, check_dims, spec_of_dims
from ptojax.trace import Primitive, Unsupported
from ptojax.pytree import tree_flatten
from ptojax.public import add_examples as _add_examples


def _abstract_eval(x, spec):
    if len(spec) > x.ndim:
        raise ShardingError(f"with_sharding_constraint: the spec {spec} has {len(spec)} "
                            f"entries but the value {x} has rank {x.ndim}")
    return x


sharding_constraint_p = Primitive("sharding_constraint", _abstract_eval, lambda x, spec: x,
                                  linear=True)


def with_sharding_constraint(x, spec):
    """``x`` (a pytree) constrained to be split as ``spec`` (a PartitionSpec, NamedSharding,
    or a pytree prefix of them) inside ``pto.shard``."""
    leaves, tree = tree_flatten(x)
    spec = spec.spec if isinstance(spec, NamedSharding) else spec
    specs = specs_for_leaves(spec, x, "with_sharding_constraint spec")
    return tree.unflatten([sharding_constraint_p.bind(v, spec=s)
                           for v, s in zip(leaves, specs)])


def constraint_dims(eqn, mesh):
    """The dims a sharding_constraint equation fixes (validated), or None for other eqns."""
    if eqn.prim is not sharding_constraint_p:
        return None
    x = eqn.inputs[0].type
    try:
        return check_dims(eqn.params["spec"].dims(x.ndim), x.shape, mesh,
                          f"with_sharding_constraint on {x}")
    except ShardingError as e:
        raise e.with_source(eqn.source) from None


def _local(ctx, eqn, operands, targets):
    return [ctx.reshard(operands[0], constraint_dims(eqn, ctx.mesh))]


def _jvp(primals, tangents, spec):
    out = sharding_constraint_p.bind(primals[0], spec=spec)
    t = tangents[0]
    return out, Zero(out.aval) if is_zero(t) else sharding_constraint_p.bind(t, spec=spec)


def _batch(args, dims, spec):
    (x,), (d,) = args, dims
    parts = list(spec.dims(x.ndim - 1))
    parts.insert(d, ())
    return sharding_constraint_p.bind(x, spec=spec_of_dims(tuple(parts))), d


sharding_constraint_p.define(
    jvp=_jvp, transpose=lambda ct, x, spec: [sharding_constraint_p.bind(ct, spec=spec)],
    batch=_batch, shard=sr.ShardRule(None, local=_local),
    tile=Unsupported("a sharding constraint is removed by partitioning, before tiling"),
    cost=no_flops, reference=ref.identity)


_add_examples(globals(), """
with_sharding_constraint:
    >>> mesh = pto.make_mesh((4,), ('i',))
    >>> def f(x):
    ...     return pto.with_sharding_constraint(x * 2.0, pto.P('i'))
    >>> g = pto.shard(f, mesh=mesh, in_specs=pto.P(), out_specs=pto.P('i'))
    >>> g(pnp.ones(8)).sharding.spec
    P('i',)
""")
