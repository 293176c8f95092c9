"""Heavy independent equations of a host program paired, to run at once on two cores.

A train step's backward pass computes, per dense layer, the weight gradient ``x.T @ g`` and
the input gradient ``g @ w.T`` from the same ``g``; neither reads the other. Run one after
the other, each product of a small batch takes one core (OpenBLAS splits a 32-row product
poorly), and the step's wall time is the sum of them all. ``paired(closed)`` walks the
program in order and, for each heavy equation, looks a few equations ahead for another heavy
one whose operands are all ready already; it moves that one up to run right after it and
marks the two a pair, which the executor runs at once (``eval/concurrent.py``).

Heavy means an estimated ``MIN_SECONDS`` or more on one core (``_seconds``): a matrix
product by its flops, a host kernel by the bytes it reads and writes (momentum updates and
other elementwise kernels are memory-bound). Lighter ones gain less than the handoff to the
helper thread costs (~20-40 us there and back). Two kernels never pair: a kernel library
keeps one error state (``pto_host_launch.h``), which two kernels running at once would share.
Equations with effects or runtime sizes never move or pair. Moving an equation earlier only
makes its operands' last reads earlier, so no buffer lives longer than before except the
moved equation's results.
"""
from __future__ import annotations

from ptojax.ir.core import IR, ClosedIR, Var
from ptojax.ops.linalg import dot_general_p
from ptojax.tile.kernel import tile_kernel_p

MIN_SECONDS = 50e-6
GEMM_FLOPS = 60e9            # float32 products on one core (OpenBLAS, AVX-512, measured ~50-75)
KERNEL_BYTES_PER_S = 20e9    # a memory-bound host kernel's traffic on one core
LOOKAHEAD = 8                # equations searched for a partner


def paired(closed: ClosedIR):
    """``(closed reordered, the equations that start a pair)``: each pair's second equation
    directly follows its first. ``closed`` itself when nothing pairs."""
    eqns = closed.ir.eqns
    heavy = [_seconds(e) >= MIN_SECONDS for e in eqns]
    if sum(heavy) < 2:
        return closed, frozenset()
    ready = set(closed.ir.invars) | set(closed.ir.constvars)
    done = [False] * len(eqns)
    order, starts = [], set()
    for i, e in enumerate(eqns):
        if done[i]:
            continue
        done[i] = True
        order.append(e)
        partner = _partner(eqns, i, heavy, done, ready) if heavy[i] else None
        ready.update(e.outputs)
        if partner is not None:
            done[partner] = True
            order.append(eqns[partner])
            ready.update(eqns[partner].outputs)
            starts.add(e)
    if not starts:
        return closed, frozenset()
    ir = closed.ir
    return ClosedIR(IR(ir.constvars, ir.invars, order, ir.outvars), closed.consts), \
        frozenset(starts)


def _partner(eqns, i, heavy, done, ready):
    """The first heavy equation of the next ``LOOKAHEAD`` not yet run whose operands are all
    ``ready`` before equation ``i`` runs, and which may run beside it; else None."""
    first = eqns[i]
    for j in range(i + 1, min(len(eqns), i + 1 + LOOKAHEAD)):
        e = eqns[j]
        if done[j] or not heavy[j]:
            continue
        if e.prim is tile_kernel_p and first.prim is tile_kernel_p:
            continue
        if all(type(a) is not Var or a in ready for a in e.inputs):
            return j
    return None


def _seconds(eqn) -> float:
    """One core's estimated seconds for ``eqn``; 0 for equations that never pair (not a
    product or a kernel, effects, runtime sizes)."""
    if eqn.prim.effectful or not eqn.outputs:
        return 0.0
    types = [a.type for a in (*eqn.inputs, *eqn.outputs) if type(a) is Var]
    if any(type(t.size) is not int for t in types):
        return 0.0
    if eqn.prim is dot_general_p:
        (lc, _), _ = eqn.params["dimension_numbers"]
        lhs = eqn.inputs[0].type.shape
        contracted = 1
        for d in lc:
            contracted *= lhs[d]
        return 2.0 * eqn.outputs[0].type.size * contracted / GEMM_FLOPS
    if eqn.prim is tile_kernel_p:
        return sum(t.size * t.dtype.itemsize for t in types) / KERNEL_BYTES_PER_S
    return 0.0
