"""A ``pto.jit`` function called while another transformation traces (``grad``/``vjp``
outside jit, ``vmap``, an outer ``jit``, loop bodies, ``checkpoint``): traced once per
signature, and its cached IR replayed into the enclosing trace, as JAX binds a cached jaxpr.

The signature is the one ``jit`` compiles for (structure, shapes, dtypes, weak types, statics,
Python float positions, x64 mode) plus the bound axis names (a trace may name them in
collectives). The function's Python runs once per signature, as in JAX: its side effects
(a print, a counter) happen when it is traced, not on every outer call. The cache is shared
with the top-level calls of the same function (``Jitted._compile`` compiles a cached trace).

The trace is abstract (values inside are abstract, as under jit); replaying it re-emits its
equations into the enclosing trace with their original source lines, so an eager ``grad``
sees concrete outputs again and differentiates, batches or stages them as it would have the
function's own operations. A trace that captured a tracer of the enclosing trace (the
function closes over one) is replayed once and not cached: that tracer is gone by the next
call; so is one whose types have symbolic dimensions. A trace that raises leaves no entry.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ptojax.eval import axis_env
from ptojax.eval.array import Array
from ptojax.eval.interpreter import eval_ir
from ptojax.eval.leaves import leaf_type
from ptojax.ir.core import ClosedIR
from ptojax.ir.symbolic import has_symbols
from ptojax.trace import Tracer, inlined_jit


class Traced(NamedTuple):
    closed: ClosedIR   # the function's IR (flat dynamic leaves -> flat outputs)
    out_tree: Any


def trace_key(signature) -> tuple:
    """The key of a trace made for ``signature`` under the current bound axes."""
    return signature, axis_env.context()


def cached_trace(traces: dict, signature, trace) -> Traced:
    """The trace for ``signature``: cached, or ``trace()`` (-> Traced), cached unless it
    holds a tracer of an enclosing trace or its types have symbolic dimensions (an outer
    jit's dynamic shapes: equal symbols may carry other bounds)."""
    key = trace_key(signature)
    found = traces.get(key)
    if found is not None:
        return found
    traced = trace()
    if not any(isinstance(c, Tracer) for c in traced.closed.consts) and \
            not any(has_symbols(t.shape) for t in signature.in_types):
        traces[key] = traced
    return traced


def trace_nested(trace_to_ir, jitted_name) -> Traced:
    """``trace_to_ir()`` (-> closed, in_tree, out_tree) with values abstract inside, as
    under jit, though an enclosing trace is concrete."""
    with inlined_jit(jitted_name):
        closed, _, out_tree = trace_to_ir()
    return Traced(closed, out_tree)


def replay(traced: Traced, leaves):
    """The outputs of the cached trace on the call's flat dynamic ``leaves``, its equations
    emitted into the enclosing trace."""
    return traced.out_tree.unflatten(eval_ir(traced.closed, [_operand(x) for x in leaves]))


def _operand(x):
    """A NumPy leaf as the Array jit would trace it as (canonical dtype); others as given
    (a Python scalar takes its traced type in ``eval_ir``)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return Array(np.asarray(x, leaf_type(x).dtype))
    return x
