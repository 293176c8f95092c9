"""``pnp.linalg`` norms: norm, vector_norm, matrix_norm, and matrix_rank (singular values
against a tolerance)."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, promote_inexact
from ptojax.numpy.complex_parts import conj, real
from ptojax.numpy.manipulation import expand_dims, moveaxis
from ptojax.numpy.math import abs, power, sqrt
from ptojax.numpy.reductions import amax, amin, any, sum
from ptojax.numpy.linalg_factor import svd


# norms -----------------------------------------------------------------------------------------
def _sum_squares(x, axis=None, keepdims=False):
    """The sum of ``|x|**2`` (real for complex ``x``, as JAX's norms)."""
    if dtypes.is_complex(x.dtype):
        return sum(real(x * conj(x)), axis=axis, keepdims=keepdims)
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
