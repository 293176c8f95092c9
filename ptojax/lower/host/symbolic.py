"""The cpu backend for programs with symbolic dimensions: one program for every size, and a
static program per bucket of sizes where that measures faster.

``SymbolicExecutable.run`` runs the program as traced (a ``HostExecutable``: tile kernels over
a runtime row count or row length, compiled once; everything else on numpy, sized per call).
Kernels that need static sizes (matmuls over a symbolic dimension, both a symbolic row count
and row length...) are left to numpy there, so for each *bucket* (a size per symbol, ``CpuBackend.buckets``: the next
power of two by default) that a call falls in, the program is also rewritten at the bucket
(``lower/bucketing.py``: padded and masked, all shapes static) and compiled in the
background like any static program. Once it is compiled, the bucket's next calls alternate
between the two (``TRIAL_CALLS`` each: the inputs padded to the bucket, the outputs cut to
their true sizes) and the bucket keeps the faster. A program that cannot be padded (a
primitive without a ``bucket`` rule), and one whose tiling left no kernel out for a symbolic
size (``STATIC_KERNELS``: a bucket would only add masks), keeps the one program; the calls of
a bucket whose
tensors are all small (``CpuBackend.min_elements``) run on the numpy executor, as a static
program of that size would. Each bucket compile is logged
(``ptojax.jit``, INFO) and listed in ``buckets``.
"""
from __future__ import annotations

import logging
import threading
import time

import numpy as np

from ptojax.errors import UnsupportedError
from ptojax.ir.symbolic import evaluate, size_readers, symbols_of
from ptojax.lower.bucketing import bucket_of, bucketed, next_power_of_two
from ptojax.eval.machine_load import machine_busy
from ptojax.lower.host.backend import TRIAL_CALLS, HostExecutable, _worker_idle
from ptojax.optimize import optimize
from ptojax.tile.planner import SYMBOLIC

log = logging.getLogger("ptojax.jit")


RERACES = 2          # races of a bucket after its first
RERACE_AFTER = 16    # calls after a bucket's race before the next

MAX_ROUTES = 1 << 14   # call sizes whose runner is kept (beyond: found again per call)

PENDING = object()    # a call's bucket, until the one program is tiled
STATIC_KERNELS = ("one program for every size: its kernels are those of a static program "
                  "(none needs a static size), so a bucket would only add its masks")

SMALL = "small at this bucket: the numpy executor, as for a static program of its size"


class SymbolicExecutable:
    """``run(*flat_inputs)`` for an IR with symbolic dimensions (see the module doc):
    ``executable`` is the one program's ``HostExecutable``; ``buckets`` maps each bucket seen
    (a tuple of sizes, one per symbol) to its ``Bucket``, or to why it runs the one program."""

    def __init__(self, closed, options):
        self.closed = closed
        self.options = options
        self.executable = HostExecutable(closed, options)
        self.source = self.executable.source
        self.readers = size_readers(closed.ir)
        self.symbols = symbols_of([v.type.shape for v in closed.ir.invars])
        ir = closed.ir
        self.tensor_sizes = list({v.type.size for v in (*ir.invars, *(o for e in ir.eqns
                                                                 for o in e.outputs))})
        self.buckets: dict = {}
        self._reads = [(i, axis) for i, axis, _ in self.readers.values()]
        self._routes: dict = {}    # the read dimensions of a call -> its runner (_route)
        self._lock = threading.Lock()
        self._unbucketable = None if options.buckets is not False else "buckets=False"

    @property
    def status(self) -> str:
        return self.executable.status

    def wait(self, timeout=None) -> bool:
        """Block until the one program's compile has finished (buckets compile on)."""
        return self.executable.wait(timeout)

    def run(self, *args):
        route = self._routes.get(tuple([args[i].shape[axis] for i, axis in self._reads]))
        if route is None:
            route = self._route(args)
        return route(args)

    __call__ = run

    def _needs_static_sizes(self):
        """Whether some kernel of the one program needs static sizes (a bucket could make it
        a kernel), False when every kernel a static program would have is there (a bucket
        would only add its masks), PENDING until the one program is tiled."""
        if self.executable.status == "compiling":
            return PENDING
        unfused = self.executable.unfused
        return unfused is None or any(op.reason.find(SYMBOLIC) >= 0 for op in unfused)

    def _route(self, args):
        """``args -> outputs`` for calls whose read dimensions are those of ``args``: the
        numpy executor (a small bucket), the one program (an unbucketable program), or their
        bucket's race and choice (the one program until it is compiled)."""
        sizes = {name: args[i].shape[axis] // c for name, (i, axis, c) in self.readers.items()}
        policy = self.options.buckets or next_power_of_two
        key = tuple(bucket_of(sizes[n], self.symbols[n], policy) for n in self.readers)
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self._new_bucket(key)
        if bucket is PENDING:    # the one program until it is tiled (not kept)
            program_run = self.executable.run
            return lambda args: program_run(*args)
        if bucket is SMALL:   # as a static program this small would: numpy only
            numpy_run = self.executable.numpy.run
            route = lambda args: numpy_run(*args)   # noqa: E731
        elif type(bucket) is not Bucket:
            program_run = self.executable.run
            route = lambda args: program_run(*args)   # noqa: E731
        else:
            program_run = self.executable.run

            def route(args):
                if not bucket.ready():
                    return program_run(*args)
                return bucket.run(program_run, args, sizes)
        if len(self._routes) < MAX_ROUTES:
            self._routes[tuple([args[i].shape[axis] for i, axis in self._reads])] = route
        return route

    def _new_bucket(self, key):
        with self._lock:
            if key in self.buckets:
                return self.buckets[key]
            at = dict(zip(self.readers, key))
            if max(evaluate(self.tensor_sizes, at), default=0) < self.options.min_elements:
                self.buckets[key] = SMALL
                return SMALL
            if self._unbucketable is not None:
                self.buckets[key] = self._unbucketable
                return self._unbucketable
            needs = self._needs_static_sizes()
            if needs is PENDING:
                return PENDING
            if not needs:
                self._unbucketable = STATIC_KERNELS
                self.buckets[key] = STATIC_KERNELS
                return STATIC_KERNELS
            try:
                static = optimize(bucketed(self.closed, at))   # its masks share iotas
            except UnsupportedError as e:   # no bucket rule: no bucket will do
                self._unbucketable = f"one program for every size ({e})"
                self.buckets[key] = self._unbucketable
                return self._unbucketable
            log.info("compiling the bucket %s of a program with symbolic dimensions",
                     ", ".join(f"{n}={b}" for n, b in at.items()))
            bucket = self.buckets[key] = Bucket(self.closed, static, at, self.options)
            return bucket


class Bucket:
    """The program at one bucket: compiled in the background, then raced against the one
    program on this bucket's calls. As in the tier race (``backend._TierTrial``), calls are
    timed only while the background worker is idle (its tiling holds the GIL and its
    compiler takes a core: either side would stall at random), and on a busy machine
    (``machine_busy``) by the calling thread's CPU time rather than the wall clock. The race
    is run again ``RERACES`` times, ``RERACE_AFTER`` calls after each decision, and decided
    on the best times of all its calls: a few calls of 3 can stall on a busy machine (a
    bucket 15% slower than the one program won a decode step's first race under load)."""

    def __init__(self, closed, static, at: dict, options):
        self.at = at
        self.names = list(at)
        self.executable = HostExecutable(static, options)
        self.executable.start_compiling()
        self.outvars = closed.ir.outvars
        self.padded_shapes = [evaluate(v.type.shape, at) for v in closed.ir.invars]
        self.times = ([], [])            # (one program, this bucket) call times
        self.use = None                  # the faster, once measured: "program" or "bucket"
        self.needed = TRIAL_CALLS        # calls of each before deciding
        self.calls_left = RERACE_AFTER   # calls until the next race (once decided)

    def ready(self) -> bool:
        return self.executable.program is not None

    def run(self, program_run, args, sizes):
        if self.use is not None:
            self.calls_left -= 1
            if self.calls_left > 0 or self.needed >= TRIAL_CALLS * (1 + RERACES):
                return self._padded_run(args, sizes) if self.use == "bucket" else \
                    program_run(*args)
            self.use, self.needed = None, self.needed + TRIAL_CALLS    # race again
        if not _worker_idle():
            return program_run(*args)
        tier = len(self.times[1]) <= len(self.times[0])    # the bucket first
        start, cpu = time.perf_counter(), time.thread_time()
        out = self._padded_run(args, sizes) if tier else program_run(*args)
        self.times[tier].append((time.perf_counter() - start, time.thread_time() - cpu))
        if all(len(t) >= self.needed for t in self.times):
            self.calls_left = RERACE_AFTER
            clock = 1 if machine_busy() else 0
            program, bucket = (min(t[clock] for t in times) for times in self.times)
            self.use = "bucket" if bucket <= program else "program"
            log.info("bucket %s: %s measured faster (%.3f ms vs %.3f ms%s)", self.at,
                     self.use, 1e3 * min(program, bucket), 1e3 * max(program, bucket),
                     " of CPU time" if clock else "")
        return out

    def _padded_run(self, args, sizes):
        padded = [_padded(x, shape) for x, shape in zip(args, self.padded_shapes)]
        outs = self.executable.program.run(*[np.int32(sizes[n]) for n in self.names], *padded)
        return [_cut(o, evaluate(v.type.shape, sizes)) if hasattr(v, "type") else o
                for o, v in zip(outs, self.outvars)]


def _padded(x, shape):
    if tuple(x.shape) == tuple(shape):
        return x
    out = np.zeros(shape, x.dtype)
    out[tuple(slice(0, n) for n in x.shape)] = x
    return out


def _cut(x, shape):
    if tuple(x.shape) == tuple(shape):
        return x
    return x[tuple(slice(0, n) for n in shape)]
