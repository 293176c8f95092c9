"""``io_callback``: a Python function with side effects (I/O, a host random generator, a
counter) computing values inside a program, as JAX's ``jax.experimental.io_callback``.

The primitive takes the flat operands and returns arrays of the declared ``result_types``.
Unlike ``pure_callback`` it is ``effectful``: the optimizer never removes it (even when its
results are unused), merges two equal calls or folds it, loops keep it in their body, and
executors run it in program order. Its facts, as JAX's:

- jvp: it runs when no operand carries a tangent (its results then have none); a tangent on
  an operand raises (it has no derivative);
- batch: ``ordered=True`` cannot be vmapped (raises); otherwise one call per example, in
  order, with that example's slices (unbatched operands passed whole), results stacked;
- no shard, tile or reference form (a host function of whole values).
"""
from __future__ import annotations

import numpy as np

from ptojax.errors import UnsupportedError
from ptojax.ir.types import TensorType
from ptojax.ops.pure_callback import (HOST_CALLBACK_FACTS, FlatCallback, Sequential, _checked,
                                      declared_types, run_callback)
from ptojax.ops.shape import move_axis
from ptojax.ops.tangents import Zero, is_zero
from ptojax.trace import Primitive
from ptojax.pytree import tree_flatten
from ptojax.public import add_examples as _add_examples
from ptojax.source_info import user_frame


def _abstract_eval(*types, callback, result_types, ordered):
    return list(result_types)


def _impl(*values, callback, result_types, ordered):
    return _checked(run_callback(callback, values), result_types, callback)


io_callback_p = Primitive("io_callback", _abstract_eval, _impl, multiple_results=True,
                          effectful=True)


def _jvp(primals, tangents, **params):
    if not all(is_zero(t) for t in tangents):
        raise ValueError("IO callbacks do not support JVP.")
    outs = io_callback_p.bind(*primals, **params)
    return outs, [Zero(t) for t in params["result_types"]]


def _batch(args, dims, callback, result_types, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    args = [a if d is None else move_axis(a, d, 0) for a, d in zip(args, dims)]
    per_example = Sequential(callback, [d is not None for d in dims], result_types)
    batched_types = tuple(TensorType((size, *t.shape), t.dtype) for t in result_types)
    outs = io_callback_p.bind(*args, callback=per_example, result_types=batched_types,
                              ordered=ordered)
    return outs, [0] * len(outs)


io_callback_p.define(jvp=_jvp, batch=_batch, **HOST_CALLBACK_FACTS)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs):
    """``callback(*args, **kwargs)``, a Python function that may have side effects, called
    inside the program (under ``jit`` too) every time the program reaches it, as JAX's
    ``jax.experimental.io_callback``. It returns arrays of the shapes and dtypes of
    ``result_shape_dtypes`` (a pytree of ``ShapeDtypeStruct``-like leaves, or None for no
    results). ``ordered=True`` keeps program order with other ordered effects and refuses
    ``vmap``; it has no derivatives."""
    if sharding is not None:
        raise UnsupportedError("io_callback: sharding is not supported (pass None)",
                               user_frame())
    flat, in_tree = tree_flatten((args, kwargs))
    types, out_tree = declared_types(result_shape_dtypes)
    outs = io_callback_p.bind(*flat, callback=FlatCallback(callback, in_tree),
                              result_types=types, ordered=bool(ordered))
    return out_tree.unflatten(outs)


_add_examples(globals(), """
io_callback:
    >>> from ptojax.experimental import io_callback
    >>> calls = []
    >>> def log(x):
    ...     calls.append(float(x))
    ...     return np.float32(len(calls))
    >>> f = pto.jit(lambda x: io_callback(log, pto.ShapeDtypeStruct((), pnp.float32), x) * 0)
    >>> _ = f(1.0), f(2.0)
    >>> calls
    [1.0, 2.0]
""")
