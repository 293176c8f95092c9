"""Two operations of a host program at once on the OpenMP team, in one C call.

With the products on the kernels' OpenMP team (``team_gemm.py``, one pool), a pair of
independent operations (``pairing.py``: a layer's weight and input gradients, a momentum
update beside the next layer's product) runs as ``ptojax_run_pair``
(``include/pto_host_team_gemm.h``): one team member runs each, a kernel's blocks on its thread
and a product as one BLAS call at one thread. The handoff is the team's own (its workers spin
between regions), where a Python helper thread would take 20-40 us each way and would spin
beside the team's workers.

Each side is prepared first (``prepare(*args) -> (step, result, keep)``: its outputs allocated,
its call's arguments as a ``PairStep``, and the objects the step points into, kept alive until
the call returns).
"""
from __future__ import annotations

import ctypes

_size, _pointer = ctypes.c_longlong, ctypes.c_void_p
KERNEL, PRODUCT = 0, 1


class PairStep(ctypes.Structure):
    """``struct PairStep`` of ``pto_host_team_gemm.h``."""
    _fields_ = [("kind", ctypes.c_int), ("ta", ctypes.c_int), ("tb", ctypes.c_int),
                ("launch", _pointer), ("args", _pointer), ("blocks", _size),
                ("batch", _size), ("m", _size), ("n", _size), ("k", _size),
                ("a", _pointer), ("lda", _size), ("a_step", _size),
                ("b", _pointer), ("ldb", _size), ("b_step", _size),
                ("beta", ctypes.c_float),
                ("c", _pointer), ("ldc", _size), ("c_step", _size)]


def kernel_step(launch_address: int, argv, blocks: int) -> PairStep:
    """A kernel launcher's call: its argument vector ``argv`` (a ctypes array of pointers)."""
    return PairStep(kind=KERNEL, launch=launch_address,
                    args=ctypes.cast(argv, _pointer).value, blocks=blocks)


def product_step(ta, tb, batch, m, n, k, a, lda, a_step, b, ldb, b_step, beta, c, ldc,
                 c_step) -> PairStep:
    """A product ``ptojax_team_gemm`` would run, at one thread (pointers as integers)."""
    return PairStep(kind=PRODUCT, ta=int(ta), tb=int(tb), batch=batch, m=m, n=n, k=k,
                    a=a, lda=lda, a_step=a_step, b=b, ldb=ldb, b_step=b_step, beta=beta,
                    c=c, ldc=ldc, c_step=c_step)


def bind_run_pair(dll):
    """``run(first, second) -> status`` of the library ``dll``, or None when it has none (a
    library built by an older ptojax)."""
    fn = getattr(dll, "ptojax_run_pair", None)
    if fn is None:
        return None
    fn.restype = ctypes.c_int
    fn.argtypes = (ctypes.POINTER(PairStep), ctypes.POINTER(PairStep))
    return lambda first, second: fn(ctypes.byref(first), ctypes.byref(second))
