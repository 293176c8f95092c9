"""``optimization_barrier``: the identity on its operands, which the compiler may not see
through, as JAX's ``lax.optimization_barrier``: its outputs are computed before anything that
uses them, and the tile planner never fuses a kernel across it (it has no tile form, so it
stays a tensor-level equation between kernels). Tangents pass through unchanged; vmap and
sharding keep each operand's layout."""
from __future__ import annotations

import numpy as np

from ptojax.ops import sharding_rules as sr
from ptojax.ops.costs import no_flops
from ptojax.trace import Primitive, Unsupported
from ptojax.pytree import tree_flatten
from ptojax.public import add_examples as _add_examples


def _abstract_eval(*types):
    return list(types)


def _impl(*values):
    return [np.asarray(v) for v in values]


optimization_barrier_p = Primitive("optimization_barrier", _abstract_eval, _impl,
                                   multiple_results=True)


def _jvp(primals, tangents):
    return optimization_barrier_p.bind(*primals), list(tangents)


def _batch(args, dims):
    return optimization_barrier_p.bind(*args), list(dims)


def _factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    dims = [[f.new(n) for n in sr.shape_of(a)] for a in eqn.inputs]
    return f.rule(dims, dims)


optimization_barrier_p.define(
    jvp=_jvp, batch=_batch, shard=sr.ShardRule(_factors),
    tile=Unsupported("a barrier: kernels are not fused across it"), cost=no_flops,
    reference=lambda jnp, lax: lambda *xs: lax.optimization_barrier(list(xs)))


def optimization_barrier(operand):
    """``operand`` (a pytree of arrays) unchanged, with its computation kept apart from what
    follows (see the module)."""
    leaves, tree = tree_flatten(operand)
    return tree.unflatten(optimization_barrier_p.bind(*leaves))


_add_examples(globals(), """
optimization_barrier:
    >>> pto.lax.optimization_barrier((pnp.ones(2), 3.0))
    (Array([1., 1.], dtype=float32), Array(3., dtype=float32, weak_type=True))
""")
