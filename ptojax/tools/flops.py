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

Each count is the primitive's ``cost`` fact, defined beside it: ``cost(eqn) -> flops``, or for
a primitive with sub-IRs ``cost(eqn, [per-primitive counts of each body]) -> counts``.
"""
from __future__ import annotations

from collections import Counter

from ptojax.ir.core import ClosedIR, sub_irs


def flops_by_primitive(ir) -> Counter:
    """Flops of ``ir`` (an IR or ClosedIR) per primitive name, sub-IRs included."""
    ir = ir.ir if isinstance(ir, ClosedIR) else ir
    counts: Counter = Counter()
    for eqn in ir.eqns:
        cost = eqn.prim.rule("cost", "counting the flops", eqn.source)
        bodies = sub_irs(eqn.params)
        if bodies:
            counts.update(cost(eqn, [flops_by_primitive(b) for b in bodies]))
        else:
            flops = cost(eqn)
            if flops:
                counts[eqn.prim.name] += flops
    return counts


def count_flops(ir) -> int:
    """Total flops of ``ir`` (an IR or ClosedIR)."""
    return sum(flops_by_primitive(ir).values())
