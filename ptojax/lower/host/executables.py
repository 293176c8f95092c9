"""``make_executable``: what ``jit`` runs an optimized IR with, on the backend asked for."""
from __future__ import annotations

from ptojax.eval.executable import Executable
from ptojax.ir.core import ClosedIR
from ptojax.ir.symbolic import has_symbolic_shapes
from ptojax.lower.host.backend import BACKENDS, CpuBackend, HostExecutable
from ptojax.lower.host.symbolic import SymbolicExecutable


def make_executable(optimized: ClosedIR, backend=None):
    """The executable ``jit`` runs ``optimized`` with on ``backend``: the numpy executor
    (``"interpreter"``), or the cpu backend's tiered host kernels (``"cpu"``, None, a
    ``CpuBackend``) — for a program with symbolic dimensions, one program for every size plus
    a static one per bucket where it measures faster (``lower/host/symbolic.py``)."""
    if backend == "interpreter":
        return Executable(optimized)
    if backend is None or backend == "cpu":
        backend = CpuBackend()
    if not isinstance(backend, CpuBackend):
        raise ValueError(f"unknown backend {backend!r}; available: {', '.join(BACKENDS)} or a "
                         f"ptojax.lower.host.backend.CpuBackend(...)")
    if has_symbolic_shapes(optimized.ir):
        return SymbolicExecutable(optimized, backend)
    return HostExecutable(optimized, backend)
