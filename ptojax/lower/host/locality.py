"""Equations reordered so that a value's last reader runs while the value is still in cache.

A traced train step computes every gradient first and updates the parameters at the end, as
the user wrote it: by the time a momentum update ``v = 0.9 v + g; p = p - lr v`` of a 784x512
weight runs, its gradient (written by its matmul long before) and the weight (last read by the
backward pass) have left the core's L2 cache, and the update streams all three from L3 or
memory. ``for_locality`` moves each *closing* equation — one that is the last reader of every
array it reads — to just after the equation that makes it ready: right after the weight's
gradient and its last other use. Its operands are then still in cache, and it is still their
last use, so the executor writes its results over them in place (``eval/executable.py``).
Only equations that free at least as many intermediate elements as they allocate move (the
program's results do not count: they are alive at its end anyway, so an equation that is
the last to read a result — a parameter update reading the new velocity the step returns —
moves too, freeing nothing), so the live intermediates never grow; equations with effects
keep their order, and no equation moves before its operands exist. The equation readied last
runs first, so an update runs right after its own gradient, not after the next layer's. The cpu backend orders its compiled programs so
(``program.py``); measured on a VAE epoch (busy 2-core machine, CPU time): the four large
momentum-update kernels 1.24 -> 1.18 ms per step (784x512 weight's 0.24 -> 0.19 ms).
"""
from __future__ import annotations

from ptojax.ir.core import IR, ClosedIR, Var


def for_locality(closed: ClosedIR) -> ClosedIR:
    """``closed`` with its closing equations moved as early as they can run (see the module
    docstring); ``closed`` itself when the order does not change."""
    ir = closed.ir
    order = _order(ir)
    if order == list(range(len(ir.eqns))):
        return closed
    return ClosedIR(IR(ir.constvars, ir.invars, [ir.eqns[i] for i in order], ir.outvars),
                    closed.consts)


def _order(ir) -> list:
    eqns = ir.eqns
    readers: dict = {}       # var -> indices of the equations reading it
    for i, e in enumerate(eqns):
        for a in _vars(e.inputs):
            readers.setdefault(a, []).append(i)
    pending = {v: len(set(r)) for v, r in readers.items()}   # unscheduled readers per var
    results = set(_vars(ir.outvars))   # alive at the end whatever reads them: never freed
    made = {v for e in eqns for v in e.outputs}
    ready = set(_vars(ir.invars)) | set(ir.constvars)
    done = [False] * len(eqns)
    order, candidates, first = [], [], 0

    def closes(i) -> bool:
        e = eqns[i]
        ins = set(_vars(e.inputs))
        if not ins or e.prim.effectful or not ins <= ready \
                or any(pending[a] != 1 for a in ins):
            return False
        allocated = _elements(v for v in e.outputs if v not in results)
        freed = _elements(a for a in ins if a in made and a not in results)
        return allocated is not None and freed is not None and allocated <= freed

    def schedule(i):
        done[i] = True
        order.append(i)
        e = eqns[i]
        opened = []              # vars whose readers may close now: the last one is left
        for a in set(_vars(e.inputs)):
            pending[a] -= 1
            if pending[a] == 1:
                opened.append(a)
        ready.update(e.outputs)
        for v in (*opened, *e.outputs):
            for r in readers.get(v, ()):
                if not done[r] and r > first and closes(r):
                    candidates.append(r)

    while first < len(eqns):
        while candidates:   # the latest made ready first: right after what readied it
            i = candidates.pop()
            if not done[i]:
                schedule(i)
        if not done[first]:
            schedule(first)          # in program order: every earlier equation has run
        while first < len(eqns) and done[first]:
            first += 1
    return order


def _elements(variables):
    """The elements of ``variables``' arrays, or None when a size is symbolic (such an
    equation does not move)."""
    total = 0
    for v in variables:
        size = v.type.size
        if type(size) is not int:
            return None
        total += size
    return total


def _vars(atoms):
    return [a for a in atoms if type(a) is Var]
