"""Host kernels (numpy) of the decompositions: what ``numpy.linalg`` lacks — a triangular
solve (LAPACK trsm), LU with partial pivoting (getrf), the column order of QR with column
pivoting (geqp3), row swaps to a permutation — and JAX's convention for a factorization that
fails: NaNs for that matrix, where numpy raises for the whole stack.

Every kernel takes stacks of matrices (leading batch dimensions) and computes in the input's
precision, as LAPACK does; its Python loop runs over one matrix dimension, with the whole
stack updated at each step.
"""
from __future__ import annotations

import math

import numpy as np


def nan_on_failure(decompose, x) -> list:
    """``decompose(x)`` (a list of arrays over x's stack); a matrix it fails on (numpy's
    LinAlgError) gets NaNs in every output, the others their results."""
    try:
        return list(decompose(x))
    except np.linalg.LinAlgError:
        pass
    stand_in = np.broadcast_to(np.eye(*x.shape[-2:], dtype=x.dtype), x.shape)
    outs = [np.array(o) for o in decompose(stand_in)]
    for index in np.ndindex(*x.shape[:-2]):
        try:
            results = decompose(x[index])
        except np.linalg.LinAlgError:
            results = [np.full(o.shape[len(index):], np.nan, o.dtype) for o in outs]
        for o, r in zip(outs, results):
            o[index] = r
    return outs


def _swap_last(x):
    return np.swapaxes(x, -1, -2)


def triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """``op(A) X = B`` (``left_side``) or ``X op(A) = B``, reading only the ``lower`` (or
    upper) triangle of ``a`` (and not its diagonal when ``unit_diagonal``)."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t.copy()
        np.einsum("...ii->...i", t)[...] = 1
    if conjugate_a:
        t = np.conj(t)
    if transpose_a:
        t, lower = _swap_last(t), not lower
    if left_side:
        return _substitute(t, b, lower)
    # X T = B  <=>  T^T X^T = B^T
    return _swap_last(_substitute(_swap_last(t), _swap_last(b), not lower))


def _substitute(t, b, lower):
    """``T X = B`` for triangular ``T`` by forward (lower) or back substitution."""
    n = t.shape[-1]
    x = np.zeros(np.broadcast_shapes(t.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(t, b))
    for i in (range(n) if lower else reversed(range(n))):
        done = slice(0, i) if lower else slice(i + 1, n)
        known = (t[..., i:i + 1, done] @ x[..., done, :])[..., 0, :]
        x[..., i, :] = (b[..., i, :] - known) / t[..., i, i, None]
    return x


def _magnitude(x):
    """LAPACK's pivot size: ``|re| + |im|`` for complex values."""
    return np.abs(x.real) + np.abs(x.imag) if np.iscomplexobj(x) else np.abs(x)


# the column panel LU factors one column at a time; the rest of the matrix is updated once per
# panel by a triangular solve and a matrix product (LAPACK's blocked getrf)
LU_PANEL = 32


def lu(a):
    """``(lu, pivots, permutation)`` of ``P A = L U`` with partial pivoting, as LAPACK getrf:
    at step ``j`` the row of the largest ``|a[i, j]|`` (the first, on ties) moves up; a zero
    pivot leaves its column unscaled. ``lu`` holds ``U`` and the unit-lower ``L`` below the
    diagonal; ``pivots[j]`` is the row swapped with row ``j``; ``permutation`` is their
    product (``A[permutation] = L U``)."""
    *batch, m, n = a.shape
    k = min(m, n)
    work = np.array(a).reshape(math.prod(batch), m, n)
    pivots = np.zeros((work.shape[0], k), np.int32)
    permutation = np.tile(np.arange(m, dtype=np.int32), (work.shape[0], 1))
    for start in range(0, k, LU_PANEL):
        stop = min(start + LU_PANEL, k)
        _lu_panel(work, pivots, permutation, start, stop)
        if stop < n:
            unit_lower = np.tril(work[:, start:stop, start:stop], -1) + np.eye(stop - start,
                                                                              dtype=work.dtype)
            work[:, start:stop, stop:] = _substitute(unit_lower, work[:, start:stop, stop:],
                                                     True)
            # contiguous operands: numpy multiplies strided views without BLAS
            work[:, stop:, stop:] -= np.ascontiguousarray(work[:, stop:, start:stop]) @ \
                np.ascontiguousarray(work[:, start:stop, stop:])
    return (work.reshape(a.shape), pivots.reshape(*batch, k),
            permutation.reshape(*batch, m))


def _lu_panel(work, pivots, permutation, start, stop):
    """Columns ``start..stop-1`` by elimination, each pivot's row swap applied to whole rows."""
    stack = np.arange(work.shape[0])
    for j in range(start, stop):
        p = j + np.argmax(_magnitude(work[:, j:, j]), axis=1)
        pivots[:, j] = p
        work[stack, j], work[stack, p] = work[stack, p], work[stack, j].copy()
        permutation[stack, j], permutation[stack, p] = \
            permutation[stack, p], permutation[stack, j].copy()
        pivot = work[:, j, j, None]
        nonzero = pivot != 0
        work[:, j + 1:, j] = np.where(nonzero, work[:, j + 1:, j] / np.where(nonzero, pivot, 1),
                                      work[:, j + 1:, j])
        work[:, j + 1:, j + 1:stop] -= work[:, j + 1:, j, None] * work[:, j, None, j + 1:stop]


def pivots_to_permutation(pivots, size: int):
    """The permutation of ``range(size)`` made by swapping entry ``j`` with ``pivots[j]`` for
    each ``j`` in order (a pivot out of range is clamped into it)."""
    *batch, k = pivots.shape
    swaps = np.clip(pivots, 0, max(size - 1, 0)).reshape(math.prod(batch), k)
    stack = np.arange(swaps.shape[0])
    permutation = np.tile(np.arange(size, dtype=np.int32), (swaps.shape[0], 1))
    for j in range(k):
        p = swaps[:, j]
        permutation[stack, j], permutation[stack, p] = \
            permutation[stack, p], permutation[stack, j].copy()
    return permutation.reshape(*batch, size)


def qr_column_order(a):
    """The column order of QR with column pivoting (LAPACK geqp3): at step ``j`` the remaining
    column of largest norm below row ``j`` (the first, on ties) moves to position ``j``, then
    a Householder reflection clears column ``j`` below the diagonal."""
    *batch, m, n = a.shape
    work = np.array(a).reshape(math.prod(batch), m, n)
    stack = np.arange(work.shape[0])
    order = np.tile(np.arange(n, dtype=np.int32), (work.shape[0], 1))
    for j in range(min(m, n)):
        p = j + np.argmax(np.linalg.norm(work[:, j:, j:], axis=1), axis=1)
        work[stack, :, j], work[stack, :, p] = work[stack, :, p], work[stack, :, j].copy()
        order[stack, j], order[stack, p] = order[stack, p], order[stack, j].copy()
        _reflect(work[:, j:, j:])
    return order.reshape(*batch, n)


def _reflect(block):
    """Apply (in place) the Householder reflection that maps column 0 of each ``block`` to a
    multiple of the first unit vector."""
    v = block[:, :, 0].copy()
    alpha = v[:, 0]
    phase = np.where(alpha == 0, 1, alpha / np.where(alpha == 0, 1, np.abs(alpha)))
    v[:, 0] += phase * np.linalg.norm(v, axis=1)
    vv = np.sum(np.abs(v) ** 2, axis=1)
    scale = np.where(vv > 0, 2 / np.where(vv > 0, vv, 1), 0)
    block -= (scale[:, None] * v)[:, :, None] * np.einsum("bi,bij->bj", v.conj(), block)[:, None]
