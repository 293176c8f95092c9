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
hindsight. The price, to the calls, is the build's foreground cost — its GIL time plus what
the steps lose while it runs (~1 s from a cold start, at 5.2-5.9 ms a step on one BLAS thread
instead of ~3.5 on two): 0.4-0.6 s for the MLP —
and the rent is counted high (whole numpy-tier seconds, not just what kernels would save), so
``DEFAULT_BUILD_AFTER_S`` builds a little early rather than late. The cost: a program that
runs long gets its kernels that much later (``ready_after`` grows by about the threshold).

``$PTOJAX_BUILD_AFTER`` (``pto.config.ptojax_build_after``) sets the threshold in seconds;
``0`` builds right after the first call (the behaviour before). Whatever asks for kernels does not wait for hotness:
``HostExecutable.start_compiling()`` and ``.wait()``, ``backend.wait_for_compiles()``
(``release_all``), and the exit handoff, which hands builds still held here to the detached
builder (``held_owners``) so that the next run finds them cached.
"""
from __future__ import annotations

import threading

from ptojax.env import env_seconds

ENV = "PTOJAX_BUILD_AFTER"
DEFAULT_BUILD_AFTER_S = 0.5

_held: dict = {}       # program fingerprint -> [ColdBuild held], programs in the order held
_rents: dict = {}      # program fingerprint -> _Rent: what all its executables spent
_lock = threading.Lock()


def build_after() -> float:
    """Seconds of numpy-tier calls before a cold program's build starts (``$PTOJAX_BUILD_AFTER``,
    >= 0)."""
    return env_seconds(ENV, DEFAULT_BUILD_AFTER_S, zero=True)


class _Rent:
    __slots__ = ("spent",)

    def __init__(self):
        self.spent = 0.0


class ColdBuild:
    """When one executable's build starts. ``spend(seconds)`` counts its numpy-tier time while
    ``counting``; ``hold(program)`` (its library is not cached; ``program`` its fingerprint)
    starts the build if the program's calls have spent ``threshold`` seconds or a build was
    asked for, else holds it until they have; ``release()`` asks for the build now;
    ``settle()``: no build to hold (a warm load). ``start(owner)`` queues the build, called at
    most once.

    Once held, the executable's time is its program's: every executable of one program (a
    function jitted anew, or retraced, for each call) adds to one rent, and when the program
    turns hot all of its held builds start (after the first, each finds the library built).
    A held build keeps its executable alive, as a queued worker job does, so that a program
    whose ``jit`` object is gone (a script's ``main`` returned) is still handed off at exit."""

    def __init__(self, owner, start, threshold: float):
        self.owner = owner
        self.threshold = threshold
        self.rent = _Rent()       # this executable's until held, then its program's
        self.counting = True      # until the build starts or is not needed
        self._start = start
        self._state = "open"      # open (undecided), asked, held, started
        self._program = None

    @property
    def held(self) -> bool:
        return self._state == "held"

    @property
    def spent(self) -> float:
        return self.rent.spent

    def spend(self, seconds: float):
        rent = self.rent
        rent.spent += seconds     # (concurrent callers may lose an addition: a few calls)
        if self._state == "held" and rent.spent >= self.threshold:
            _release_program(self._program)

    def hold(self, program: str):
        with _lock:
            if self._state in ("held", "started"):
                return
            shared = _rents.setdefault(program, _Rent())
            shared.spent += self.rent.spent
            self.rent = shared
            go = self._state == "asked" or shared.spent >= self.threshold
            self._state = "started" if go else "held"
            if not go:
                self._program = program
                _held.setdefault(program, []).append(self)
        if go:
            self._begin()
            if shared.spent >= self.threshold:      # hot now: its other executables too
                _release_program(program)

    def release(self):
        with _lock:
            if self._state == "open":
                self._state = "asked"      # built as soon as it is known cold
            if self._state != "held":
                return
            self._state = "started"
            builds = _held[self._program]
            builds.remove(self)
            if not builds:
                del _held[self._program]
        self._begin()

    def settle(self):
        with _lock:
            self._state = "started"
            self.counting = False

    def _begin(self):
        self.counting = False
        self._start(self.owner)


def _release_program(program: str):
    with _lock:
        builds = list(_held.get(program, ()))
    for build in builds:
        build.release()


def release_all() -> int:
    """Start every held build; how many there were."""
    with _lock:
        held = [build for builds in _held.values() for build in builds]
    for build in held:
        build.release()
    return len(held)


def forget_held() -> None:
    """Drop every held build: none of them starts, and ``wait_for_compiles`` no longer waits
    for them (the test suite calls it after each test module, so that a later module's
    ``wait_for_compiles`` does not build the programs every earlier one left cold)."""
    with _lock:
        _held.clear()


def held_owners() -> list:
    """An executable of each program whose build is held (its latest), in the order held."""
    with _lock:
        return [builds[-1].owner for builds in _held.values()]
