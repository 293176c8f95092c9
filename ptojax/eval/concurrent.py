"""Independent operations at once: one on the calling thread, a group on a helper thread.

A compiled program's heavy operations — numpy's BLAS products and the host kernels — release
the GIL while they run, so operations that do not depend on each other (a dense layer's
weight gradient ``x.T @ g`` and input gradient ``g @ w.T``; a momentum update and the next
layer's product) can take the machine's two cores at once, as XLA's CPU runtime runs
independent thunks on its thread pool. ``run_beside(f, f_args, tasks)`` runs the tasks
``((g, g_args), ...)`` one after another on this process's one helper thread while the caller
runs ``f``, then waits for them. While they run, BLAS and the kernels use one thread each
(``machine_load.one_thread_each``): two operations on two threads, not four threads on two
cores. Each operation computes what it computes alone on one thread, so results do not
depend on the grouping (OpenBLAS on one thread is what a busy machine runs today, too).

The tasks run one after the other on the calling thread instead, after ``f``, when:
- the machine is busy with other work (``machine_busy``): the second core is taken, and a
  helper thread would wait for it while the caller waits for the helper;
- the helper is running another group (another user thread's program): no queueing;
- the process has a single CPU.

It returns ``f``'s result and the ``Group``, whose outcome for each task the generated
executor takes on the task's own line, so an error names the task's source line; after an
error elsewhere, the executor joins what it left started (``join_started``).
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np

from ptojax.eval.machine_load import machine_busy, one_thread_each


class _Helper:
    """The helper thread and its handoff: ``go`` released when its tasks are set, ``done``
    when it has run them all; ``taken`` held by the caller using it."""

    def __init__(self):
        self.taken = threading.Lock()
        self.go = threading.Lock()
        self.go.acquire()
        self.done = threading.Lock()
        self.done.acquire()
        self.task = None
        self.outcome = None
        threading.Thread(target=self._serve, name="ptojax-pair", daemon=True).start()

    def _serve(self):
        np.seterr(all="ignore")      # as the executor's own thread (eval/ieee.py)
        while True:
            self.go.acquire()
            tasks, self.task = self.task, None
            self.outcome = [_outcome(g, g_args, BaseException) for g, g_args in tasks]
            self.done.release()

    def start(self, tasks):
        self.task = tasks
        self.go.release()

    def finish(self):
        self.done.acquire()
        outcome, self.outcome = self.outcome, None
        return outcome


_state = {"helper": None}
_creating = threading.Lock()
enabled = (os.cpu_count() or 1) > 1     # tests and A/B measurements may switch it


def _helper() -> _Helper:
    helper = _state["helper"]
    if helper is None:
        with _creating:
            helper = _state["helper"]
            if helper is None:
                helper = _state["helper"] = _Helper()
    return helper


def _forget_helper():
    """In a forked child the helper thread does not exist: make a new one when needed."""
    global _creating
    _state["helper"] = None
    _creating = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helper)


def _returning(value):
    return lambda: value


def _raising(error):
    def reraise():
        raise error
    return reraise


def _outcome(g, g_args, caught=Exception):
    """``g(*g_args)`` run now, as a function returning its result or raising its error
    (errors of the ``caught`` class: the helper thread re-raises any on the caller's)."""
    try:
        return _returning(g(*g_args))
    except caught as e:
        return _raising(e)


class Group:
    """Tasks started beside a main operation. ``outcome(k)`` is task ``k``'s result (or
    raises its error): on the helper thread, the first call waits for all of them (``join``);
    else task ``k`` runs on this thread then (``eager``: all of them at the first call, their
    errors kept for their own calls). ``on_join(at_once)`` is told when they are done.
    Between the start and the join the caller may run other operations: BLAS and the kernels
    stay on one thread each until the join (``one_thread_each``)."""

    __slots__ = ("tasks", "helper", "pinning", "outcomes", "eager", "on_join")

    def __init__(self, tasks, helper=None, pinning=None, eager=False, on_join=None):
        self.tasks, self.helper, self.pinning = tasks, helper, pinning
        self.outcomes, self.eager, self.on_join = None, eager, on_join

    def outcome(self, k):
        if self.outcomes is None:
            if self.helper is not None:
                self.join()
            elif self.eager:
                self.outcomes = [_outcome(g, g_args) for g, g_args in self.tasks]
                self._joined(False)
            else:
                g, g_args = self.tasks[k]
                return g(*g_args)
        return self.outcomes[k]()

    def join(self):
        """Wait for the helper thread's tasks (nothing when they do not run there)."""
        helper, self.helper = self.helper, None
        if helper is None:
            return
        try:
            self.outcomes = helper.finish()
        finally:
            helper.taken.release()
            self.pinning.__exit__(None, None, None)
            _started().remove(self)
        self._joined(True)

    def _joined(self, at_once):
        if self.on_join is not None:
            self.on_join(at_once)


_local = threading.local()


def _started() -> list:
    """The groups this thread started on the helper thread and has not joined yet."""
    groups = getattr(_local, "groups", None)
    if groups is None:
        groups = _local.groups = []
    return groups


def join_started():
    """Join every group this thread started and has not joined: after an error left them
    behind (the executor's lines that would have joined them did not run)."""
    for group in list(_started()):
        group.join()


def run_beside(f, f_args, tasks):
    """``(f(*f_args), group)``: the ``tasks`` ``((g, g_args), ...)`` started beside ``f``,
    ``group.outcome(k)`` returning task ``k``'s result or raising its error; they run on the
    helper thread when that can help (see the module docstring), else on this thread, each
    when its outcome is asked for."""
    if not enabled or machine_busy():
        return f(*f_args), Group(tasks)
    started = _at_once(f, f_args, tasks)
    return started if started is not None else (f(*f_args), Group(tasks))


def _at_once(f, f_args, tasks, on_join=None):
    """``run_beside``'s result with the tasks on the helper thread, or None when the helper
    is taken."""
    helper = _helper()
    if not helper.taken.acquire(blocking=False):
        return None
    pinning = one_thread_each()
    pinning.__enter__()
    group = Group(tasks, helper, pinning, on_join=on_join)
    _started().append(group)
    helper.start(tasks)
    try:
        result = f(*f_args)
    except BaseException:
        group.join()
        raise
    return result, group


class Pair:
    """``run_beside`` at one place of a program, which keeps doing what measured faster
    there: its first ``TRIALS`` runs each way while the machine is not busy alternate between
    at once and one after the other (as without pairs: BLAS and kernels on their own
    threads), timed from the start to the join, then the faster by best wall time stays. On
    a machine whose two CPUs share one core's floating-point units, or where BLAS's own
    threads already take both cores for this place, running at once does not pay, and then
    does not happen. ``choice`` is None while measuring, else whether it runs at once."""

    TRIALS = 8
    FIRST_CHOICE = None        # tests may start pairs decided

    def __init__(self):
        self.times = ([], [])      # wall seconds: one after the other, at once
        self.choice = self.FIRST_CHOICE

    def __call__(self, f, f_args, tasks):
        choice = self.choice
        if choice is False or not enabled or machine_busy():
            return f(*f_args), Group(tasks)
        if choice:
            return run_beside(f, f_args, tasks)
        start = time.perf_counter()

        def timed(at_once):
            self.times[at_once].append(time.perf_counter() - start)
            if all(len(t) >= self.TRIALS for t in self.times):
                self.choice = min(self.times[1]) < min(self.times[0])
        if len(self.times[1]) < len(self.times[0]):
            started = _at_once(f, f_args, tasks, timed)
            if started is not None:
                return started
        return f(*f_args), Group(tasks, eager=True, on_join=timed)
