"""``dimension_size``: the run-time value of a symbolic dimension (``x.shape[0]`` used as a
number: ``sum(x) / seq``). Its ``size`` param is a ``DimExpr`` (``ir/symbolic.py``) that the
executor evaluates with each call's sizes; with an int it is a constant."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.ir.symbolic import DimExpr
from ptojax.ir.types import TensorType
from ptojax.ops import sharding_rules as sr
from ptojax.ops.costs import no_flops
from ptojax.ops.tangents import zero_jvp
from ptojax.trace import Primitive, Unsupported
from ptojax.public import add_examples as _add_examples


def _abstract(size, dtype, weak_type):
    return TensorType((), dtypes.canonicalize(dtype), weak_type)


def _impl(size, dtype, weak_type):
    return np.asarray(size, dtype)


dimension_size_p = Primitive("dimension_size", _abstract, _impl)


def dimension_size(size, dtype=dtypes.int32, weak_type: bool = False):
    """The scalar value of ``size`` (a symbolic dimension or an int) as ``dtype``."""
    if type(size) is not DimExpr:
        return np.asarray(size, dtype)
    return dimension_size_p.bind(size=size, dtype=dtypes.canonicalize(dtype),
                                 weak_type=weak_type)


def _factors(eqn) -> sr.OpRule:
    return sr.Factors().rule([], [[]])


dimension_size_p.define(
    jvp=zero_jvp(dimension_size_p),
    batch=Unsupported("dimension_size has no operands, so nothing to batch"),
    shard=sr.ShardRule(_factors),
    tile=Unsupported("a run-time size is a scalar; kept as a tensor op"), cost=no_flops,
    reference=lambda jnp, lax: lambda size, dtype, weak_type: jnp.asarray(size, dtype))


_add_examples(globals(), """
dimension_size:
    >>> from ptojax.ops.dimension_size import dimension_size
    >>> f = pto.jit(lambda x: x.sum() / x.shape[0], dynamic={"x": {0: pto.Dim("n", 1, 64)}})
    >>> f(pnp.arange(4.0)), f(pnp.arange(6.0))
    (Array(1.5, dtype=float32), Array(2.5, dtype=float32))
""")
