"""Stacks of matrices at the lax level: the helpers the decompositions' rules (and the
``pnp.linalg``/``scipy.linalg`` layers) build on. A value is ``(..., m, n)``: the last two
dimensions are the matrix, the leading ones a stack that operands of one call share."""
from __future__ import annotations

from ptojax import dtypes
from ptojax.ir.types import TensorType
from ptojax.ops.arithmetic import add, div
from ptojax.ops.broadcast import broadcast_in_dim, zeros
from ptojax.ops.complex_parts import conj_p
from ptojax.ops.convert import convert_element_type
from ptojax.ops.gather_scatter import gather
from ptojax.ops.linalg import dot_general
from ptojax.ops.logic import eq, ge, select
from ptojax.ops.shape import reshape, transpose
from ptojax.ops.slicing import broadcasted_iota, slice as slice_
from ptojax.ops.sorting import sort


def matrix_transpose(x):
    """``x`` with its last two dimensions swapped."""
    return transpose(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def matmul(a, b):
    """``a @ b`` for stacks with the same leading dimensions (one batched dot_general)."""
    batch = tuple(range(a.ndim - 2))
    return dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch)))


def _band(shape, k):
    """The (rows, cols) mask ``col - row <= k``, broadcast over the stack of ``shape``."""
    n = len(shape)
    rows = broadcasted_iota(dtypes.int32, shape, n - 2)
    cols = broadcasted_iota(dtypes.int32, shape, n - 1)
    return ge(add(rows, k), cols)


def tril(x, k=0):
    """The lower triangle of each matrix (diagonal ``k`` and below), zeros above."""
    return select(_band(x.shape, k), x, zeros(x.aval.strip_weak()))


def triu(x, k=0):
    """The upper triangle of each matrix (diagonal ``k`` and above), zeros below."""
    return select(_band(x.shape, k - 1), zeros(x.aval.strip_weak()), x)


def eye(n, dtype, batch=(), m=None):
    """Identity matrices ``(*batch, n, m)`` (``m`` defaults to ``n``)."""
    shape = (*batch, n, n if m is None else m)
    on = eq(broadcasted_iota(dtypes.int32, shape, len(shape) - 2),
            broadcasted_iota(dtypes.int32, shape, len(shape) - 1))
    return convert_element_type(on, dtype)


def diagonal(x):
    """The main diagonal of each matrix, ``(..., min(m, n))``: a strided slice of the
    flattened matrix (element ``i`` sits at ``i * (n + 1)``)."""
    *batch, m, n = x.shape
    k = min(m, n)
    if k == 0:
        return zeros(TensorType((*batch, 0), x.dtype))
    flat = reshape(x, (*batch, m * n))
    return slice_(flat, [0] * flat.ndim, (*batch, (k - 1) * (n + 1) + 1),
                  [1] * len(batch) + [n + 1])


def diag_matrix(v):
    """Square matrices with ``v`` (``(..., n)``) on their diagonals and zeros elsewhere."""
    n = v.shape[-1]
    shape = (*v.shape, n)
    full = broadcast_in_dim(v, shape, (*range(v.ndim - 1), v.ndim))
    on = eq(broadcasted_iota(dtypes.int32, shape, v.ndim - 1),
            broadcasted_iota(dtypes.int32, shape, v.ndim))
    return select(on, full, zeros(full.aval.strip_weak()))


def take_rows(x, rows):
    """``x[..., rows, :]`` with one index vector ``rows`` (``(..., m)``) per matrix."""
    nbatch = x.ndim - 2
    return gather(x, reshape(rows, (*rows.shape, 1)), (0,), nbatch=nbatch)


def take_columns(x, cols):
    """``x[..., :, cols]`` with one index vector ``cols`` (``(..., n)``) per matrix."""
    return matrix_transpose(take_rows(matrix_transpose(x), cols))


def symmetrize(x):
    """``(x + x^H) / 2``: symmetric (Hermitian for complex ``x``)."""
    return div(add(x, conjugate_transpose(x)), 2)


def conjugate_transpose(x):
    """``x^H``: the matrix transpose, conjugated for complex ``x`` (``x^T`` otherwise)."""
    x_t = matrix_transpose(x)
    return conj_p.bind(x_t) if dtypes.is_complex(x.dtype) else x_t


def by_column(v, shape):
    """``v`` (``(..., n)``) broadcast to matrices ``shape``: entry ``(i, j)`` is ``v[..., j]``."""
    return broadcast_in_dim(v, shape, (*range(v.ndim - 1), len(shape) - 1))


def by_row(v, shape):
    """``v`` (``(..., m)``) broadcast to matrices ``shape``: entry ``(i, j)`` is ``v[..., i]``."""
    return broadcast_in_dim(v, shape, tuple(range(len(shape) - 1)))


def inverse_permutation(permutation):
    """``inverse[permutation[i]] = i`` along the last dimension."""
    positions = broadcasted_iota(dtypes.int32, permutation.shape, permutation.ndim - 1)
    return sort((permutation, positions), dimension=permutation.ndim - 1, num_keys=1)[1]
