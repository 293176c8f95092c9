"""``pnp.linalg``: JAX's ``jax.numpy.linalg`` over the decomposition primitives
(``ops/decompositions.py``), with its names, signatures, dtypes and derivative rules.

Integer and bool inputs become float32 (64-bit integers float64); float16/bfloat16 matrices
are refused by the decompositions (LAPACK has no such routines), as in JAX. Stacks of
matrices broadcast like NumPy's. Derivatives follow JAX: ``solve`` (and so ``inv``) reuses
its LU factors for the tangent (JAX's ``custom_linear_solve``), ``det``, ``slogdet`` and
``pinv`` have JAX's custom JVP rules, and the rest differentiate by composition.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import NamedTuple

import numpy as np

from ptojax import dtypes, lax
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.errors import DtypeError, ShapeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, broadcast_shapes, convert, promote_inexact
from ptojax.numpy.creation import arange, array, empty, eye, ones, zeros, zeros_like
from ptojax.numpy.manipulation import (broadcast_to, concatenate, diagonal as _diagonal,
                                       expand_dims, matrix_transpose, moveaxis, ravel, reshape)
from ptojax.numpy.math import (abs, divide, exp, isinf, isnan, log, logical_not, logical_or,
                               power, sign, sqrt, where)
from ptojax.numpy.vector_products import cross as _cross, vecdot as _vecdot
from ptojax.numpy.products import matmul as _matmul, tensordot as _tensordot
from ptojax.numpy.reductions import amax, amin, any, count_nonzero, cumprod, prod, sum
from ptojax.numpy.sorting import sort
from ptojax.numpy.linalg_eig import EigResult, eig, eigvals  # noqa: F401
from ptojax.ops import decompositions as dec
from ptojax.ops.matrix import (conjugate_transpose, matrix_transpose as mT, symmetrize,
                               take_columns, take_rows)
from ptojax.source_info import user_frame
from ptojax.public import add_examples, dir_function

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "inv", "lstsq",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
           "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]
__dir__ = dir_function(__all__)


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


# solving ---------------------------------------------------------------------------------------
@custom_jvp
def _solve(a, b):
    """``x`` with ``a x = b`` for stacks ``a (..., m, m)`` and ``b (..., m, k)`` of one stack
    shape, by LU with partial pivoting."""
    lu, _, permutation = dec.lu(a)
    return dec.lu_solve(lu, permutation, b)


@_solve.defjvp
def _solve_jvp(primals, tangents):
    """``dx = a^-1 (db - da x)``, reusing the primal's LU factors (JAX gets the same from
    ``custom_linear_solve``)."""
    (a, b), (da, db) = primals, tangents
    lu, _, permutation = dec.lu(a)
    x = dec.lu_solve(lu, permutation, b)
    return x, dec.lu_solve(lu, permutation, db - _matmul(da, x))


def _solve_stacks(a, b):
    """``_solve`` for broadcast-compatible stacks; one matrix ``a`` against a stack of
    right-hand sides solves them all as the columns of one ``b``."""
    m, k = a.shape[-1], b.shape[-1]
    batch = broadcast_shapes("linalg.solve", tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    if math.prod(a.shape[:-2]) == 1 and math.prod(batch) > 1:
        columns = reshape(moveaxis(broadcast_to(b, (*batch, m, k)), -2, 0), (m, -1))
        x = _solve(reshape(a, (m, m)), columns)
        return moveaxis(reshape(x, (m, *batch, k)), 0, -2)
    return _solve(broadcast_to(a, (*batch, m, m)), broadcast_to(b, (*batch, m, k)))


def solve(a, b):
    """``x`` with ``a @ x = b``: ``b`` is a vector ``(m,)`` or a stack of matrices
    ``(..., m, k)``, broadcast against ``a``'s stack."""
    a, b = promote_inexact("solve", a, b)
    _require_square("linalg.solve", a)
    m = a.shape[-1]
    if b.ndim > 1 and a.ndim == b.ndim + 1 and b.shape[-1] == m and b.shape[-2] != m:
        raise ShapeError(f"linalg.solve: invalid shapes {a.aval} and {b.aval}: b is a stack of "
                         f"matrices (..., {m}, k); for a stack of vectors use "
                         f"solve(a, b[..., None])[..., 0]", user_frame())
    vector = b.ndim == 1
    b = expand_dims(b, -1) if vector else b
    if b.shape[-2] != m:
        raise ShapeError(f"linalg.solve: a {a.aval} cannot solve b {b.aval}: b needs {m} rows",
                         user_frame())
    x = _solve_stacks(a, b)
    return x[..., 0] if vector else x


def inv(a):
    """The inverse of each square matrix (solving against the identity)."""
    (a,) = promote_inexact("inv", a)
    _require_square("linalg.inv", a)
    n = a.shape[-1]
    return _solve(a, broadcast_to(eye(n, dtype=a.dtype), a.shape))


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """``(x, residuals, rank, s)`` minimizing ``|b - a x|`` by the SVD of the 2-D ``a``:
    singular values below ``rcond * s[0]`` (default ``eps * max(m, n)``) count as zero.
    ``residuals`` are always computed, unless ``numpy_resid`` asks for NumPy's empty ones
    when the rank is deficient or ``m <= n`` (eagerly only)."""
    a, b = promote_inexact("lstsq", a, b)
    if a.ndim != 2:
        raise DtypeError(f"linalg.lstsq: a must be two-dimensional, got {a.aval}", user_frame())
    if b.ndim not in (1, 2):
        raise DtypeError(f"linalg.lstsq: b must be one- or two-dimensional, got {b.aval}",
                         user_frame())
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"linalg.lstsq: the leading dimensions of a {a.aval} and b {b.aval} "
                         f"must match", user_frame())
    vector = b.ndim == 1
    b = expand_dims(b, 1) if vector else b
    m, n = a.shape
    if a.size == 0:
        s, rank = empty(0, dtype=a.dtype), array(0, dtype=dtypes.int32)
        x = zeros((n, b.shape[1]), dtype=a.dtype)
    else:
        x, rank, s = _lstsq_svd(a, b, rcond)
    if numpy_resid and (rank < n or m <= n):
        resid = asarray(np.array([], a.dtype))
    else:
        resid = norm(b - _matmul(a, x), axis=0) ** 2
    return (ravel(x) if vector else x), resid, rank, s


def _lstsq_svd(a, b, rcond):
    eps = float(dtypes.finfo(a.dtype).eps)
    rcond = eps * max(a.shape) if rcond is None else where(asarray(rcond) < 0, eps, rcond)
    u, s, vt = dec.svd(a, full_matrices=False)
    mask = (s > 0) & (s >= convert(rcond, s.dtype) * s[0])
    safe_s = where(mask, s, 1)
    s_inv = expand_dims(where(mask, 1 / safe_s, 0), 1)
    x = _matmul(mT(vt), s_inv * _matmul(mT(u), b))
    return x, sum(mask), s


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse from the SVD: singular values at most
    ``rtol * s_max`` (default ``10 * max(m, n) * eps``) are dropped. ``rcond`` is an alias of
    ``rtol``."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("linalg.pinv: give only one of rtol and rcond")
        rtol = rcond
    (a,) = promote_inexact("pinv", a)
    _require_matrices("linalg.pinv", a)
    return _pinv(a, rtol, hermitian)


def _pinv_value(a, rtol=None, hermitian=False):
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return empty((*a.shape[:-2], n, m), dtype=a.dtype)
    if rtol is None:
        rtol = np.asarray(10.0 * max(m, n) * dtypes.finfo(a.dtype).eps, a.dtype)
    rtol = asarray(rtol)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    rtol = reshape(rtol, (1,) * (s.ndim - rtol.ndim - 1) + (*rtol.shape, 1))
    s = where(s > rtol * s[..., 0:1], s, np.inf).astype(u.dtype)
    return _matmul(mT(vh), divide(mT(u), expand_dims(s, -1))).astype(a.dtype)


_pinv = custom_jvp(_pinv_value, nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    """Golub & Pereyra's derivative of the pseudo-inverse, as JAX."""
    (a,), (a_dot,) = primals, tangents
    p = _pinv(a, rtol, hermitian)
    if hermitian:
        a, a_dot = symmetrize(a), symmetrize(a_dot)
    m, n = a.shape[-2:]
    mm = _matmul
    if m >= n:
        s = mm(mm(p, mT(p)), mT(a_dot))
        t = mm(mm(mT(a_dot), mT(p)), p)
        p_dot = -mm(mm(p, a_dot), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t)
    else:
        s = mm(p, mm(mT(p), mT(a_dot)))
        t = mm(mT(a_dot), mm(mT(p), p))
        p_dot = -mm(p, mm(a_dot, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t))
    return p, p_dot


def tensorinv(a, ind=2):
    """The inverse of ``a`` seen as a matrix from its first ``ind`` dimensions to the rest."""
    (a,) = promote_inexact("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"linalg.tensorinv: ind must be a positive integer, got {ind}")
    rows, cols = a.shape[:ind], a.shape[ind:]
    if math.prod(rows) != math.prod(cols):
        raise ShapeError(f"linalg.tensorinv: the first {ind} dimensions of {a.aval} must have "
                         f"as many elements as the rest", user_frame())
    return reshape(inv(reshape(a, (math.prod(rows), math.prod(cols)))), (*cols, *rows))


def tensorsolve(a, b, axes=None):
    """``x`` with ``tensordot(a, x, x.ndim) = b``; ``axes`` of ``a`` move to the end first."""
    a, b = promote_inexact("tensorsolve", a, b)
    if axes is not None:
        a = moveaxis(a, axes, [a.ndim - 1] * len(axes))
    out_shape = a.shape[b.ndim:]
    if tuple(a.shape[:b.ndim]) != tuple(b.shape):
        raise ShapeError(f"linalg.tensorsolve: after moving axes to the end, the leading "
                         f"shape of a {a.aval} must be b's {tuple(b.shape)}", user_frame())
    if b.size != math.prod(out_shape):
        raise ShapeError(f"linalg.tensorsolve: a {a.aval} must have prod(a.shape[:b.ndim]) "
                         f"== prod(a.shape[b.ndim:])", user_frame())
    return reshape(solve(reshape(a, (b.size, math.prod(out_shape))), ravel(b)), out_shape)


# determinants ----------------------------------------------------------------------------------
def det(a):
    """The determinant of each square matrix (closed forms for 2x2 and 3x3)."""
    (a,) = promote_inexact("det", a)
    _require_square("linalg.det", a)
    n = a.shape[-1]
    if n == 2:
        return _det_2x2(a)
    if n == 3:
        return _det_3x3(a)
    return _det(a)


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] +
            a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0] +
            a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] -
            a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0] -
            a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] -
            a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@custom_jvp
def _det(a):
    sign_, logdet = slogdet(a)
    return sign_ * exp(logdet).astype(sign_.dtype)


@_det.defjvp
def _det_jvp(primals, tangents):
    """``d det(a) = trace(adj(a) da)``, defined at singular matrices too (JAX's cofactor
    solve)."""
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, trace(z)


def _cofactor_solve(a, b):
    """``(det(a), det(a) * solve(a, b))``, finite for singular ``a`` (JAX's construction: the
    LU's last pivot is replaced so the partial determinant scales the solve, and matrices of
    rank below n - 1 give zeros)."""
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = dec.lu(a)
    batch = broadcast_shapes("det", tuple(lu.shape[:-2]), tuple(b.shape[:-2]))
    x = broadcast_to(b, (*batch, *b.shape[-2:]))
    lu = broadcast_to(lu, (*batch, n, n))
    parity = count_nonzero(pivots != arange(n, dtype=pivots.dtype), axis=-1)
    flip = asarray(-2 * (parity % 2) + 1).astype(a.dtype)
    partial_det = cumprod(_diagonal(lu, 0, -2, -1), axis=-1) * expand_dims(flip, -1)
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    permutation = broadcast_to(permutation, (*batch, n))
    d = dec.triangular_solve(lu, ones(x.shape[:-1], x.dtype), left_side=True, lower=False)
    rank_deficient = expand_dims(any(logical_or(isnan(d), isinf(d)), axis=-1), (-2, -1))
    x = where(rank_deficient, zeros_like(x), x)
    x = dec.triangular_solve(lu, take_rows(x, permutation), left_side=True, lower=True,
                             unit_diagonal=True)
    x = concatenate([x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]],
                    axis=-2)
    x = dec.triangular_solve(lu, x, left_side=True, lower=False)
    return partial_det[..., -1], where(rank_deficient, zeros_like(x), x)


def slogdet(a, *, method=None):
    """``(sign, logabsdet)`` of each square matrix's determinant, by LU (``method`` None or
    'lu') or QR ('qr'); ``sign`` is 0 and ``logabsdet`` -inf for singular matrices."""
    (a,) = promote_inexact("slogdet", a)
    _require_square("linalg.slogdet", a)
    if method is None or method == "lu":
        small = a.shape[-1] in (1, 2)
        return SlogdetResult(*(_slogdet_small(a) if small else _slogdet_lu(a)))
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(a))
    raise ValueError(f"linalg.slogdet: unknown method {method!r} (use 'lu' or 'qr')")


@custom_jvp
def _slogdet_small(a):
    if a.shape[-1] == 1:
        det_ = a[..., 0, 0]
    else:
        det_ = _det_2x2(a)
    return sign(det_), log(abs(det_))


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sign_, ans = _slogdet_small(x)
    if x.shape[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        ans_dot = (g[..., 0, 0] * x[..., 1, 1] - g[..., 0, 1] * x[..., 1, 0]
                   - g[..., 1, 0] * x[..., 0, 1] + g[..., 1, 1] * x[..., 0, 0]) / _det_2x2(x)
    return (sign_, ans), (zeros_like(sign_), ans_dot)


@custom_jvp
def _slogdet_lu(a):
    n = a.shape[-1]
    lu, pivots, _ = dec.lu(a)
    diag = _diagonal(lu, 0, -2, -1)
    singular = any(diag == 0, axis=-1)
    parity = count_nonzero(pivots != arange(n, dtype=pivots.dtype), axis=-1) + \
        count_nonzero(diag < 0, axis=-1)
    sign_ = where(singular, zeros((), a.dtype), asarray(-2 * (parity % 2) + 1).astype(a.dtype))
    logdet = where(singular, asarray(-np.inf, a.dtype), sum(log(abs(diag)), axis=-1))
    return sign_, logdet


@custom_jvp
def _slogdet_qr(a):
    """``|det| = prod |diag(R)|``; each Householder reflection made (``tau != 0``) flips the
    sign."""
    n = a.shape[-1]
    r, taus = dec.geqrf(a)
    diag = _diagonal(r, 0, -2, -1)
    reflections = count_nonzero(taus[..., :n - 1] != 0, axis=-1)
    flips = asarray(-2 * (reflections % 2) + 1).astype(a.dtype)
    return prod(sign(diag), axis=-1) * flips, sum(log(abs(diag)), axis=-1)


def _slogdet_jvp(primals, tangents):
    """``d logabsdet = trace(a^-1 da)``; the sign is locally constant."""
    (x,), (g,) = primals, tangents
    sign_, ans = slogdet(x)
    lu, _, permutation = dec.lu(x)  # not solve(): its custom rule could not be transposed
    return (sign_, ans), (zeros_like(sign_), trace(dec.lu_solve(lu, permutation, g)))


_slogdet_lu.defjvp(_slogdet_jvp)
_slogdet_qr.defjvp(_slogdet_jvp)


# norms -----------------------------------------------------------------------------------------
def _sum_squares(x, axis=None, keepdims=False):
    return sum(x * x, axis=axis, keepdims=keepdims)


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms (one axis) and matrix norms (two axes) as ``numpy.linalg.norm``: ``ord``
    None/2, inf, -inf, 0, 1 or any p for vectors; 'fro', 'nuc', 1, -1, 2, -2, inf, -inf for
    matrices. With no ``axis`` and no ``ord`` every element counts (the 2-norm of the
    flattened array)."""
    (x,) = promote_inexact("norm", x)
    if axis is None:
        if ord is None:
            return sqrt(_sum_squares(x, keepdims=keepdims))
        axis = tuple(range(x.ndim))
    elif isinstance(axis, tuple):
        axis = tuple(normalize_axis("linalg.norm", a, x.ndim) for a in axis)
    else:
        axis = (normalize_axis("linalg.norm", axis, x.ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError(f"linalg.norm: improper number of axes {axis}: pass one axis for a "
                     f"vector norm, or two for a matrix norm")


def _matrix_norm(x, ord, axis, keepdims):
    row_axis, col_axis = axis
    if ord is None or ord in ("f", "fro"):
        return sqrt(_sum_squares(x, axis=axis, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        # 1: the largest column sum of |x| (inf: row sum); -1/-inf: the smallest
        summed, kept = (row_axis, col_axis) if ord in (1, -1) else (col_axis, row_axis)
        if not keepdims and kept > summed:
            kept -= 1
        sums = sum(abs(x), axis=summed, keepdims=keepdims)
        if ord > 0:
            return amax(sums, axis=kept, keepdims=keepdims, initial=0)
        return amin(sums, axis=kept, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        s = svd(moveaxis(x, axis, (-2, -1)), compute_uv=False)
        if ord == 2:
            y = amax(s, axis=-1, initial=0)
        elif ord == -2:
            y = amin(s, axis=-1)
        else:
            y = sum(s, axis=-1)
        return expand_dims(y, axis) if keepdims else y
    raise ValueError(f"linalg.norm: invalid order {ord!r} for a matrix norm")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The ``ord``-norm of the vectors along ``axis`` (all elements by default)."""
    x = asarray(x, op="vector_norm")
    if ord is None or ord == 2:
        return sqrt(_sum_squares(x, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return amax(abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return amin(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum(x != 0, dtype=dtypes.finfo(x.dtype).dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        hint = {"inf": " (use pnp.inf)", "-inf": " (use -pnp.inf)"}.get(ord, "")
        raise ValueError(f"linalg.vector_norm: invalid order {ord!r}{hint}")
    abs_x = abs(x)
    p = np.asarray(ord).astype(abs_x.dtype)
    out = sum(abs_x ** asarray(p), axis=axis, keepdims=keepdims)
    return power(out, asarray(np.asarray(1.0 / p).astype(abs_x.dtype)))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The ``ord`` matrix norm over the last two dimensions."""
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def cond(x, p=None):
    """The condition number in the ``p`` norm (default 2: the ratio of the extreme singular
    values); inf, not NaN, for singular matrices."""
    x = asarray(x, op="cond")
    if x.ndim < 2:
        raise ShapeError(f"linalg.cond: needs matrices, got {x.aval}", user_frame())
    if x.shape[-1] == 0 or x.shape[-2] == 0:
        raise ShapeError(f"linalg.cond: needs non-empty matrices, got {x.aval}", user_frame())
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        _require_square(f"linalg.cond (p={p!r})", x)
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return where(isnan(r) & logical_not(any(isnan(x), axis=(-2, -1))), np.inf, r)


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """The number of singular values above ``rtol`` (by default ``s_max * max(m, n) * eps``;
    a given ``rtol``, or its alias ``tol``, is an absolute bound, as in JAX)."""
    M = asarray(M, op="matrix_rank")
    if tol is not None:
        if rtol is not None:
            raise ValueError("linalg.matrix_rank: give only one of tol and rtol")
        rtol = tol
    (M,) = promote_inexact("matrix_rank", M)
    if M.ndim < 2:
        return any(M != 0).astype(dtypes.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = amax(s, axis=-1) * max(M.shape[-2:]) * float(dtypes.finfo(s.dtype).eps)
    rtol = asarray(rtol)
    return sum(s > expand_dims(rtol, rtol.ndim), axis=-1)


# products and views ----------------------------------------------------------------------------
def matrix_power(a, n):
    """``a`` to the integer power ``n`` by repeated squaring (``n < 0`` inverts first)."""
    a = asarray(a, op="matrix_power")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"linalg.matrix_power: needs square matrices (..., n, n), got "
                         f"{a.aval}", user_frame())
    try:
        n = operator.index(n)
    except TypeError:
        raise DtypeError(f"linalg.matrix_power: the exponent must be an integer, got {n!r}",
                         user_frame()) from None
    if n == 0:
        return broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    result = square = None
    while n > 0:
        square = a if square is None else _matmul(square, square)
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else _matmul(result, square)
    return result


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (the first and last may be vectors), multiplied in
    the order with the fewest operations (dynamic programming, as ``numpy.linalg.multi_dot``).
    ``precision`` is accepted for JAX compatibility."""
    arrays = [asarray(a, op="multi_dot") for a in arrays]
    if len(arrays) < 2:
        raise ValueError(f"linalg.multi_dot: needs at least two arrays, got {len(arrays)}")
    if not (arrays[0].ndim in (1, 2) and arrays[-1].ndim in (1, 2)
            and all(a.ndim == 2 for a in arrays[1:-1])):
        raise ShapeError(f"linalg.multi_dot: the arrays must be 2-D (the first and last may be "
                         f"1-D), got shapes {[tuple(a.shape) for a in arrays]}", user_frame())
    if builtins.any(a.shape[-1] != b.shape[0] for a, b in zip(arrays[:-1], arrays[1:])):
        raise ShapeError(f"linalg.multi_dot: each array's last dimension must match the next "
                         f"one's first, got shapes {[tuple(a.shape) for a in arrays]}",
                         user_frame())
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    mats = [expand_dims(arrays[0], 0) if first_vector else arrays[0], *arrays[1:-1],
            expand_dims(arrays[-1], 1) if last_vector else arrays[-1]]
    out = _chain(mats, _chain_order([m.shape[0] for m in mats] + [mats[-1].shape[1]]),
                 0, len(mats) - 1)
    if first_vector:
        out = out[0]
    if last_vector:
        out = out[..., 0]
    return out


def _chain_order(dims):
    """``split[i][j]``: where the cheapest product of matrices ``i..j`` splits (matrix ``k``
    is ``dims[k] x dims[k + 1]``)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return _matmul(_chain(mats, split, i, k), _chain(mats, split, k + 1, j))


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """``pnp.matmul`` (``precision`` is accepted for JAX compatibility)."""
    return _matmul(x1, x2, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """``pnp.tensordot`` (``precision`` is accepted for JAX compatibility)."""
    return _tensordot(x1, x2, axes, preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """``pnp.vecdot``: the dot products of the vectors along ``axis``."""
    return _vecdot(x1, x2, axis=axis, preferred_element_type=preferred_element_type)


def outer(x1, x2, /):
    """The outer product of two vectors."""
    x1, x2 = asarray(x1, op="outer"), asarray(x2, op="outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ShapeError(f"linalg.outer: needs two vectors, got {x1.aval} and {x2.aval}",
                         user_frame())
    return expand_dims(x1, 1) * expand_dims(x2, 0)


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis``."""
    x1, x2 = asarray(x1, op="cross"), asarray(x2, op="cross")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ShapeError(f"linalg.cross: needs 3-vectors along axis {axis}, got {x1.aval} and "
                         f"{x2.aval}", user_frame())
    return _cross(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices in the last two dimensions."""
    return _diagonal(x, offset, -2, -1)


def trace(x, /, *, offset=0, dtype=None):
    """The sums of the diagonals of the matrices in the last two dimensions."""
    return sum(_diagonal(x, offset, -2, -1), axis=-1, dtype=dtype)


add_examples(globals(), """
cholesky:
    >>> pnp.linalg.cholesky(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    Array([[2.       , 0.       ],
           [1.       , 1.4142135]], dtype=float32)
cond:
    >>> pnp.linalg.cond(pnp.array([[2.0, 0.0], [0.0, 0.5]]))
    Array(4., dtype=float32)
cross:
    >>> pnp.linalg.cross(pnp.array([1.0, 0.0, 0.0]), pnp.array([0.0, 1.0, 0.0]))
    Array([0., 0., 1.], dtype=float32)
det:
    >>> pnp.linalg.det(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    Array(8., dtype=float32)
diagonal:
    >>> pnp.linalg.diagonal(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    Array([4., 3.], dtype=float32)
eigh:
    >>> pnp.linalg.eigh(pnp.array([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
    Array([1., 3.], dtype=float32)
eigvalsh:
    >>> pnp.linalg.eigvalsh(pnp.array([[2.0, 1.0], [1.0, 2.0]]))
    Array([1., 3.], dtype=float32)
inv:
    >>> pnp.linalg.inv(pnp.array([[2.0, 0.0], [0.0, 4.0]]))
    Array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
lstsq:
    >>> a = pnp.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> pnp.linalg.lstsq(a, pnp.array([1.0, 2.0, 3.0]))[0]
    Array([0.9999999, 0.9999999], dtype=float32)
matmul:
    >>> pnp.linalg.matmul(pnp.array([[4.0, 2.0], [2.0, 3.0]]), pnp.array([1.0, 1.0]))
    Array([6., 5.], dtype=float32)
matrix_norm:
    >>> pnp.linalg.matrix_norm(pnp.array([[3.0, 0.0], [0.0, 4.0]]))
    Array(5., dtype=float32)
matrix_power:
    >>> pnp.linalg.matrix_power(pnp.array([[1, 1], [0, 1]]), 3)
    Array([[1, 3],
           [0, 1]], dtype=int32)
matrix_rank:
    >>> pnp.linalg.matrix_rank(pnp.array([[1.0, 2.0], [2.0, 4.0]]))
    Array(1, dtype=int32)
multi_dot:
    >>> pnp.linalg.multi_dot([pnp.ones((2, 3)), pnp.ones((3, 4)), pnp.ones(4)])
    Array([12., 12.], dtype=float32)
norm:
    >>> pnp.linalg.norm(pnp.array([3.0, 4.0]))
    Array(5., dtype=float32)
    >>> pnp.linalg.norm(pnp.array([3.0, -4.0]), ord=1)
    Array(7., dtype=float32)
outer:
    >>> pnp.linalg.outer(pnp.array([1, 2]), pnp.array([3, 4]))
    Array([[3, 4],
           [6, 8]], dtype=int32)
pinv:
    >>> pnp.linalg.pinv(pnp.array([[2.0, 0.0], [0.0, 0.0]]))
    Array([[0.5, 0. ],
           [0. , 0. ]], dtype=float32)
qr:
    >>> pnp.abs(pnp.linalg.qr(pnp.array([[4.0, 2.0], [2.0, 3.0]])).R)
    Array([[4.472136 , 3.130495 ],
           [0.       , 1.7888544]], dtype=float32)
slogdet:
    >>> pnp.linalg.slogdet(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    SlogdetResult(sign=Array(1., dtype=float32), logabsdet=Array(2.0794415, dtype=float32))
solve:
    >>> pnp.linalg.solve(pnp.array([[4.0, 2.0], [2.0, 3.0]]), pnp.array([2.0, 1.0]))
    Array([0.5, 0. ], dtype=float32)
svd:
    >>> pnp.linalg.svd(pnp.array([[4.0, 2.0], [2.0, 3.0]])).S
    Array([5.561553 , 1.4384472], dtype=float32)
svdvals:
    >>> pnp.linalg.svdvals(pnp.array([[3.0, 0.0], [0.0, -4.0]]))
    Array([4., 3.], dtype=float32)
tensordot:
    >>> pnp.linalg.tensordot(pnp.ones((2, 3)), pnp.ones((3, 2)), axes=1)
    Array([[3., 3.],
           [3., 3.]], dtype=float32)
tensorinv:
    >>> pnp.linalg.tensorinv(pnp.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
tensorsolve:
    >>> pnp.linalg.tensorsolve(2 * pnp.eye(4).reshape(2, 2, 2, 2), pnp.ones((2, 2)))
    Array([[0.5, 0.5],
           [0.5, 0.5]], dtype=float32)
trace:
    >>> pnp.linalg.trace(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    Array(7., dtype=float32)
vecdot:
    >>> pnp.linalg.vecdot(pnp.array([1.0, 2.0]), pnp.array([3.0, 4.0]))
    Array(11., dtype=float32)
vector_norm:
    >>> pnp.linalg.vector_norm(pnp.array([3.0, 4.0]))
    Array(5., dtype=float32)
""")
