"""``debug_callback``: call a Python function on values while a program runs (the primitive
behind ``pto.debug.callback`` and ``pto.debug.print``).

It has operands and no results, and is ``effectful``: the optimizer never removes, merges or
folds it, loops never move it out of their body, and executors run it in program order,
between kernels. Its facts:

- jvp: the callback sees the primal values (tangents are not its business), as in JAX;
- batch: one equation whose callback runs once per example, in order, with that example's
  slices (unbatched operands passed whole), as JAX's unrolled rule does;
- shard: under ``pto.shard`` the callback sees the whole (logical) values once, on the first
  device (``partitioned=False``), or every device's own blocks (``partitioned=True``); in a
  ``shard_map`` body every device calls it with its blocks, as in JAX.

The callback receives ``Array`` copies, so it may keep them.
"""
from __future__ import annotations

import numpy as np

from ptojax.eval.array import Array
from ptojax.ops import sharding_rules as sr
from ptojax.ops.costs import no_flops
from ptojax.ops.pure_callback import run_callback
from ptojax.trace import Primitive, Unsupported


def _abstract_eval(*types, callback, ordered, partitioned):
    return []


def _impl(*values, callback, ordered, partitioned):
    run_callback(callback, values)
    return []


debug_callback_p = Primitive("debug_callback", _abstract_eval, _impl, multiple_results=True,
                             effectful=True)


def debug_callback(callback, *args, ordered=False, partitioned=False):
    """Run ``callback(*args)`` (on Arrays) when the program reaches this point."""
    return debug_callback_p.bind(*args, callback=callback, ordered=ordered,
                                 partitioned=partitioned)


def name_of(callback) -> str:
    """How a callback is shown in printed IR."""
    return getattr(callback, "__name__", None) or repr(callback)


# transforms -------------------------------------------------------------------------------------
def _jvp(primals, tangents, **params):
    return debug_callback_p.bind(*primals, **params), []


class PerExample:
    """A callback run once per example of a batch: operand ``i`` is batched at ``dims[i]``
    (None: shared by all examples). Hashable, so equal rewrites compare equal."""
    __slots__ = ("callback", "dims")

    def __init__(self, callback, dims):
        self.callback = callback
        self.dims = tuple(dims)

    def __call__(self, *args):
        size = next(a.shape[d] for a, d in zip(args, self.dims) if d is not None)
        for i in range(size):
            self.callback(*(a if d is None else Array(np.take(np.asarray(a), i, axis=d))
                            for a, d in zip(args, self.dims)))

    def __eq__(self, other):
        return type(other) is PerExample and (self.callback, self.dims) == (other.callback,
                                                                             other.dims)

    def __hash__(self):
        return hash((self.callback, self.dims))

    def __repr__(self):
        return f"per_example({name_of(self.callback)}, dims={self.dims})"


def _batch(args, dims, callback, **params):
    return debug_callback_p.bind(*args, callback=PerExample(callback, dims), **params), []


class OnFirstDevice:
    """A callback run only where its leading operand (the device's position in the mesh)
    is 0."""
    __slots__ = ("callback",)

    def __init__(self, callback):
        self.callback = callback

    def __call__(self, position, *args):
        if int(np.asarray(position)) == 0:
            self.callback(*args)

    def __eq__(self, other):
        return type(other) is OnFirstDevice and self.callback == other.callback

    def __hash__(self):
        return hash(("first device", self.callback))

    def __repr__(self):
        return f"on_first_device({name_of(self.callback)})"


def _shard_factors(eqn) -> sr.OpRule:
    """No constraint on how operands are split (the local form gathers them if it must)."""
    f = sr.Factors()
    return f.rule([[f.new(n) for n in sr.shape_of(a)] for a in eqn.inputs], [])


def _shard_local(ctx, eqn, operands, targets):
    """The whole values once, on the first device; or (``partitioned``) each device's own
    blocks on every device. Pending sums are resolved first."""
    params = dict(eqn.params)
    if params["partitioned"]:
        values = [ctx.reshard(x, x.dims).value for x in operands]
    else:
        values = [ctx.reshard(x, ((),) * len(x.dims)).value for x in operands]
        values.insert(0, ctx.device_index(ctx.mesh.axis_names))
        params["callback"] = OnFirstDevice(params["callback"])
    debug_callback_p.bind(*values, **params)
    return []


debug_callback_p.define(
    jvp=_jvp, batch=_batch,
    shard=sr.ShardRule(_shard_factors, local=_shard_local),
    tile=Unsupported("a host callback runs between kernels, as a tensor-level equation"),
    cost=no_flops,
    reference=Unsupported("a host callback computes no values to compare with JAX"))
