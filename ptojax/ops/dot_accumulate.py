"""``dot_accumulate``: ``beta * acc + lhs' @ rhs'`` as one BLAS call that writes ``acc``'s buffer.

Operands ``(acc, lhs, rhs)``: ``lhs`` and ``rhs`` are matrices contracting one axis each, no
batch axes (``dimension_numbers`` as ``dot_general``'s), ``acc`` the product's shape and all
three one float dtype of BLAS's (``eval/blas.GEMM_DTYPES``); ``beta`` a Python float.

It is not a user-facing operation: the cpu backend forms it from ``add(mul(beta, acc),
dot_general(lhs, rhs))`` (and ``add(acc, dot_general(...))``, ``beta = 1``) after every
transform has run (``lower/host/accumulate.py``), so it has no jvp, batching, sharding or
tiling rules. Its in-place impl (the executor's ``in_place``, used when ``acc``'s buffer is
the executor's own and dies there: a loop's donated velocity carry) is the GEMM with ``beta``
into that buffer, so a momentum update's gradient is never written out; otherwise ``acc *
beta`` goes to a fresh buffer and the product is added into it. Both are the unfused
``beta * acc + dot`` up to float rounding (OpenBLAS's order of the sum, ``eval/blas.py``);
without OpenBLAS, numpy computes exactly that sum.
"""
from __future__ import annotations

import numpy as np

from ptojax.errors import DtypeError, ShapeError
from ptojax.eval.blas import GEMM_DTYPES, gemm
from ptojax.ir.types import TensorType
from ptojax.trace import Primitive, Unsupported

FORMED_LATE = ("formed by the cpu backend after every transform ran "
               "(lower/host/accumulate.py); transform the program before it is compiled")


def _contractions(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    if lb or rb or len(lc) != 1 or len(rc) != 1 or lc[0] not in (0, 1) or rc[0] not in (0, 1):
        raise ShapeError(f"dot_accumulate: dimension_numbers {dimension_numbers} must contract "
                         f"one axis of each matrix, with no batch axes")
    return lc[0], rc[0]


def _dot_accumulate_abstract(acc, lhs, rhs, dimension_numbers, beta):
    lc, rc = _contractions(dimension_numbers)
    if lhs.ndim != 2 or rhs.ndim != 2:
        raise ShapeError(f"dot_accumulate: operands must be matrices, got {lhs} and {rhs}")
    if not acc.dtype == lhs.dtype == rhs.dtype or acc.dtype not in GEMM_DTYPES:
        raise DtypeError(f"dot_accumulate: operands must share one of "
                         f"{sorted(str(d) for d in GEMM_DTYPES)}, got {acc}, {lhs}, {rhs}")
    if lhs.shape[lc] != rhs.shape[rc]:
        raise ShapeError(f"dot_accumulate: contracted sizes differ: {lhs} axis {lc}, "
                         f"{rhs} axis {rc}")
    shape = (lhs.shape[1 - lc], rhs.shape[1 - rc])
    if acc.shape != shape:
        raise ShapeError(f"dot_accumulate: accumulator {acc} is not the product's shape {shape}")
    return TensorType(shape, acc.dtype, acc.weak_type)


def _product(lhs, rhs, lc, rc):
    return (lhs.T if lc == 0 else lhs) @ (rhs.T if rc == 1 else rhs)


def _dot_accumulate_in_place(acc, lhs, rhs, dimension_numbers, beta):
    """Into ``acc``'s buffer (the executor's own, dead after this; a fresh one if that
    cannot be written or is not C-contiguous)."""
    if not acc.flags.writeable or not acc.flags.c_contiguous:
        return _dot_accumulate(acc, lhs, rhs, dimension_numbers, beta)
    lc, rc = _contractions(dimension_numbers)
    if not gemm(acc, lhs, rhs, lc, rc, beta):
        product = _product(lhs, rhs, lc, rc)
        if beta != 1.0:
            np.multiply(acc, acc.dtype.type(beta), out=acc)
        np.add(acc, product, out=acc)
    return acc


def _dot_accumulate(acc, lhs, rhs, dimension_numbers, beta):
    out = np.empty(acc.shape, acc.dtype)     # C-contiguous, whatever acc's layout
    if beta != 1.0:
        np.multiply(acc, acc.dtype.type(beta), out=out)
    else:
        np.copyto(out, acc)
    return _dot_accumulate_in_place(out, lhs, rhs, dimension_numbers, 1.0)


def _dot_accumulate_flops(eqn) -> int:
    acc, lhs = eqn.inputs[0].type, eqn.inputs[1].type
    return 2 * acc.size * lhs.size // acc.shape[0] + 2 * acc.size


def _dot_accumulate_reference(jnp, lax):
    def run(acc, lhs, rhs, dimension_numbers, beta):
        product = lax.dot_general(lhs, rhs, dimension_numbers, lax.Precision.HIGHEST)
        return acc * acc.dtype.type(beta) + product if beta != 1.0 else acc + product
    return run


# the impl allocates its result; the in-place impl returns its first operand's buffer
dot_accumulate_p = Primitive("dot_accumulate", _dot_accumulate_abstract, _dot_accumulate,
                             fresh_outputs=True, in_place=_dot_accumulate_in_place)
dot_accumulate_p.define(
    jvp=Unsupported(FORMED_LATE), batch=Unsupported(FORMED_LATE),
    shard=Unsupported(FORMED_LATE),
    tile=Unsupported("a BLAS call kept as a tensor op between kernels"),
    cost=_dot_accumulate_flops, reference=_dot_accumulate_reference)
