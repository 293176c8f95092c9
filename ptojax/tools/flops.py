"""Floating-point operation counts of PTO IR, for comparing the cost of transformed programs
(e.g. a gradient against its forward pass) without running them.

Conventions (one "flop" is one scalar arithmetic operation):

- ``dot_general``: ``2 * batch * M * N * K`` (a multiply and an add per term);
- elementwise ops (arithmetic, math, compare, select, convert): one per output element;
- reductions, arg-reductions and cumulative ops: one per input element;
- ``sort``: ``n * ceil(log2(d))`` comparisons for ``n`` elements sorted along length ``d``;
- ``scatter``: one per update element (the combine);
- pure data movement (broadcast, reshape, transpose, slice, pad, concatenate, rev, gather,
  dynamic slices, iota, copy, stop_gradient): zero;
- equations carrying sub-IRs: their bodies' counts, recursively — a ``scan`` body ``length``
  times, the costliest branch of a ``cond``, a ``while`` loop's predicate and body once (its
  trip count is not known from the IR), any other body (``checkpoint``, custom derivative
  calls, ...) once.

A primitive not covered here counts one flop per output element; ``flop_rules`` takes rows
``name -> fn(eqn) -> int`` for primitives whose cost differs.
"""
from __future__ import annotations

import math
from collections import Counter

from ptojax.ir.core import ClosedIR, sub_irs

MOVEMENT = frozenset({
    "broadcast_in_dim", "reshape", "transpose", "squeeze", "expand_dims", "rev", "slice",
    "concatenate", "pad", "iota", "gather", "dynamic_slice", "dynamic_update_slice", "copy",
    "stop_gradient",
})


def _dot_general(eqn) -> int:
    lhs, rhs = (a.type for a in eqn.inputs)
    (_, rc), (_, rb) = eqn.params["dimension_numbers"]
    rhs_free = math.prod(d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb)
    return 2 * lhs.size * rhs_free


def _input_size(eqn) -> int:
    return eqn.inputs[0].type.size


def _sort(eqn) -> int:
    x = eqn.inputs[0].type
    length = x.shape[eqn.params["dimension"]]
    return x.size * math.ceil(math.log2(length)) if length > 1 else 0


def _scatter(eqn) -> int:
    return eqn.inputs[2].type.size


flop_rules: dict = {
    "dot_general": _dot_general,
    "sort": _sort,
    "scatter": _scatter,
    **{name: _input_size for name in (
        "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
        "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")},
}


def _sub_ir_flops(eqn, bodies) -> Counter:
    name = eqn.prim.name
    if name == "cond":
        return max((flops_by_primitive(b) for b in bodies), key=lambda c: sum(c.values()))
    counts: Counter = Counter()
    for body in bodies:
        counts.update(flops_by_primitive(body))
    if name == "scan":
        counts = Counter({k: v * eqn.params["length"] for k, v in counts.items()})
    return counts


def flops_by_primitive(ir) -> Counter:
    """Flops of ``ir`` (an IR or ClosedIR) per primitive name, sub-IRs included."""
    ir = ir.ir if isinstance(ir, ClosedIR) else ir
    counts: Counter = Counter()
    for eqn in ir.eqns:
        bodies = sub_irs(eqn.params)
        if bodies:
            counts.update(_sub_ir_flops(eqn, bodies))
            continue
        name = eqn.prim.name
        if name in MOVEMENT:
            continue
        rule = flop_rules.get(name)
        counts[name] += rule(eqn) if rule is not None else sum(v.type.size
                                                                for v in eqn.outputs)
    return counts


def count_flops(ir) -> int:
    """Total flops of ``ir`` (an IR or ClosedIR)."""
    return sum(flops_by_primitive(ir).values())
