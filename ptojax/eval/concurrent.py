"""Two independent operations at once: one on the calling thread, one on a helper thread.

A compiled program's heavy operations — numpy's BLAS products and the host kernels — release
the GIL while they run, so two that do not depend on each other (a dense layer's weight
gradient ``x.T @ g`` and input gradient ``g @ w.T``; a momentum update and the next layer's
product) can take the machine's two cores at once, as XLA's CPU runtime runs independent
thunks on its thread pool. ``run_pair(f, f_args, g, g_args)`` runs ``g`` on this process's
one helper thread while the caller runs ``f``, then waits for ``g``. While they run, BLAS and
the kernels use one thread each (``machine_load.one_thread_each``): two operations on two
threads, not four threads on two cores. Each operation computes what it computes alone on
one thread, so results do not depend on the pairing (OpenBLAS on one thread is what a busy
machine runs today, too).

The pair runs one after the other on the calling thread instead when:
- the machine is busy with other work (``machine_busy``): the second core is taken, and a
  helper thread would wait for it while the caller waits for the helper;
- the helper is running another pair (another user thread's program): no queueing;
- the process has a single CPU.

It returns ``f``'s result and a function returning ``g``'s (or raising its error), which the
generated executor calls on ``g``'s own line, so an error names ``g``'s source line.
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np

from ptojax.eval.machine_load import machine_busy, one_thread_each


class _Helper:
    """The helper thread and its handoff: ``go`` released when a task is set, ``done`` when
    it has finished; ``taken`` held by the pair using it."""

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
            fn, args = self.task
            self.task = None
            try:
                self.outcome = _returning(fn(*args))
            except BaseException as e:   # re-raised on the caller's thread
                self.outcome = _raising(e)
            self.done.release()

    def start(self, fn, args):
        self.task = (fn, args)
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


def _outcome(g, g_args):
    """``g(*g_args)`` run now, as a function returning its result or raising its error."""
    try:
        return _returning(g(*g_args))
    except Exception as e:
        return _raising(e)


def run_pair(f, f_args, g, g_args):
    """``(f(*f_args), outcome)``, ``outcome()`` returning ``g(*g_args)`` or raising its error;
    ``g`` runs on the helper thread meanwhile when that can help (see the module
    docstring), else after ``f`` on this thread, when ``outcome`` is called."""
    if not enabled or machine_busy():
        return f(*f_args), lambda: g(*g_args)
    result = _at_once(f, f_args, g, g_args)
    return result if result is not None else (f(*f_args), lambda: g(*g_args))


def _at_once(f, f_args, g, g_args):
    """``run_pair``'s result with ``g`` on the helper thread, or None when the helper is
    taken."""
    helper = _helper()
    if not helper.taken.acquire(blocking=False):
        return None
    try:
        with one_thread_each():
            helper.start(g, g_args)
            try:
                result = f(*f_args)
            finally:
                outcome = helper.finish()
    finally:
        helper.taken.release()
    return result, outcome


class Pair:
    """``run_pair`` at one place of a program, which keeps doing what measured faster there:
    its first ``TRIALS`` runs each way while the machine is not busy alternate between at
    once and one after the other (as without pairs: BLAS and kernels on their own threads),
    then the faster by best wall time stays. On a machine whose two CPUs share one core's
    floating-point units, or where BLAS's own threads already take both cores for this
    pair, running at once does not pay, and then does not happen. ``choice`` is None while
    measuring, else whether it runs at once."""

    TRIALS = 8
    FIRST_CHOICE = None        # tests may start pairs decided

    def __init__(self):
        self.times = ([], [])      # wall seconds: one after the other, at once
        self.choice = self.FIRST_CHOICE

    def __call__(self, f, f_args, g, g_args):
        choice = self.choice
        if choice is False or not enabled or machine_busy():
            return f(*f_args), lambda: g(*g_args)
        if choice:
            return run_pair(f, f_args, g, g_args)
        at_once = len(self.times[1]) < len(self.times[0])
        start = time.perf_counter()
        result = _at_once(f, f_args, g, g_args) if at_once else None
        if result is None:
            at_once = False
            result = f(*f_args), _outcome(g, g_args)
        self.times[at_once].append(time.perf_counter() - start)
        if all(len(t) >= self.TRIALS for t in self.times):
            self.choice = min(self.times[1]) < min(self.times[0])
        return result
