"""Other threads of this process busy beside the OpenMP team: where the team's work goes then.

With one pool (``eval/blas.py``: products on the kernels' OpenMP team), the team's idle
workers spin briefly between regions. numpy's OpenBLAS keeps its own workers spinning for
about 0.1 s after each product it splits over them: the user's own numpy matmul between
ptojax's calls, a LAPACK operation, a float64 product (measured: 50 ms of CPU during a 50 ms
sleep after one 1000x1000 matmul, 53 ms more in the next 200 ms). Two pools spinning side by
side on the cores starve each other: a 128-row MLP step right after a numpy reference step
took 7.7-18 ms (median) instead of 3.5 ms.

So each calling thread reads how much CPU the process's *other* threads used since its last
reading: the process's CPU time less its own and its team workers' (their per-thread CPU
clocks, Linux), a few system calls taken at most every ``CHECK_EVERY_NS``. Busy means at
least ``BUSY_CORES`` of a core. The work then goes where it fights nobody:

- ``TEAM``: nobody else busy. Kernels and products spread over the OpenMP team.
- ``OPENBLAS``: others busy (OpenBLAS's workers awake). Products run on OpenBLAS's threads,
  kernels on the calling thread: the two pools of old, with the OpenMP workers asleep.
  ptojax's own products keep OpenBLAS's workers awake from then on, so after
  ``PROBE_AFTER_NS`` (doubling each time a probe finds them still busy, up to
  ``PROBE_AFTER_MAX_NS``) a probe starts:
- ``PROBE``: everything on the calling thread, OpenBLAS held at one thread, for up to
  ``PROBE_NS``: time enough for OpenBLAS's idle workers to fall asleep. ``QUIET_READINGS``
  in a row with nobody busy return to ``TEAM`` (one can miss a spinning worker that the
  scheduler had set aside for a moment); else back to ``OPENBLAS``.

A program that calls numpy's BLAS between every two ptojax steps thus runs as two pools (once
its probes have backed off, one probe of at most ``PROBE_NS`` every ``PROBE_AFTER_MAX_NS``);
one that never does runs on one pool. Each calling thread has its own OpenMP team and its own state; the team's
thread ids are asked of the library (``ptojax_team_threads``) on that thread's first reading.
"""
from __future__ import annotations

import enum
import threading
import time
from typing import Callable, Optional

CHECK_EVERY_NS = 2_000_000
BUSY_CORES = 0.5
PROBE_AFTER_NS = 300_000_000
PROBE_AFTER_MAX_NS = 5_000_000_000
PROBE_NS = 300_000_000
QUIET_READINGS = 3        # a probe ends on this many readings in a row with nobody busy


class Spread(enum.Enum):
    TEAM = "team"            # kernels and products over the OpenMP team
    OPENBLAS = "openblas"    # products on OpenBLAS's threads, kernels on the calling thread
    PROBE = "probe"          # everything on the calling thread


def thread_clock(tid: int) -> int:
    """The CPU-time clock id of thread ``tid`` (Linux's ``MAKE_THREAD_CPUCLOCK(tid,
    CPUCLOCK_SCHED)``, what ``pthread_getcpuclockid`` returns)."""
    return ((~tid) << 3) | 6


class _Watch:
    """One calling thread's readings and state."""

    def __init__(self, worker_clocks):
        self.worker_clocks = worker_clocks
        self.wall = None          # the last reading's time, and the others' CPU time then
        self.foreign = 0
        self.spread = Spread.TEAM
        self.since = 0            # when ``spread`` began
        self.probe_after = PROBE_AFTER_NS
        self.quiet = 0            # readings in a row with nobody busy

    def read(self, now: int) -> Optional[bool]:
        """Whether the others were busy since the last reading (None: no earlier one)."""
        foreign = time.process_time_ns() - time.thread_time_ns() - sum(
            map(time.clock_gettime_ns, self.worker_clocks))
        busy = None if self.wall is None else \
            foreign - self.foreign >= BUSY_CORES * (now - self.wall)
        self.wall, self.foreign = now, foreign
        return busy

    def advance(self, now: int, busy: bool) -> None:
        self.quiet = 0 if busy else self.quiet + 1
        if self.spread is Spread.TEAM:
            if busy:
                self._become(Spread.OPENBLAS, now)
        elif self.spread is Spread.OPENBLAS:
            if now - self.since >= self.probe_after:
                self._become(Spread.PROBE, now)
        elif self.quiet >= QUIET_READINGS:
            self.probe_after = PROBE_AFTER_NS
            self._become(Spread.TEAM, now)
        elif now - self.since >= PROBE_NS:
            self.probe_after = min(2 * self.probe_after, PROBE_AFTER_MAX_NS)
            self._become(Spread.OPENBLAS, now)

    def _become(self, spread: Spread, now: int) -> None:
        self.spread, self.since = spread, now


class _Team:
    threads: Optional[Callable] = None   # () -> the calling thread's team's tids
    generation = 0                        # watches of an earlier ``watch_team`` are stale
    local = threading.local()             # .watch: the calling thread's (generation, _Watch)


def watch_team(team_threads: Callable) -> None:
    """Watch the other threads from now on; ``team_threads()`` gives the Linux thread ids of
    the calling thread's OpenMP team, the caller's first."""
    _Team.threads = team_threads
    _Team.generation += 1


def _own_watch() -> _Watch:
    """The calling thread's watch (kept in a thread-local: gone with the thread)."""
    held = getattr(_Team.local, "watch", None)
    if held is None or held[0] != _Team.generation:
        held = _Team.local.watch = (_Team.generation, _Watch(
            tuple(map(thread_clock, _Team.threads()[1:]))))
    return held[1]


def spread() -> Spread:
    """Where the team's work goes now, for the calling thread (``TEAM`` when no team is
    watched)."""
    if _Team.threads is None:
        return Spread.TEAM
    watch = _own_watch()
    now = time.monotonic_ns()
    if watch.wall is not None and now - watch.wall < CHECK_EVERY_NS:
        return watch.spread
    try:
        busy = watch.read(now)
    except OSError:                      # a worker has exited: ask for the team again
        _Team.local.watch = None
        return Spread.TEAM
    if busy is not None:
        watch.advance(now, busy)
    return watch.spread
