"""Tiered compilation by hotness: a cold program builds its kernels once it has proven hot.

A tiered ``HostExecutable`` (``backend.py``) runs the numpy executor until its kernels are
built. Looking its library up in the cache after the first call costs nothing the calls
notice, and a warm program loads at once. A *cold* program (its library not in the cache)
instead waits here until its calls have spent ``build_after()`` seconds on the numpy tier —
each numpy-tier call timed with ``perf_counter``, a loop body's steps by the body itself, so
one long ``fori_loop`` epoch makes its body hot within the call — and only then queues its
build (tiling on the worker thread, then the compiler), as JIT VMs compile a method once it
is hot.

Why: the build is not free for the calls that go on meanwhile. Its tiling is Python on the
worker thread, holding the GIL (77 ms of CPU for an MLP train step), and its compiler takes
a core for most of a second (0.74 s of CPU); while it runs on a machine of two cores,
``machine_load.building`` holds numpy's OpenBLAS at one thread (two threads beside a compiler
stall: 112 ms a step instead of 3.5), so each numpy-tier step of the MLP costs its whole
single-threaded sgemm time. The first 30 steps of a fresh MLP train step took 0.19-0.25 s
that way against JAX's 0.32-0.36 s, compile included, and the kernels arrived after those
steps anyway (the build is handed to a builder at exit, ``exit_handoff.py``). Renting (the
numpy tier) against buying (the build): rent until what was paid approaches the price, a
ski-rental rule, which never pays more than twice the better of the two choices made with
hindsight. The price, to the calls, is the build's foreground cost — its GIL time plus the
half of a two-core machine the steps lose while the compiler runs, about 0.4 s for the MLP —
and the rent is counted high (whole numpy-tier seconds, not just what kernels would save), so
``DEFAULT_BUILD_AFTER_S`` builds a little early rather than late. The cost: a program that
runs long gets its kernels that much later (``ready_after`` grows by about the threshold).

``$PTOJAX_BUILD_AFTER`` sets the threshold in seconds; ``0`` builds right after the first
call (the behaviour before). Whatever asks for kernels does not wait for hotness:
``HostExecutable.start_compiling()`` and ``.wait()``, ``backend.wait_for_compiles()``
(``release_all``), and the exit handoff, which hands builds still held here to the detached
builder (``held_owners``) so that the next run finds them cached.
"""
from __future__ import annotations

import itertools
import threading
import weakref

from ptojax.env import env_seconds

ENV = "PTOJAX_BUILD_AFTER"
DEFAULT_BUILD_AFTER_S = 0.5

_held = weakref.WeakValueDictionary()      # order -> ColdBuild, in the order they were held
_order = itertools.count()
_lock = threading.Lock()


def build_after() -> float:
    """Seconds of numpy-tier calls before a cold program's build starts (``$PTOJAX_BUILD_AFTER``,
    >= 0)."""
    return env_seconds(ENV, DEFAULT_BUILD_AFTER_S, zero=True)


class ColdBuild:
    """When one executable's build starts. ``spend(seconds)`` counts its numpy-tier time while
    ``counting``; ``hold()`` (its library is not cached) starts the build if the calls have
    spent ``threshold`` seconds or a build was asked for, else holds it until they have;
    ``release()`` asks for the build now; ``settle()``: no build to hold (a warm load).
    ``start(owner)`` queues the build, called at most once. The owner is held weakly (no
    reference cycle: an executable is freed when its last user lets go, held or not)."""

    def __init__(self, owner, start, threshold: float):
        self._owner = weakref.ref(owner)
        self.threshold = threshold
        self.spent = 0.0
        self.counting = True      # until the build starts or is not needed
        self._start = start
        self._state = "open"      # open (undecided), asked, held, started
        self._key = None

    @property
    def owner(self):
        return self._owner()

    @property
    def held(self) -> bool:
        return self._state == "held"

    def spend(self, seconds: float):
        self.spent += seconds     # (concurrent callers may lose an addition: a few calls)
        if self._state == "held" and self.spent >= self.threshold:
            self.release()

    def hold(self):
        with _lock:
            if self._state in ("held", "started"):
                return
            go = self._state == "asked" or self.spent >= self.threshold
            self._state = "started" if go else "held"
            if not go:
                self._key = next(_order)
                _held[self._key] = self
        if go:
            self._begin()

    def release(self):
        with _lock:
            if self._state == "open":
                self._state = "asked"      # built as soon as it is known cold
            if self._state != "held":
                return
            self._state = "started"
            _held.pop(self._key, None)
        self._begin()

    def settle(self):
        with _lock:
            self._state = "started"
            self.counting = False

    def _begin(self):
        self.counting = False
        owner = self._owner()
        if owner is not None:
            self._start(owner)


def release_all() -> int:
    """Start every held build; how many there were."""
    with _lock:
        held = list(_held.values())
    for build in held:
        build.release()
    return len(held)


def held_owners() -> list:
    """The executables whose build is held, in the order they were held."""
    with _lock:
        owners = [build.owner for build in _held.values()]
    return [owner for owner in owners if owner is not None]
