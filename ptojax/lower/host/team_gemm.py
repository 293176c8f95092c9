"""Products run on the kernels' OpenMP team (``$PTOJAX_ONE_THREAD_POOL``, off by default): a
compiled program's, and (``eval/blas.matmul``) every float32 product ptojax computes.

numpy's OpenBLAS runs a product on its own pthreads and the host kernels run on OpenMP's
threads. On two cores the idle pool spins or sleeps while the other works, so a train step
that alternates products and kernels keeps waking one pool next to the other's busy-waiting
threads: a VAE step's momentum updates ran slower on two threads than on one (174 vs 150 us),
and with spinning OpenMP workers beside OpenBLAS's a product took up to 13x its time. XLA has
one pool. With the setting on, so does ptojax: every kernel library has a GEMM
(``include/pto_host_team_gemm.h``) that splits a product over the OpenMP team, each member
calling numpy's own ``cblas_sgemm`` with OpenBLAS held at one thread meanwhile
(``openblas_set_num_threads_local``, OpenBLAS 0.3.27 and later; restored after). The first
library loaded installs it (``eval/blas.decide_team``), and the OpenMP workers then spin
briefly between regions instead of sleeping at once (``compiler.openmp_wait_policy``).
Measured on the quiet 2-core machine, alternating fresh processes:
the VAE step 2.9-3.7 ms against 3.8-4.7 ms with two pools, its epoch 127-148 against 150-219 ms
(in slower minutes of the VM the two came out even).

The user's own numpy products between ptojax's calls wake OpenBLAS's threads, which then spin
beside the team for ~0.1 s (a 128-row MLP step right after a numpy reference step took
7.7-17.9 ms against 3.5 ms with two pools). So the other threads' CPU time is watched
(``eval/foreign_threads.py``): while they are busy, products go to OpenBLAS's own threads and
kernels to the calling thread, and a probe brings the team back once they have gone quiet.
With that, ``benchmarks/kernels.py``'s MLP row, which times a numpy step between ptojax's,
is 0.84x JAX (it was 2.6-2.8x). It stays off by default: split over the team, a product of few
rows takes longer than on OpenBLAS's threads (32x512 @ 512x784: 190-225 us against 166 us;
ideal, two 1-thread halves at once, 181 us), and in a VAE epoch that made the loop slower.

Here: the runners a compiled program calls for its products, without the numpy impl's
bookkeeping. Which equations: a ``dot_general`` of float32 operands and result, whose batch
axes lead both operands in order and whose last two axes hold one contracting axis each
(``x @ w``, ``x.T @ g``, ``g @ w.T``, their batched forms), of static nonzero sizes; and
``dot_accumulate`` (``beta * acc + x.T @ g``, ``lower/host/accumulate.py``), written into
``acc``'s buffer when the executor owns it and it dies there. An operand whose last two axes
are transposed in memory is read as it is (the transpose flag flips); another layout is
copied first.

A product splits over the team when it has ``THREADED_MIN_FLOPS`` multiply-adds, the
machine is neither busy nor running operations in pairs (``eval/machine_load.py``) and no other
thread of the process is busy (``eval/foreign_threads.py``: then on OpenBLAS's threads); else
it runs on the calling thread. Numerics: BLAS's sums, but a split call's
share may take another BLAS kernel than the whole would, so the last bits can differ from
numpy's matmul.
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np

from ptojax.eval.blas import team_gemm, team_installed, stored_matrices
from ptojax.eval.machine_load import THREADED_MIN_FLOPS
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
    else:
        return None
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    types = [a.type for a in (*eqn.inputs, *eqn.outputs)]
    if any(t.dtype != F32 for t in types):     # (a preferred other type: the result's)
        return None
    if any(type(d) is not int or d == 0 for t in types for d in t.shape):
        return None
    nb = len(lb)
    lhs, rhs = (a.type for a in operands)
    if tuple(lb) != tuple(range(nb)) or tuple(rb) != tuple(range(nb)) or len(lc) != 1 \
            or lhs.ndim != nb + 2 or rhs.ndim != nb + 2 or lc[0] < nb or rc[0] < nb:
        return None
    return Layout(nb, lc[0] - nb, rc[0] - nb)


def team_runners(eqns) -> dict:
    """{equation among ``eqns`` the team runs: its runner}; empty until a library installed
    the team's GEMM (``eval/blas.py``: none has it without an OpenBLAS to call)."""
    if not team_installed():
        return {}
    runners = {}
    for eqn in eqns:
        layout = team_layout(eqn)
        if layout is not None:
            runners[eqn] = (_accumulating if eqn.prim is dot_accumulate_p else _product)(
                eqn, layout)
    return runners


class _Call(NamedTuple):
    """One product's fixed sizes and whether it may split over the team."""
    m: int
    n: int
    threaded: bool


def _call_of(layout: Layout, lhs_type, rhs_type) -> _Call:
    nb = layout.batch
    m = lhs_type.shape[nb + 1 - layout.lhs_contracting]
    k = lhs_type.shape[nb + layout.lhs_contracting]
    n = rhs_type.shape[nb + 1 - layout.rhs_contracting]
    return _Call(m, n, math.prod(lhs_type.shape[:nb]) * m * n * k >= THREADED_MIN_FLOPS)


def _operands(layout: Layout, lhs, rhs):
    return (*stored_matrices(lhs, layout.lhs_contracting == 0),
            *stored_matrices(rhs, layout.rhs_contracting == 1))


def _product(eqn, layout: Layout):
    """``run(lhs, rhs)`` for ``dot_general`` ``eqn``. A product of few rows by a transposed
    matrix (``g @ w.T``) runs as ``(w @ g.T).T``, as numpy's impl does (``ops/linalg.
    _swap_pays``: OpenBLAS is ~1.5x slower on the first form); its result is then that
    transposed view."""
    call = _call_of(layout, eqn.inputs[0].type, eqn.inputs[1].type)
    shape = eqn.outputs[0].type.shape
    swaps = layout.batch == 0 and layout.rhs_contracting == 1 and 4 * call.m <= call.n
    empty = np.empty

    def run(lhs, rhs):
        a, ta, b, tb = _operands(layout, lhs, rhs)
        if swaps and tb:
            out = empty((call.n, call.m), F32)
            team_gemm(b, not tb, a, not ta, 0.0, out, call.threaded)
            return out.T
        out = empty(shape, F32)
        team_gemm(a, ta, b, tb, 0.0, out, call.threaded)
        return out
    return run


def _accumulating(eqn, layout: Layout, into_acc: bool = False):
    """``run(acc, lhs, rhs)`` for ``dot_accumulate`` ``eqn``: into a fresh buffer, or (the
    executor's ``writing_into({0: 0})``) into ``acc``'s when that can be written."""
    threaded = _call_of(layout, eqn.inputs[1].type, eqn.inputs[2].type).threaded
    beta = eqn.params["beta"]

    def run(acc, lhs, rhs):
        if into_acc and acc.flags.writeable and acc.flags.c_contiguous \
                and not np.may_share_memory(acc, lhs) and not np.may_share_memory(acc, rhs):
            team_gemm(*_operands(layout, lhs, rhs), beta, acc, threaded)
            return acc
        out = np.empty(acc.shape, F32)
        np.multiply(acc, np.float32(beta), out=out) if beta != 1.0 else np.copyto(out, acc)
        team_gemm(*_operands(layout, lhs, rhs), 1.0, out, threaded)
        return out
    if not into_acc:
        run.alias_pairs = ((0, 0),)
        run.writing_into = lambda chosen: _accumulating(eqn, layout, chosen == {0: 0})
    return run
