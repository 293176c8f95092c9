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
is none (another BLAS), ``gemm`` returns False and callers compute the same with numpy.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

from ptojax.eval.machine_load import (OPENBLAS_NAMINGS, OPENBLAS_THREADED_MIN_MNK,
                                      follow_load, openblas_libraries)
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


def _operand(a):
    """``(matrix, flipped)``: ``a`` or, when only its transpose is C-contiguous, ``a.T``
    (``flipped``), so BLAS reads it in place; else a C-contiguous copy."""
    if not a.flags.c_contiguous and a.T.flags.c_contiguous:
        return a.T, True
    return np.ascontiguousarray(a), False


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
    a, flipped_a = _operand(lhs)
    b, flipped_b = _operand(rhs)
    trans_a = flipped_a != (lhs_contracting == 0)
    trans_b = flipped_b != (rhs_contracting == 1)
    m, n = c.shape
    k = lhs.shape[lhs_contracting]
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
