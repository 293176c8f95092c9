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

Busy means busy with *other* work: the load average counts this process's own threads too
(BLAS threads spinning count as running), so a lone training process using both cores of a
2-core machine would read its own load as "busy" and throttle itself. ``machine_busy`` subtracts
an estimate of this process's share — its CPU time per second of wall time, averaged with the
kernel's own one-minute decay — and calls the machine busy while the rest leaves this process
at most one core (``others >= cpu_count - 1``, and at least 1).
"""
from __future__ import annotations

import ctypes
import functools
import math
import os
import threading
import time

CHECK_EVERY_S = 1.0
THREADED_MIN_FLOPS = 1 << 20   # OpenBLAS runs smaller products on one thread anyway


LOADAVG_WINDOW_S = 60.0   # the decay constant of the kernel's 1-minute load average


class _Load:
    checked = -CHECK_EVERY_S
    cpu_time = None       # this process's CPU time at ``checked``
    own = 0.0             # this process's running threads, averaged like the load average
    busy = False


def machine_busy() -> bool:
    """Whether other work keeps all cores but (at most) one taken: the 1-minute load average
    less this process's own share (read at most once a second)."""
    now = time.monotonic()
    elapsed = now - _Load.checked
    if elapsed >= CHECK_EVERY_S:
        cpu_time = time.process_time()
        if _Load.cpu_time is not None:
            decay = math.exp(-elapsed / LOADAVG_WINDOW_S)
            running = (cpu_time - _Load.cpu_time) / elapsed
            _Load.own = _Load.own * decay + running * (1.0 - decay)
        _Load.checked, _Load.cpu_time = now, cpu_time
        try:
            others = os.getloadavg()[0] - _Load.own
        except OSError:
            others = 0.0
        _Load.busy = others >= max(1, (os.cpu_count() or 1) - 1)
    return _Load.busy


class _Blas:
    saved = None          # OpenBLAS's thread count while ptojax holds it at 1
    lock = threading.Lock()


def follow_load() -> None:
    """numpy's OpenBLAS on one thread while ``machine_busy()``, its own thread count again
    once it is not."""
    busy = machine_busy()
    if busy == (_Blas.saved is not None):
        return
    with _Blas.lock:
        controls = _openblas_threads()
        if controls is None:
            return
        get, set_ = controls
        if busy and _Blas.saved is None:
            _Blas.saved = get()
            set_(1)
        elif not busy and _Blas.saved is not None:
            set_(_Blas.saved)
            _Blas.saved = None


@functools.cache
def _openblas_threads():
    """(get, set) of the OpenBLAS numpy loaded, or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f
                            if "openblas" in line.rsplit("/", 1)[-1].lower()
                            and ".so" in line.rsplit("/", 1)[-1]})
    except OSError:
        return None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas_", "64_"), ("scipy_openblas_", ""),
                               ("openblas_", "64_"), ("openblas_", "")):
            get = getattr(lib, f"{prefix}get_num_threads{suffix}", None)
            set_ = getattr(lib, f"{prefix}set_num_threads{suffix}", None)
            if get is not None and set_ is not None:
                get.restype, set_.argtypes = ctypes.c_int, (ctypes.c_int,)
                return get, set_
    return None


def matmul(a, b):
    """``a @ b``, after ``follow_load`` (see the module docstring)."""
    if a.size * b.shape[-1] >= THREADED_MIN_FLOPS:
        follow_load()
    return a @ b
