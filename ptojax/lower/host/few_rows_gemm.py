"""Float32 products of few rows (``x @ w`` of a small batch) run by the kernel library.

numpy's matmul calls OpenBLAS's sgemm, which copies ("packs") the weight matrix into panels
on every call; with 32 rows that copy is about a third of the product. A host program whose
IR has such a ``dot_general`` has its kernel library also compile ``include/pto_host_gemm.h``
(``EXPORTS``), a GEMM that reads ``w`` in place, and runs those equations through it
(``few_rows_runners``). Measured on one thread (CPU time, AMD Zen 4, AVX-512; busy machine):
32x784 @ 784x512 267 vs 328 us, 32x512 @ 512x512 161 vs 212 us, 32x512 @ 512x784 259 vs
327 us, 8x1024 @ 1024x1024 283 vs 678 us; longer rows lose (32x4096 @ 4096x4096: the column
panel no longer stays in L2), as do short contractions and narrow results (BLAS's small-matrix
kernels), hence the bounds below.

Which equations: ``lhs @ rhs`` of float32 matrices contracting ``lhs``'s axis 1 with
``rhs``'s axis 0, unbatched, of at most ``MAX_ROWS`` rows, at least ``MIN_COLUMNS`` columns,
a contraction of ``MIN_DEPTH`` to ``MAX_DEPTH`` and ``MIN_WORK`` multiply-adds (a smaller
product has little to gain, and keeps BLAS's rounding where a test or a user compares a
compiled function with numpy). At run time operands that are not C-contiguous
(a transposed view) go to the numpy impl. The columns are shared out over the OpenMP threads
unless the machine is busy or operations run in pairs (``eval/machine_load.py``), as kernels
are.

Each product races BLAS first (``_Race``): its first ``TRIALS`` runs each way alternate, and
the faster by median time stays — one race while the machine is busy (timed in this thread's
CPU time: BLAS and the GEMM then run on this thread) and one while it is not (wall time).
Within a train step the weights often come from memory rather than cache, where the gain
shrinks or turns (measured in a VAE step on a busy machine, one thread: 32x784 @ 784x512
358 vs 397 us, 32x512 @ 512x784 392 vs 370 us), so which one wins depends on the program
and the machine.

Numerics: one running sum per result over the contraction in order, within the float bound
of the sum; the last bits differ from BLAS's (``pto_host_gemm.h``), so a product's last bits
can change once its race is decided.
"""
from __future__ import annotations

import time

import numpy as np

from ptojax.eval.machine_load import THREADED_MIN_FLOPS, machine_busy, threads_free
from ptojax.eval.pointers import data_pointers
from ptojax.ops.linalg import dot_general_p

EXPORTS = ("pto_host_gemm.h",)
MAX_ROWS = 64           # more rows: BLAS's packing is shared by enough of them
MIN_COLUMNS = 64        # one AVX-512 panel; narrower results run BLAS's small kernels
MIN_DEPTH = 64          # a short contraction is all loads and stores
MAX_DEPTH = 2048        # the column panel (depth x 64 floats) stays in L2
MIN_WORK = 1 << 22      # multiply-adds (~40 us): smaller products keep BLAS's last bits
_F32 = np.dtype(np.float32)
_PLAIN = (((1,), (0,)), ((), ()))
TRIALS = 8              # runs each way before a product keeps the faster


def runs_few_rows(eqn) -> bool:
    """Whether ``eqn`` is a product this GEMM runs (see the module docstring)."""
    if eqn.prim is not dot_general_p or eqn.params["dimension_numbers"] != _PLAIN:
        return False
    lhs, rhs, out = eqn.inputs[0].type, eqn.inputs[1].type, eqn.outputs[0].type
    if not (lhs.dtype == rhs.dtype == out.dtype == _F32) or lhs.ndim != 2 or rhs.ndim != 2:
        return False
    (m, k), n = lhs.shape, rhs.shape[1]
    if not all(type(d) is int for d in (m, k, n)):
        return False
    return 1 <= m <= MAX_ROWS and n >= MIN_COLUMNS and MIN_DEPTH <= k <= MAX_DEPTH \
        and m * n * k >= MIN_WORK


def few_rows_runner(library, eqn, blas=None):
    """The function running product ``eqn`` with ``library``'s GEMM, or None when the
    library has none. ``blas`` runs it with BLAS (the team's, ``team_gemm.py``; numpy's
    when None)."""
    compiled = library.gemm_few_rows_f32
    if compiled is None:
        return None
    (m, k), n = eqn.inputs[0].type.shape, eqn.inputs[1].type.shape[1]
    threaded = m * n * k >= THREADED_MIN_FLOPS
    params = eqn.params
    numpy_impl = blas or (lambda lhs, rhs: dot_general_p.impl(lhs, rhs, **params))
    empty = np.empty
    race = _Race()

    def gemm(lhs, rhs, busy):
        out = empty((m, n), _F32)
        a, b, c = data_pointers((lhs, rhs, out))
        compiled(m, n, k, a, k, b, n, 0.0, c, n, int(threaded and not busy and threads_free()))
        return out

    def run(lhs, rhs):
        busy = machine_busy()
        choice = race.choice[busy]
        usable = lhs.flags.c_contiguous and rhs.flags.c_contiguous \
            and lhs.dtype == _F32 and rhs.dtype == _F32
        if choice is not None or not usable:
            return gemm(lhs, rhs, busy) if choice and usable else numpy_impl(lhs, rhs)
        own = race.next_is_own(busy)
        clock = time.thread_time if busy else time.perf_counter
        start = clock()
        out = gemm(lhs, rhs, busy) if own else numpy_impl(lhs, rhs)
        race.record(busy, own, clock() - start)
        return out
    run.race = race
    return run


def few_rows_runners(library, eqns, blas_runners=None) -> dict:
    """{product among ``eqns`` this GEMM runs: its runner}; ``blas_runners`` maps products
    to the BLAS runner each races (numpy's matmul for those it does not have)."""
    runners = {}
    for eqn in eqns:
        if runs_few_rows(eqn):
            run = few_rows_runner(library, eqn, (blas_runners or {}).get(eqn))
            if run is not None:
                runners[eqn] = run
    return runners


class _Race:
    """This product's race of BLAS against the GEMM, one per machine state (busy or not):
    ``choice[busy]`` is None while racing, then whether the GEMM won."""

    def __init__(self):
        self.choice = {False: None, True: None}
        self.times = {(busy, own): [] for busy in (False, True) for own in (False, True)}

    def next_is_own(self, busy: bool) -> bool:
        """Whether the next run races the GEMM (the way with fewer runs so far)."""
        return len(self.times[busy, True]) <= len(self.times[busy, False])

    def record(self, busy: bool, own: bool, seconds: float) -> None:
        self.times[busy, own].append(seconds)
        blas, gemm = self.times[busy, False], self.times[busy, True]
        if len(blas) >= TRIALS and len(gemm) >= TRIALS:
            self.choice[busy] = bool(np.median(gemm) < np.median(blas))
