"""``pnp.linalg`` decompositions: cholesky, eigh/eigvalsh, svd/svdvals, qr and their result
tuples; the checks on matrix operands and the diagonal/trace views."""
from __future__ import annotations

from typing import NamedTuple

from ptojax import dtypes, lax
from ptojax.errors import ShapeError
from ptojax.numpy._promote import promote_inexact
from ptojax.numpy.manipulation import diagonal as _diagonal, expand_dims
from ptojax.numpy.math import abs, sign
from ptojax.numpy.reductions import sum
from ptojax.numpy.sorting import sort
from ptojax.ops import decompositions as dec
from ptojax.ops.matrix import conjugate_transpose, matrix_transpose as mT, take_columns
from ptojax.source_info import user_frame


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


# operands --------------------------------------------------------------------------------------
def _require_square(op, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{op}: needs square matrices of shape (..., n, n), got {a.aval}",
                         user_frame())


def _require_matrices(op, a):
    if a.ndim < 2:
        raise ShapeError(f"{op}: needs matrices of shape (..., m, n), got {a.aval}",
                         user_frame())


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices in the last two dimensions."""
    return _diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """The sums of the diagonals of the matrices in the last two dimensions."""
    return sum(_diagonal(x, offset, -2, -1), axis=-1, dtype=dtype)


# decompositions --------------------------------------------------------------------------------
def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor of symmetric (complex: Hermitian) positive-definite matrices: lower
    ``L`` with ``a = L L^H`` (upper ``L^H`` with ``upper``); NaNs where ``a`` is not positive
    definite."""
    (a,) = promote_inexact("cholesky", a)
    _require_square("linalg.cholesky", a)
    lower = dec.cholesky(a, symmetrize_input=symmetrize_input)
    return conjugate_transpose(lower) if upper else lower


def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices. With
    ``symmetrize_input`` both triangles are used (``(a + a^T) / 2``); without, only the
    ``UPLO`` one ('L', the default, or 'U')."""
    lower = _lower("eigh", UPLO)
    (a,) = promote_inexact("eigh", a)
    _require_square("linalg.eigh", a)
    v, w = dec.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def _lower(op, UPLO):
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"{op}: UPLO must be one of None, 'L' or 'U', got {UPLO!r}")


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """The eigenvalues (ascending) of symmetric matrices."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """``(U, S, Vh)`` with ``a = U diag(S) Vh`` and ``S`` descending (``S`` alone without
    ``compute_uv``). ``hermitian`` matrices go through ``eigh``."""
    (a,) = promote_inexact("svd", a)
    _require_matrices("linalg.svd", a)
    if hermitian:
        return _hermitian_svd(a, compute_uv, subset_by_index)
    if compute_uv:
        u, s, vh = dec.svd(a, full_matrices=full_matrices, compute_uv=True,
                           subset_by_index=subset_by_index)
        return SVDResult(u, s, vh)
    return dec.svd(a, full_matrices=full_matrices, compute_uv=False,
                   subset_by_index=subset_by_index)


def _hermitian_svd(a, compute_uv, subset_by_index):
    """The singular values of a symmetric matrix are its eigenvalues' magnitudes; the vectors
    are its eigenvectors, ``Vh`` taking the eigenvalues' signs (as JAX)."""
    vectors, values = dec.eigh(a, subset_by_index=subset_by_index)
    s = abs(values)
    last = s.ndim - 1
    if not compute_uv:
        return lax.rev(sort(s, axis=-1), (last,))
    order = lax.broadcasted_iota(dtypes.int32, s.shape, last)
    s, order, signs = (lax.rev(x, (last,)) for x in
                       lax.sort((s, order, sign(values)), dimension=last, num_keys=1))
    u = take_columns(vectors, order)
    return SVDResult(u, s, mT(u * expand_dims(signs, -2)))


def svdvals(x, /):
    """The singular values, descending."""
    return svd(x, compute_uv=False, hermitian=False)


def qr(a, mode="reduced"):
    """``(Q, R)`` with ``a = Q R``: ``mode`` 'reduced' (``Q`` is ``(m, k)``), 'complete'
    (``(m, m)``), 'r' (``R`` only) or 'raw' (LAPACK's Householder form, transposed, and the
    reflectors' scales)."""
    (a,) = promote_inexact("qr", a)
    _require_matrices("linalg.qr", a)
    if mode == "raw":
        h, taus = dec.geqrf(a)
        return QRResult(mT(h), taus)
    if mode not in ("reduced", "r", "full", "complete"):
        raise ValueError(f"linalg.qr: unsupported mode {mode!r} (use 'reduced', 'complete', "
                         f"'r' or 'raw')")
    q, r = dec.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)
