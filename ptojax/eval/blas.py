"""``gemm``: BLAS's ``C = A @ B + beta * C``, in place, through numpy's own OpenBLAS.

numpy's ``matmul`` always calls ``?gemm`` with ``beta = 0``: OpenBLAS zeroes ``C`` and then
adds the product into it. A momentum update ``v = mass * v + x.T @ g`` (or a gradient
accumulation ``acc + x.T @ g``) written that way makes the product into a fresh buffer, then
reads it again with ``v`` to write ``v``. With ``beta`` the product is added into ``v``'s
own buffer by the GEMM's micro-kernel, so the gradient is never written out
(``lower/host/accumulate.py`` forms these products; ``ops/dot_accumulate.py`` is the
primitive).

Numerics: the same terms summed in an order OpenBLAS picks, so within the rounding of the
unfused ``beta * C + A @ B`` (``tests/eval/test_blas.py`` holds it to the float error bound
of the sum). Measured with numpy 2.4's OpenBLAS 0.3.31 (Zen 4): bit for bit the unfused
sum for the weight gradients of a batch-32 step (256x256 and up with K = 32: C scaled once,
then the product added after each K block's loop); 12-14% of the elements differ in the
last bits for small products (128x128x32 and below: its small-matrix kernels) and a third
for long contractions (K = 784: each K block's partial sum is added into C in turn).

The library is the OpenBLAS numpy loaded (``machine_load.openblas_libraries``); where there
is none (another BLAS), ``gemm`` returns False and callers compute the same with numpy. Once
a kernel library installed the OpenMP team's GEMM (below), float32 products run on that team.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

from ptojax.eval.machine_load import (OPENBLAS_NAMINGS, OPENBLAS_THREADED_MIN_MNK,
                                      THREADED_MIN_FLOPS, follow_load, machine_busy,
                                      openblas_libraries, pinned)
from ptojax.env import env_flag
from ptojax.errors import ConfigError
from ptojax.eval.foreign_threads import Spread, spread, watch_team
from ptojax.eval.pointers import data_pointer

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_NAMES = {np.dtype(np.float32): "cblas_sgemm", np.dtype(np.float64): "cblas_dgemm"}
GEMM_DTYPES = frozenset(_NAMES)


@functools.cache
def _routine(dtype: np.dtype):
    """OpenBLAS's row-major ``cblas_?gemm`` for ``dtype`` with its ctypes signature, or None."""
    scalar = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    for lib in openblas_libraries():
        for prefix, suffix in OPENBLAS_NAMINGS:
            fn = getattr(lib, f"{prefix}{_NAMES[dtype]}{suffix}", None)
            if fn is None:
                continue
            index = ctypes.c_int64 if suffix.startswith("64") else ctypes.c_int32
            pointer = ctypes.c_void_p
            fn.restype = None
            fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, index, index, index,
                           scalar, pointer, index, pointer, index, scalar, pointer, index]
            return fn
    return None


def stored_matrices(a, transposed: bool = False):
    """``(array, transposed)``: ``a`` (a matrix or a stack of them) as BLAS reads it in place,
    or with its last two axes swapped when only that is C-contiguous (the flag flips), else a
    C-contiguous copy."""
    if not a.flags.c_contiguous:
        swapped = np.swapaxes(a, -1, -2)
        if swapped.flags.c_contiguous:
            return swapped, not transposed
        a = np.ascontiguousarray(a)
    return a, transposed


def gemm(c, lhs, rhs, lhs_contracting: int, rhs_contracting: int, beta: float) -> bool:
    """``c[...] = lhs' @ rhs' + beta * c`` in ``c``'s buffer, where ``lhs'`` is ``lhs`` (or its
    transpose when it contracts axis 0) and ``rhs'`` is ``rhs`` (or its transpose when it
    contracts axis 1). ``c`` must be a writable C-contiguous matrix of ``lhs``'s dtype.
    Returns False, leaving ``c`` alone, when no BLAS routine can do it (no OpenBLAS, another
    dtype, an empty product, ``c`` overlapping an operand); the caller then computes it with
    numpy."""
    dtype = c.dtype
    fn = _routine(dtype) if dtype in GEMM_DTYPES else None
    if fn is None or lhs.dtype != dtype or rhs.dtype != dtype or c.ndim != 2 \
            or not c.flags.c_contiguous or not c.flags.writeable or c.size == 0 \
            or lhs.shape[lhs_contracting] == 0 \
            or np.may_share_memory(c, lhs) or np.may_share_memory(c, rhs):
        return False
    a, trans_a = stored_matrices(lhs, lhs_contracting == 0)
    b, trans_b = stored_matrices(rhs, rhs_contracting == 1)
    m, n = c.shape
    k = lhs.shape[lhs_contracting]
    if _Team.gemm is not None and dtype == _F32:
        team_gemm(a, trans_a, b, trans_b, beta, c, m * n * k >= THREADED_MIN_FLOPS)
        return True
    if m * n * k >= OPENBLAS_THREADED_MIN_MNK:
        follow_load()
    fn(_ROW_MAJOR, _TRANS if trans_a else _NO_TRANS, _TRANS if trans_b else _NO_TRANS,
       m, n, k, 1.0, data_pointer(a), a.shape[1], data_pointer(b), b.shape[1], beta,
       data_pointer(c), n)
    return True


def _address(fn) -> int:
    return ctypes.cast(fn, ctypes.c_void_p).value


@functools.cache
def team_routines():
    """``(sgemm, index64, set_local_threads)``: the addresses of numpy's OpenBLAS
    ``cblas_sgemm`` and ``openblas_set_num_threads_local`` and whether its integers are
    64-bit, for products run on the kernels' OpenMP team (``lower/host/team_gemm.py``); None
    without an OpenBLAS that has the per-thread setting (before 0.3.27)."""
    for lib in openblas_libraries():
        set_local = getattr(lib, "openblas_set_num_threads_local", None)
        if set_local is None:
            continue
        for prefix, suffix in OPENBLAS_NAMINGS:
            sgemm = getattr(lib, f"{prefix}cblas_sgemm{suffix}", None)
            if sgemm is not None:
                return _address(sgemm), suffix.startswith("64"), _address(set_local)
    return None


# --- products on the kernels' OpenMP team ----------------------------------------------------
# Once a kernel library is loaded, this process runs its host kernels on OpenMP's threads,
# and numpy's OpenBLAS runs products on a second pool of threads beside them: the two pools
# then wait for each other's busy workers (lower/host/team_gemm.py has the figures). With
# ``$PTOJAX_ONE_THREAD_POOL`` on, the first library loaded installs its team GEMM here
# (``decide_team``), and from then on ptojax's float32 products (``matmul``: numpy impls, the
# numpy tier, convolutions' im2col products; a compiled program's own product runners) run on
# the OpenMP team: one pool, while no other thread of the process is busy beside it
# (``eval/foreign_threads.py``: the user's numpy products wake OpenBLAS's threads). It is off
# by default: products of few rows run slower split over the team than on OpenBLAS's threads
# (``lower/host/team_gemm.py`` has the figures).
ONE_POOL_ENV = "PTOJAX_ONE_THREAD_POOL"


def one_pool_wanted() -> bool:
    """Whether products are to run on the kernels' OpenMP team (``$PTOJAX_ONE_THREAD_POOL``,
    default off; read when the first kernel library loads)."""
    return env_flag(ONE_POOL_ENV, False)

_F32 = np.dtype(np.float32)


class _Team:
    gemm = None        # a library's ptojax_team_gemm, bound to numpy's BLAS
    decided = False    # a library was loaded: whether there is one pool is settled


def decide_team(gemm, team_threads) -> None:
    """At each kernel library's load, with its bound team GEMM and its ``team_threads``
    (``lower/host/loader.py``; None without them): the first settles whether this process
    has one pool, installing ``gemm`` if it is wanted and the team's threads can be told from
    the others (``eval/foreign_threads.py``)."""
    if not _Team.decided:
        _Team.decided = True
        if gemm is not None and team_threads is not None and one_pool_wanted() \
                and team_threads():
            _Team.gemm = gemm
            watch_team(team_threads)


def check_one_pool_setting(name, wanted: bool) -> None:
    """``ptojax_one_thread_pool`` can change only before the first kernel library loads."""
    if _Team.decided and wanted != team_installed():
        raise ConfigError(f"{name} is read when the first kernel library is loaded, which "
                          f"this process has done; set it (or ${ONE_POOL_ENV}) at the start of "
                          f"the program")


def team_installed() -> bool:
    return _Team.gemm is not None


# where ``ptojax_team_gemm`` runs a product (``Spread`` in ``include/pto_host_team_gemm.h``)
_CALLING_THREAD, _TEAM, _OPENBLAS_THREADS = 0, 1, 2


def team_gemm(a, ta: bool, b, tb: bool, beta: float, out, threaded: bool) -> None:
    """``out = op(a) @ op(b) + beta * out`` on the team: ``a``, ``b`` and ``out`` C-contiguous
    float32 stacks of matrices with the same leading shape (``op`` transposes when ``t*``),
    split over the team when ``threaded`` and the cores are free (``_spread``)."""
    m, n = out.shape[-2:]
    k = a.shape[-2] if ta else a.shape[-1]
    status = _Team.gemm(int(ta), int(tb), out.size // (m * n) if m * n else 0, m, n, k,
                        data_pointer(a), a.shape[-1], a.shape[-1] * a.shape[-2],
                        data_pointer(b), b.shape[-1], b.shape[-1] * b.shape[-2], beta,
                        data_pointer(out), n, m * n, _spread(threaded))
    if status != 0:
        raise RuntimeError("ptojax: the team GEMM was installed unbound (lower/host/loader.py)")


def _spread(threaded: bool) -> int:
    """Where a product runs: on the calling thread while operations run in pairs or the machine
    is busy; else where ``eval/foreign_threads.spread`` sends the team's work. (Products on the
    team hold OpenBLAS's threads aside, so ``follow_load`` is asked here: else a one-thread
    setting made while the machine was busy, or compiling, would outlive the load, leaving the
    user's own numpy products on one thread.)"""
    follow_load()
    if pinned() or machine_busy():
        return _CALLING_THREAD
    where = spread()
    if where is Spread.TEAM:
        return _TEAM if threaded else _CALLING_THREAD
    return _OPENBLAS_THREADS if where is Spread.OPENBLAS else _CALLING_THREAD


def matmul(a, b, out=None):
    """``a @ b`` (into ``out`` if given): on the OpenMP team once one is installed, for float32
    matrices or equal stacks of them; else numpy's, after ``follow_load``."""
    if _Team.gemm is not None and a.dtype == _F32 and b.dtype == _F32 \
            and 2 <= a.ndim == b.ndim <= 3 and a.shape[:-2] == b.shape[:-2] \
            and a.shape[-1] == b.shape[-2] and a.size and b.size \
            and (out is None or _writable_result(out, a, b)):
        shape = (*a.shape[:-1], b.shape[-1])
        result = np.empty(shape, _F32) if out is None else out
        a, ta = stored_matrices(a, False)
        b, tb = stored_matrices(b, False)
        team_gemm(a, ta, b, tb, 0.0, result, result.size * a.shape[-1 - ta] >= THREADED_MIN_FLOPS)
        return result
    if a.size * b.shape[-1] >= OPENBLAS_THREADED_MIN_MNK:
        follow_load()
    return a @ b if out is None else np.matmul(a, b, out=out)


def _writable_result(out, a, b) -> bool:
    return out.dtype == _F32 and out.flags.c_contiguous and out.flags.writeable \
        and out.shape == (*a.shape[:-1], b.shape[-1]) \
        and not np.may_share_memory(out, a) and not np.may_share_memory(out, b)
