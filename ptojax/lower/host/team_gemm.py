"""Matrix products of a compiled program run on the kernels' OpenMP team.

numpy's OpenBLAS runs a product on its own pthreads and the host kernels run on OpenMP's
threads. On two cores the idle pool spins or sleeps while the other works, so a train step
that alternates products and kernels keeps waking one pool next to the other's busy-waiting
threads: a VAE step's momentum updates ran slower on two threads than on one (174 vs 150 us),
and with spinning OpenMP workers next to OpenBLAS's a product took up to 13x its time. XLA
has one pool. So does a compiled program here: its products are split over the OpenMP team
(``include/pto_host_team_gemm.h``), each member calling numpy's own ``cblas_?gemm`` with
OpenBLAS held at one thread for that call (``openblas_set_num_threads_local``, OpenBLAS
0.3.27 and later; restored after). Without such an OpenBLAS the products stay on numpy.

Which equations: a ``dot_general`` of float32 operands and result,
whose batch axes lead both operands in order and whose last two axes hold one contracting
axis each (``x @ w``, ``x.T @ g``, ``g @ w.T``, their batched forms), of static nonzero
sizes; and ``dot_accumulate`` (``beta * acc + x.T @ g``, ``lower/host/accumulate.py``),
written into ``acc``'s buffer when the executor owns it and it dies there. An operand whose
last two axes are transposed in memory is read as it is (the transpose flag flips); another
layout is copied first.

A product splits over the team when it has ``THREADED_MIN_FLOPS`` multiply-adds and the
machine is neither busy nor running operations in pairs (``eval/machine_load.py``), as the
kernels do; else it runs on the calling thread. Numerics: BLAS's sums, but a split call's
share may take another BLAS kernel than the whole would, so the last bits can differ from
numpy's matmul.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np

from ptojax.eval.machine_load import THREADED_MIN_FLOPS, machine_busy, pinned
from ptojax.eval.pointers import data_pointer
from ptojax.ops.dot_accumulate import dot_accumulate_p
from ptojax.ops.linalg import dot_general_p

EXPORTS = ("pto_host_team_gemm.h",)
F32 = np.dtype(np.float32)


class Layout(NamedTuple):
    """A product's form: ``batch`` leading axes; ``lhs_contracting``/``rhs_contracting`` the
    contracting axis among each operand's last two (0 or 1)."""
    batch: int
    lhs_contracting: int
    rhs_contracting: int


def team_layout(eqn) -> Optional[Layout]:
    """The layout of ``eqn`` if the team runs it (see the module docstring), else None."""
    if eqn.prim is dot_accumulate_p:
        operands = eqn.inputs[1:]
    elif eqn.prim is dot_general_p:
        operands = eqn.inputs
        preferred = eqn.params.get("preferred_element_type")
        if preferred is not None and np.dtype(preferred) != eqn.outputs[0].type.dtype:
            return None
    else:
        return None
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    types = [a.type for a in (*eqn.inputs, *eqn.outputs)]
    if any(t.dtype != F32 for t in types):
        return None
    if any(type(d) is not int or d == 0 for t in types for d in t.shape):
        return None
    nb = len(lb)
    lhs, rhs = (a.type for a in operands)
    if tuple(lb) != tuple(range(nb)) or tuple(rb) != tuple(range(nb)) or len(lc) != 1 \
            or lhs.ndim != nb + 2 or rhs.ndim != nb + 2 or lc[0] < nb or rc[0] < nb:
        return None
    return Layout(nb, lc[0] - nb, rc[0] - nb)


def team_runners(library, eqns) -> dict:
    """{equation among ``eqns`` the team runs: its runner}; empty when ``library`` has no
    team product (no such equation, or no OpenBLAS to call)."""
    if library.team_gemm is None:
        return {}
    runners = {}
    for eqn in eqns:
        layout = team_layout(eqn)
        if layout is not None:
            runners[eqn] = (_accumulating if eqn.prim is dot_accumulate_p else _product)(
                library.team_gemm, eqn, layout)
    return runners


class _Call(NamedTuple):
    """One product's fixed arguments: sizes, whether it may split over the team."""
    batch: int
    m: int
    n: int
    k: int
    threaded: bool


def _call_of(eqn, layout: Layout, lhs_type, rhs_type) -> _Call:
    nb = layout.batch
    m = lhs_type.shape[nb + 1 - layout.lhs_contracting]
    k = lhs_type.shape[nb + layout.lhs_contracting]
    n = rhs_type.shape[nb + 1 - layout.rhs_contracting]
    batch = math.prod(lhs_type.shape[:nb])
    return _Call(batch, m, n, k, batch * m * n * k >= THREADED_MIN_FLOPS)


def _matrices(a, transposed: bool):
    """``(array, transposed)``: ``a`` read in place, or with its last two axes swapped when
    only that is C-contiguous (the flag flips), else a C-contiguous copy."""
    if not a.flags.c_contiguous:
        swapped = np.swapaxes(a, -1, -2)
        if swapped.flags.c_contiguous:
            return swapped, not transposed
        a = np.ascontiguousarray(a)
    return a, transposed


def _gemm(gemm, call: _Call, a, ta: bool, b, tb: bool, beta: float, out) -> None:
    """``out = op(a) op(b) + beta * out`` for C-contiguous ``a``, ``b`` and ``out``."""
    parallel = call.threaded and not pinned() and not machine_busy()
    status = gemm(int(ta), int(tb), call.batch, call.m, call.n, call.k,
                  data_pointer(a), a.shape[-1], a.shape[-1] * a.shape[-2],
                  data_pointer(b), b.shape[-1], b.shape[-1] * b.shape[-2], beta,
                  data_pointer(out), call.n, call.m * call.n, int(parallel))
    if status != 0:
        raise RuntimeError("ptojax: a kernel library's team products were not bound to "
                           "numpy's BLAS (lower/host/loader.py)")


def _operands(layout: Layout, lhs, rhs):
    return (*_matrices(lhs, layout.lhs_contracting == 0),
            *_matrices(rhs, layout.rhs_contracting == 1))


def _product(gemm, eqn, layout: Layout):
    """``run(lhs, rhs)`` for ``dot_general`` ``eqn``. A product of few rows by a transposed
    matrix (``g @ w.T``) runs as ``(w @ g.T).T``, as numpy's impl does (``ops/linalg.
    _swap_pays``: OpenBLAS is ~1.5x slower on the first form); its result is then that
    transposed view."""
    call = _call_of(eqn, layout, eqn.inputs[0].type, eqn.inputs[1].type)
    swapped = call._replace(m=call.n, n=call.m)
    shape = eqn.outputs[0].type.shape
    empty = np.empty

    def run(lhs, rhs):
        a, ta, b, tb = _operands(layout, lhs, rhs)
        if tb and call.batch == 1 and 4 * call.m <= call.n:
            out = empty((call.n, call.m), F32)
            _gemm(gemm, swapped, b, not tb, a, not ta, 0.0, out)
            return out.T
        out = empty(shape, F32)
        _gemm(gemm, call, a, ta, b, tb, 0.0, out)
        return out
    return run


def _accumulating(gemm, eqn, layout: Layout, into_acc: bool = False):
    """``run(acc, lhs, rhs)`` for ``dot_accumulate`` ``eqn``: into a fresh buffer, or (the
    executor's ``writing_into({0: 0})``) into ``acc``'s when that can be written."""
    call = _call_of(eqn, layout, eqn.inputs[1].type, eqn.inputs[2].type)
    beta = eqn.params["beta"]

    def run(acc, lhs, rhs):
        if into_acc and acc.flags.writeable and acc.flags.c_contiguous \
                and not np.may_share_memory(acc, lhs) and not np.may_share_memory(acc, rhs):
            _gemm(gemm, call, *_operands(layout, lhs, rhs), beta, acc)
            return acc
        out = np.empty(acc.shape, F32)
        np.multiply(acc, np.float32(beta), out=out) if beta != 1.0 else np.copyto(out, acc)
        _gemm(gemm, call, *_operands(layout, lhs, rhs), 1.0, out)
        return out
    if not into_acc:
        run.alias_pairs = ((0, 0),)
        run.writing_into = lambda chosen: _accumulating(gemm, eqn, layout, chosen == {0: 0})
    return run
