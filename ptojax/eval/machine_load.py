"""A busy machine: numpy's BLAS and the host kernels on one thread while the cores are taken.

numpy's OpenBLAS splits a large enough matmul over its own threads, which busy-wait for
work. When the machine has more runnable processes than cores, a waiting thread spins on a
core another thread needs, and steps stall until the scheduler sorts it out. Measured on a
2-core machine at a load average of 6-9, the same minutes: a jitted VAE train step (batch
32, 512-wide layers) 370-450 ms per step with OpenBLAS's 2 threads, 16 ms with 1; 30 steps
of an MLP train step (784-512-512-10, batch 128) 1.9-2.0 s vs 0.5 s. On an idle machine the
threads help. So before each large matmul (``matmul``; at most once a second) ptojax sets
OpenBLAS to one thread while the machine is busy (below), and gives it back its own thread
count once it is not. The setting is process-wide: the user's
own numpy matmuls follow it too. Nothing happens when no OpenBLAS can be located (another
BLAS, or not Linux). For the same reason the host kernels run their blocks on the calling
thread while ``machine_busy()`` (``lower/host/program.py``): OpenMP's threads were as stuck.

Busy means busy with *other* work. The load average will not do: it counts this process's own
threads too (spinning BLAS threads are running), so a lone training process using both cores
read its own load as busy and throttled itself, and it lags by a minute, so a benchmark run
right after another one throttled itself for the other's load. So ``machine_busy`` measures the
CPU time the rest of the machine used since its last reading: ``/proc/stat``'s user, system,
interrupt and steal time (nice time only if this process is niced itself: a niced compiler
yields to us) less this process's own CPU time, per second of wall time. The machine is busy
while the rest used at least ``cpu_count - 1.5`` cores (half a core on 2 cores: one other
running process, and BLAS's second thread would fight it). A process's first reading has no
earlier one to take a rate from: it counts the other processes' threads running right then
(``/proc/loadavg``'s running count less this process's running threads, the fewest of a few
reads), busy at the same threshold — the 1-minute load average, which lags, decided it
before, and a cold run's first second (its steps run on numpy's BLAS) stalled on two threads
beside a process started moments earlier. Without ``/proc``, the 1-minute load average at least
the CPU count decides.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import threading
import time

from ptojax.eval.foreign_threads import Spread, spread

CHECK_EVERY_S = 1.0
THREADED_MIN_FLOPS = 1 << 20   # the host kernels' GEMM splits products this large
# OpenBLAS may split a product over its threads once m*n*k exceeds 65536 x 4 (its
# SMP_THRESHOLD_MIN x GEMM_MULTITHREAD_THRESHOLD), so every product from there on asks
# ``follow_load`` first. Measured (OpenBLAS 0.3.31, 2 cores, another process using both):
# 128x16 @ (288x16).T -- a dense layer's input gradient, m*n*k = 590K -- woke the second
# thread and took 108 us a call (13 us on one thread); 128x64 @ 64x288 (2.4M) took 15 ms, a
# whole scheduler slice, where one thread takes 30 us.
OPENBLAS_THREADED_MIN_MNK = 65536 * 4


class _Load:
    checked = -CHECK_EVERY_S
    used = None           # (machine CPU seconds, this process's CPU seconds) at ``checked``
    busy = False
    builds = 0            # this process's background builds running (``building``)
    cpus = (None, 1)      # (os.cpu_count, what it returned): a call takes ~20 us
    lock = threading.Lock()


@contextlib.contextmanager
def building():
    """Held while this process builds kernels in the background: tiling on its worker thread,
    then a compiler, each taking a core at once. A niced compiler still preempts spinning
    BLAS/OpenMP threads for whole time slices (30 MLP steps on 2 cores: 112 ms per step while
    compiling, 3.5 ms before), so the machine counts as busy from the start of the build,
    before a reading could show it."""
    with _Load.lock:
        _Load.builds += 1
    try:
        yield
    finally:
        with _Load.lock:
            _Load.builds -= 1


def machine_busy() -> bool:
    """Whether this process is building kernels on a machine with at most 2 cores' spare
    capacity, or the rest of the machine used at least ``cpu_count - 1.5`` cores since the
    last reading (read at most once a second; see the module docstring)."""
    if _Load.builds and _Load.builds >= _cpus() - 1.5:
        return True
    now = time.monotonic()
    elapsed = now - _Load.checked
    if elapsed >= CHECK_EVERY_S:
        cpus = _cpus()
        used = (_cpu_seconds_used(), time.process_time())
        if used[0] is None:                  # no /proc/stat: no /proc
            others = None
        elif _Load.used is not None and _Load.used[0] is not None:
            others = (used[0] - _Load.used[0] - (used[1] - _Load.used[1])) / elapsed
        else:
            others = _others_running_now()
        if others is not None:
            _Load.busy = others >= max(0.5, cpus - 1.5)
        else:
            try:
                _Load.busy = os.getloadavg()[0] >= cpus
            except OSError:
                _Load.busy = False
        _Load.checked, _Load.used = now, used
    return _Load.busy


def _cpus() -> int:
    """``os.cpu_count()``, read once (again only if that function was replaced: tests)."""
    count = os.cpu_count
    if _Load.cpus[0] is not count:
        _Load.cpus = (count, count() or 1)
    return _Load.cpus[1]


_TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds_used():
    """CPU seconds the whole machine has used (``/proc/stat``: user, system, irq, softirq,
    steal; nice too if this process is niced), or None where there is no ``/proc/stat``."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        user, nice, system, _, _, irq, softirq, steal = map(int, fields[1:9])
    except (OSError, ValueError):
        return None
    niced = os.getpriority(os.PRIO_PROCESS, 0) > 0
    return (user + system + irq + softirq + steal + (nice if niced else 0)) / _TICKS_PER_S


RUNNING_READS = 3      # a thread that ran in one read only (a daemon waking) is not load


def _others_running_now():
    """How many threads of other processes are running now: the fewest over a few reads of
    ``/proc/loadavg``'s running count less this process's running threads; None without
    ``/proc``."""
    fewest = None
    for _ in range(RUNNING_READS):
        try:
            with open("/proc/loadavg") as f:
                running = int(f.read().split()[3].split("/")[0])
            others = running - _own_running_threads()
        except (OSError, ValueError, IndexError):
            return None
        fewest = others if fewest is None else min(fewest, others)
        if fewest <= 0:
            return 0
    return fewest


def _own_running_threads() -> int:
    """This process's threads in state R (running or runnable), from ``/proc/self/task``."""
    running = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                running += f.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            continue                     # (a thread that has just exited)
    return running


class _Blas:
    saved = None          # OpenBLAS's thread count while ptojax holds it at 1
    lock = threading.Lock()
    pinned = 0            # operations running at once (``one_thread_each``)
    pinned_saved = None   # OpenBLAS's thread count before the first of them


@contextlib.contextmanager
def one_thread_each():
    """Held while this process runs operations at once on its own threads
    (``eval/concurrent.py``): BLAS and the host kernels (``pinned()``) then each run on
    their calling thread, so two of them take two cores, not four threads on two cores."""
    with _Blas.lock:
        _Blas.pinned += 1
        if _Blas.pinned == 1:
            controls = _openblas_threads()
            if controls is not None and controls[0]() != 1:
                _Blas.pinned_saved = controls[0]()
                controls[1](1)
    try:
        yield
    finally:
        with _Blas.lock:
            _Blas.pinned -= 1
            if _Blas.pinned == 0 and _Blas.pinned_saved is not None:
                _openblas_threads()[1](_Blas.pinned_saved)
                _Blas.pinned_saved = None


def pinned() -> bool:
    """Whether operations run at once now, each on one thread (``one_thread_each``)."""
    return _Blas.pinned > 0


def threads_free() -> bool:
    """Whether the host kernels may spread over the OpenMP team now: no operations run at once
    on their own threads (``pinned``), the machine is not busy with other work
    (``machine_busy``), and no other thread of this process is busy beside the team
    (``eval/foreign_threads.py``)."""
    return not _Blas.pinned and not machine_busy() and spread() is Spread.TEAM


def follow_load() -> None:
    """numpy's OpenBLAS on one thread while ``machine_busy()``, its own thread count again
    once it is not (left alone while ``pinned()``: that holds it at one thread already). The
    count is one process-wide value (numpy's pthreads OpenBLAS has no per-thread setting): one
    set while it was held at 1 is not overwritten with the count saved before."""
    busy = machine_busy()
    if busy == (_Blas.saved is not None) or _Blas.pinned:
        return
    with _Blas.lock:
        if _Blas.pinned:
            return
        controls = _openblas_threads()
        if controls is None:
            return
        get, set_ = controls
        if busy and _Blas.saved is None:
            _Blas.saved = get()
            set_(1)
        elif not busy and _Blas.saved is not None:
            if get() == 1:      # else set since (by the user, or a team product restoring
                set_(_Blas.saved)   # its caller's setting, pto_host_team_gemm.h): it stands
            _Blas.saved = None


@functools.cache
def openblas_libraries() -> tuple:
    """The OpenBLAS libraries this process loaded (numpy's), as ctypes handles: ``()`` where
    none can be found (another BLAS, or no ``/proc/self/maps``)."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f
                            if "openblas" in line.rsplit("/", 1)[-1].lower()
                            and ".so" in line.rsplit("/", 1)[-1]})
    except OSError:
        return ()
    libraries = []
    for path in paths:
        try:
            libraries.append(ctypes.CDLL(path))
        except OSError:
            continue
    return tuple(libraries)


# (prefix, suffix) of OpenBLAS's exported names: scipy-openblas builds, plain builds; ``64_``
# marks the builds with 64-bit integer arguments
OPENBLAS_NAMINGS = (("scipy_", "64_"), ("scipy_", ""), ("", "64_"), ("", ""))


@functools.cache
def _openblas_threads():
    """(get, set) of the OpenBLAS numpy loaded, or None."""
    for lib in openblas_libraries():
        for prefix, suffix in OPENBLAS_NAMINGS:
            get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
            set_ = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
            if get is not None and set_ is not None:
                get.restype, set_.argtypes = ctypes.c_int, (ctypes.c_int,)
                return get, set_
    return None
