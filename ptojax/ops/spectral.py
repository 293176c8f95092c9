"""The symmetric eigendecomposition ``eigh`` and the singular value decomposition ``svd``
(JAX's ``lax.linalg`` primitives, their derivative rules, costs and JAX references). See
``decompositions.py`` for what all the decompositions share."""
from __future__ import annotations


import numpy as np

from ptojax.errors import ShapeError, UnsupportedError
from ptojax.ir.types import TensorType
from ptojax.ops import lapack
from ptojax.ops.arithmetic import add, div, integer_pow, mul, sub
from ptojax.ops.convert import convert_element_type
from ptojax.ops.logic import eq
from ptojax.ops.matrix import (by_column, by_row, diag_matrix, diagonal, eye,
                               matrix_transpose as mT, matmul, symmetrize)
from ptojax.ops.tangents import Zero, is_zero
from ptojax.trace import Primitive
from ptojax.ops.decomposition_facts import (_define, _matrix_type, _stack_size, check_operand,
                                            require_matrices)


# eigh ------------------------------------------------------------------------------------------
def _eigh_abstract(x, *, lower, sort_eigenvalues, subset_by_index):
    require_matrices("eigh", x, square=True)
    n = x.shape[-1]
    lo, hi = _subset(subset_by_index, n, "eigh")
    return _weak_as(x, [_matrix_type(x, (n, hi - lo)),
                        TensorType((*x.shape[:-2], hi - lo), x.dtype)])


def _weak_as(x, types):
    """``types`` with ``x``'s weak type: eigh's and svd's results keep a weak operand weak,
    as JAX's."""
    return [t.update(weak_type=x.weak_type) for t in types]


def _subset(subset_by_index, n, name):
    if subset_by_index is None:
        return 0, n
    lo, hi = subset_by_index
    if not 0 <= lo <= hi <= n:
        raise ShapeError(f"{name}: subset_by_index {subset_by_index} must be a range within "
                         f"(0, {n})")
    return lo, hi


def _eigh(x, *, lower, sort_eigenvalues, subset_by_index):
    def decompose(a):
        w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
        return [v, w]
    v, w = lapack.nan_on_failure(decompose, x)
    lo, hi = _subset(subset_by_index, x.shape[-1], "eigh")
    return [v[..., lo:hi], w[..., lo:hi]]


eigh_p = Primitive("eigh", _eigh_abstract, _eigh, multiple_results=True)


def _full_range(subset_by_index, n, what):
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        raise UnsupportedError(f"derivatives of {what} are defined for the full decomposition "
                               f"only (as in JAX); drop subset_by_index={subset_by_index}")


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index):
    """Non-degenerate perturbation theory, as JAX: with ``C = V^T dA V``,
    ``dw = diag(C)`` and ``dV = V (F * C)``, ``F[i, j] = 1 / (w[j] - w[i])`` off the
    diagonal and 0 on it. (JAX decomposes the symmetrized matrix here.)"""
    (a,), (t,) = primals, tangents
    n = a.shape[-1]
    _full_range(subset_by_index, n, "eigh")
    v, w = outs = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                              subset_by_index=subset_by_index)
    if is_zero(t):
        return outs, [Zero(v.aval), Zero(w.aval)]
    identity = eye(n, a.dtype, a.shape[:-2])
    w_cols = by_column(w, identity.shape)
    f = sub(integer_pow(sub(add(identity, w_cols), mT(w_cols)), -1), identity)
    c = matmul(matmul(mT(v), t), v)
    return outs, [matmul(v, mul(f, c)), diagonal(c)]


def _eigh_flops(eqn) -> int:
    """Tridiagonal reduction and the QR algorithm with vectors: about ``9 n^3``."""
    x = eqn.inputs[0].type
    return _stack_size(x) * 9 * x.shape[-1] ** 3


def _eigh_reference(jnp, lax):
    def run(x, lower, sort_eigenvalues, subset_by_index):
        return list(lax.linalg.eigh(x, lower=lower, symmetrize_input=False,
                                    sort_eigenvalues=sort_eigenvalues,
                                    subset_by_index=subset_by_index))
    return run


_define(eigh_p, _eigh_jvp, cost=_eigh_flops, reference=_eigh_reference)


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None):
    """``(v, w)``: the eigenvectors (columns of ``v``) and ascending eigenvalues ``w`` of each
    symmetric matrix. With ``symmetrize_input`` of ``(x + x^T) / 2``; without, only the
    ``lower`` (or upper) triangle is read. ``subset_by_index=(lo, hi)`` keeps eigenpairs
    ``lo..hi-1``."""
    check_operand("eigh", x, square=True)
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    v, w = eigh_p.bind(symmetrize(x) if symmetrize_input else x, lower=bool(lower),
                       sort_eigenvalues=bool(sort_eigenvalues), subset_by_index=subset)
    return v, w


# svd -------------------------------------------------------------------------------------------
def _svd_abstract(x, *, full_matrices, compute_uv, subset_by_index):
    require_matrices("svd", x)
    m, n = x.shape[-2:]
    k = min(m, n)
    if subset_by_index is not None and full_matrices and compute_uv and \
            tuple(subset_by_index) != (0, k):
        raise ShapeError("svd: full_matrices and subset_by_index cannot both be set")
    lo, hi = _subset(subset_by_index, k, "svd")
    s = TensorType((*x.shape[:-2], hi - lo), x.dtype)
    if not compute_uv:
        return _weak_as(x, [s])
    if full_matrices:
        return _weak_as(x, [s, _matrix_type(x, (m, m)), _matrix_type(x, (n, n))])
    return _weak_as(x, [s, _matrix_type(x, (m, hi - lo)), _matrix_type(x, (hi - lo, n))])


def _svd(x, *, full_matrices, compute_uv, subset_by_index):
    def decompose(a):
        if not compute_uv:
            return [np.linalg.svd(a, compute_uv=False)]
        u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
        return [s, u, vt]
    outs = lapack.nan_on_failure(decompose, x)
    if subset_by_index is None:
        return outs
    lo, hi = subset_by_index
    s = outs[0][..., lo:hi]
    if not compute_uv:
        return [s]
    if full_matrices:  # then the subset is everything
        return [s, *outs[1:]]
    return [s, outs[1][..., lo:hi], outs[2][..., lo:hi, :]]


svd_p = Primitive("svd", _svd_abstract, _svd, multiple_results=True)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index):
    """JAX's rule (Townsend's derivation for the thin SVD): with ``dS = U^T dA V``,
    ``ds = diag(dS)``; ``dU`` and ``dV`` from ``F[i, j] = 1 / (s[j]^2 - s[i]^2)`` plus the
    parts of ``dA`` outside the spans of ``U`` and ``V`` for non-square matrices."""
    (a,), (t,) = primals, tangents
    m, n = a.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise UnsupportedError("the derivative of svd with full_matrices=True is implemented "
                               "for square matrices only (as in JAX); pass "
                               "full_matrices=False")
    _full_range(subset_by_index, min(m, n), "svd")
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True, subset_by_index=None)
    outs = [s, u, vt] if compute_uv else [s]
    if is_zero(t):
        return outs, [Zero(o.aval) for o in outs]
    v = mT(vt)
    ds_mat = matmul(matmul(mT(u), t), v)
    ds = diagonal(ds_mat)
    if not compute_uv:
        return outs, [ds]
    k = s.shape[-1]
    identity = eye(k, a.dtype, a.shape[:-2])
    s_cols, s_rows = by_column(s, identity.shape), by_row(s, identity.shape)
    f = sub(div(1, add(mul(add(s_cols, s_rows), sub(s_cols, s_rows)), identity)), identity)
    s_zero = convert_element_type(eq(s, 0), s.dtype)
    s_inv = sub(div(1, add(s, s_zero)), s_zero)
    dss, sds = mul(s_cols, ds_mat), mul(s_rows, ds_mat)
    du_dv_diag = mul(mul(sub(ds_mat, mT(ds_mat)), 0.5), diag_matrix(s_inv))
    du = matmul(u, add(mul(f, add(dss, mT(dss))), du_dv_diag))
    dv = matmul(v, mul(f, add(sds, mT(sds))))
    if m > n:
        dav = matmul(t, v)
        du = add(du, div(sub(dav, matmul(u, matmul(mT(u), dav))), by_column(s, dav.shape)))
    if n > m:
        dahu = matmul(mT(t), u)
        dv = add(dv, div(sub(dahu, matmul(v, matmul(vt, dahu))), by_column(s, dahu.shape)))
    return outs, [ds, du, mT(dv)]


def _svd_flops(eqn) -> int:
    """Golub & Van Loan's counts for ``M x k``: ``4 M k^2 - 4 k^3 / 3`` for the singular
    values, ``14 M k^2 + 8 k^3`` with the vectors."""
    m, n = eqn.inputs[0].type.shape[-2:]
    big, k = max(m, n), min(m, n)
    each = 14 * big * k * k + 8 * k ** 3 if eqn.params["compute_uv"] else \
        4 * big * k * k - 4 * k ** 3 / 3
    return _stack_size(eqn.inputs[0].type) * round(each)


def _svd_reference(jnp, lax):
    def run(x, full_matrices, compute_uv, subset_by_index):
        out = lax.linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv,
                             subset_by_index=subset_by_index)
        if not compute_uv:
            return [out]
        u, s, vt = out
        return [s, u, vt]
    return run


_define(svd_p, _svd_jvp, cost=_svd_flops, reference=_svd_reference)


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None):
    """``(u, s, vt)`` with ``x = u diag(s) vt`` and ``s`` descending (only ``s`` without
    ``compute_uv``); ``u`` is ``(m, m)`` and ``vt`` ``(n, n)`` with ``full_matrices``, else
    ``(m, k)`` and ``(k, n)``, ``k = min(m, n)``."""
    subset = None if subset_by_index is None else tuple(int(i) for i in subset_by_index)
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                      subset_by_index=subset)
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt
