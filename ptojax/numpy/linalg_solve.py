"""``pnp.linalg`` solvers: solve (LU, with JAX's linear-solve derivative), inv, lstsq, pinv
(JAX's custom JVP), tensorinv, tensorsolve, and cond."""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import dtypes
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.errors import DtypeError, ShapeError
from ptojax.numpy._promote import asarray, broadcast_shapes, convert, promote_inexact
from ptojax.numpy.creation import array, empty, eye, zeros
from ptojax.numpy.manipulation import broadcast_to, expand_dims, moveaxis, ravel, reshape
from ptojax.numpy.math import divide, isnan, logical_not, where
from ptojax.numpy.products import matmul as _matmul
from ptojax.numpy.reductions import any, sum
from ptojax.ops import decompositions as dec
from ptojax.ops.matrix import matrix_transpose as mT, symmetrize
from ptojax.source_info import user_frame
from ptojax.numpy.linalg_factor import _require_matrices, _require_square, svd, svdvals
from ptojax.numpy.linalg_norms import norm


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
