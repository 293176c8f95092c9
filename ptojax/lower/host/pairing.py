"""A host program's equations scheduled on two threads: heavy ones with others beside them.

A train step's backward pass computes, per dense layer, the weight gradient ``x.T @ g`` and
the input gradient ``g @ w.T`` from the same ``g``; only the input gradient leads on to the
next layer. The weight gradient, the momentum update that reads it, and the small updates of
the biases lead nowhere but to the step's results. Run one after the other, the step's wall
time is the sum of them all; XLA's CPU runtime runs such independent thunks on its pool.

``paired(closed)`` is a list schedule over two threads. The *main* thread runs, of the
equations whose operands are ready, the one with the longest chain of estimated seconds
still behind it (``_tails``: the critical path first; ties in program order). Beside each
heavy equation it starts, on the helper thread, a *group*: ready equations, heaviest first,
as many as fit in the time the main thread has work that needs none of them (a dry run of
the schedule, ``_main_seconds``; times ``GROUP_SLACK``; each equation costs at least
``CALL_SECONDS``, its launch). The main thread then runs on (``_window``: its most urgent
ready equations, none of the group's users) while the group's estimated time is not yet
covered, and joins the group where its equations come in the returned order: after that
window. The executor starts them on the main equation's line and takes each one's result
on its own line (``eval/concurrent.py``, which runs them one after the other instead on a
busy machine, and where running at once measured slower). On the VAE train step of
``benchmarks/vae.py``: momentum updates and weight gradients run beside the input
gradients and the small kernels of the latent layer.

Heavy means an estimated ``MIN_SECONDS`` or more on one core (``_seconds``): a matrix
product (``dot_general``, or ``dot_accumulate`` into a momentum's velocity) by its flops, a
host kernel by the bytes it reads and writes (momentum updates and
other elementwise kernels are memory-bound). A lighter main equation gains less than the
handoff to the helper thread costs (~20-40 us there and back), and so does a lighter group.
Two kernels may run at once: each launch keeps its own error state (``pto_host_launch.h``).
Only products and kernels run in groups or start them; equations with effects or runtime
sizes keep their place (nothing moves across them) and never pair. An equation moves only
after its operands exist; moving one earlier makes its operands' last reads earlier.
"""
from __future__ import annotations

import heapq

from ptojax.ir.core import IR, ClosedIR, Var
from ptojax.ir.symbolic import has_symbols
from ptojax.ops.dot_accumulate import dot_accumulate_p
from ptojax.ops.linalg import dot_general_p
from ptojax.tile.kernel import tile_kernel_p

MIN_SECONDS = 50e-6
GEMM_FLOPS = 70e9            # float32 products on one core (OpenBLAS, AVX-512, measured ~65-75)
KERNEL_BYTES_PER_S = 32e9    # a memory-bound host kernel's traffic on one core (measured 30-35)
CALL_SECONDS = 12e-6         # a launch's own cost in a program: a small equation's 9-18 us
GROUP_SLACK = 1.1            # a group may take this much longer than the main thread's work
LOOKAHEAD = 256              # equations a dry run of the main thread looks at, at most


def paired(closed: ClosedIR):
    """``(closed reordered, {main equation: (m, k)})``: the ``k`` equations after the ``m``
    after a main one run beside it and those ``m`` (``Executable``'s ``pairs``); ``closed``
    itself and ``{}`` when nothing runs beside anything."""
    eqns = closed.ir.eqns
    seconds = [_seconds(e) for e in eqns]
    if sum(s >= MIN_SECONDS for s in seconds) < 2:
        return closed, {}
    order, groups = _schedule(eqns, _dependencies(closed.ir), seconds)
    if not groups:
        return closed, {}
    ir = closed.ir
    return ClosedIR(IR(ir.constvars, ir.invars, [eqns[i] for i in order], ir.outvars),
                    closed.consts), {eqns[i]: k for i, k in groups.items()}


def _schedule(eqns, deps, seconds):
    """``(order, {main index: (m, k)})``: the list schedule of the module docstring; each
    group's ``k`` equations come after the ``m`` the main thread runs while they run."""
    users = [[] for _ in eqns]
    waiting = [len(d) for d in deps]
    for i, d in enumerate(deps):
        for j in d:
            users[j].append(i)
    tail = _tails(users, seconds)
    ready = [(-tail[i], i) for i in range(len(eqns)) if not waiting[i]]
    heapq.heapify(ready)
    placed = [False] * len(eqns)
    order, groups = [], {}

    def place(j):
        placed[j] = True
        order.append(j)

    def release(j):
        for u in users[j]:
            waiting[u] -= 1
            if not waiting[u]:
                heapq.heappush(ready, (-tail[u], u))
    while ready:
        _, i = heapq.heappop(ready)
        if placed[i]:          # ran in a group already
            continue
        group = _group(i, ready, placed, seconds, eqns, users, waiting, tail) \
            if _runs_beside(eqns[i]) else []
        for j in group:
            placed[j] = True   # (ordered at the join)
        place(i)
        release(i)
        if not group:
            continue
        window = _window(sum(_cost(seconds[j]) for j in group) - _cost(seconds[i]),
                         ready, placed, seconds, eqns, place, release)
        for j in group:
            order.append(j)
            release(j)
        groups[i] = (len(window), len(group))
    return order, groups


def _window(time, ready, placed, seconds, eqns, place, release) -> list:
    """The main thread's equations while a group runs ``time`` longer than its main one:
    the most urgent ready ones, while at least half of the next fits in the time left; none
    that keeps its place (``_keeps_place``)."""
    window = []
    while time > 0 and ready:
        _, j = ready[0]
        if placed[j]:
            heapq.heappop(ready)
            continue
        if _keeps_place(eqns[j]) or time < _cost(seconds[j]) / 2:   # it would run long after
            break
        heapq.heappop(ready)
        place(j)
        release(j)
        window.append(j)
        time -= _cost(seconds[j])
    return window


def _cost(seconds: float) -> float:
    """An equation's estimated seconds in a program: at least its launch."""
    return max(seconds, CALL_SECONDS)


def _group(i, ready, placed, seconds, eqns, users, waiting, tail) -> list:
    """The equations to run beside heavy equation ``i`` and the main thread's work after it
    that needs none of them: among the ``ready`` ones, heaviest first, those that fit in that
    time (``_main_seconds``); [] when ``i`` is light or the group would be."""
    if seconds[i] < MIN_SECONDS:
        return []
    candidates = sorted((j for _, j in ready if not placed[j] and _runs_beside(eqns[j])),
                        key=lambda j: (-seconds[j], j))
    if not candidates:
        return []
    most = sum(_cost(seconds[j]) for j in candidates)
    budget = GROUP_SLACK * _main_seconds(i, most, set(candidates), ready, placed, seconds,
                                         eqns, users, waiting, tail)
    group, total = [], 0.0
    for j in candidates:
        cost = _cost(seconds[j])
        if total + cost <= budget:
            group.append(j)
            total += cost
    return group if total >= MIN_SECONDS else []


def _main_seconds(i, most, aside, ready, placed, seconds, eqns, users, waiting, tail) -> float:
    """The estimated seconds of ``i`` and of the equations the main thread could run after it
    (as ``_window`` would), none of them in ``aside``, up to ``most`` seconds and
    ``LOOKAHEAD`` equations."""
    ready = [(t, j) for t, j in ready if not placed[j] and j not in aside and j != i]
    heapq.heapify(ready)
    waits = {}

    def release(j):
        for u in users[j]:
            waits[u] = waits.get(u, waiting[u]) - 1
            if not waits[u]:
                heapq.heappush(ready, (-tail[u], u))
    release(i)
    time = _cost(seconds[i])
    for _ in range(LOOKAHEAD):
        if not ready or time >= most:
            break
        _, j = heapq.heappop(ready)
        if _keeps_place(eqns[j]):
            break
        release(j)
        time += _cost(seconds[j])
    return min(time, most)


def _dependencies(ir) -> list:
    """Per equation, the earlier equations it must follow: those making its operands, and
    around an equation that keeps its place (``_keeps_place``) all before it / it."""
    made = {}
    deps = []
    barrier, since = None, []
    for i, e in enumerate(ir.eqns):
        d = {made[a] for a in e.inputs if type(a) is Var and a in made}
        if barrier is not None:
            d.add(barrier)
        if _keeps_place(e):
            d.update(since)
            barrier, since = i, []
        else:
            since.append(i)
        deps.append(d)
        for o in e.outputs:
            made[o] = i
    return deps


def _tails(users, seconds) -> list:
    """Per equation, the estimated seconds of the longest chain from it to the end."""
    tail = [0.0] * len(seconds)
    for i in reversed(range(len(seconds))):
        tail[i] = seconds[i] + max((tail[u] for u in users[i]), default=0.0)
    return tail


_PRODUCTS = {dot_general_p: 0, dot_accumulate_p: 1}   # -> the position of the left operand
_CALLS = (*_PRODUCTS, tile_kernel_p)


def _keeps_place(eqn) -> bool:
    return eqn.prim.effectful or has_symbols(tuple(eqn.params.values()))


def _runs_beside(eqn) -> bool:
    """Whether ``eqn`` may start a group or run in one: a product or a kernel, a call returning
    fresh buffers of static sizes, with no effect."""
    return eqn.prim in _CALLS and bool(eqn.outputs) \
        and not _keeps_place(eqn) and all(type(t.size) is int for t in _types(eqn))


def _types(eqn):
    return [a.type for a in (*eqn.inputs, *eqn.outputs) if type(a) is Var]


def _seconds(eqn) -> float:
    """One core's estimated seconds for ``eqn``; 0 for equations that never pair (not a
    product or a kernel, effects, runtime sizes)."""
    if not _runs_beside(eqn):
        return 0.0
    if eqn.prim in _PRODUCTS:
        (lc, _), _ = eqn.params["dimension_numbers"]
        lhs = eqn.inputs[_PRODUCTS[eqn.prim]].type.shape
        contracted = 1
        for d in lc:
            contracted *= lhs[d]
        return 2.0 * eqn.outputs[0].type.size * contracted / GEMM_FLOPS
    return sum(t.size * t.dtype.itemsize for t in _types(eqn)) / KERNEL_BYTES_PER_S
