"""The process's allocator policy for array memory: freed buffers are kept for reuse.

A jitted step allocates its intermediates afresh on every call (numpy arrays, kernel outputs).
glibc serves blocks above its mmap threshold with fresh ``mmap`` pages and returns freed heap
tops to the OS, so every call page-faults and zeroes all of its large buffers again: in the
data-parallel MLP step of ``benchmarks/shard.py`` that was half the time (26 ms -> 12 ms
without it). XLA avoids it with its own buffer pools; ptojax asks glibc to behave like one:
blocks up to 32 MiB (glibc's largest mmap threshold) come from the heap, and up to 512 MiB of
free heap top is kept instead of trimmed. The cost is memory: the process keeps its peak heap.

Applied once, when the first executable is built (importing ptojax changes nothing). Linux
with glibc only; ``PTOJAX_KEEP_FREED_MEMORY=0`` leaves the allocator alone.
"""
from __future__ import annotations

import ctypes
import functools
import platform

from ptojax.env import env_flag

MMAP_THRESHOLD = 32 << 20    # glibc ignores larger values on 64-bit (HEAP_MAX_SIZE / 2)
TRIM_THRESHOLD = 512 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3   # mallopt parameter numbers (malloc.h)


@functools.cache
def keep_freed_memory() -> bool:
    """Apply the policy (once per process; applying it twice is harmless); True when glibc
    accepted it."""
    if not env_flag("PTOJAX_KEEP_FREED_MEMORY", True):
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
