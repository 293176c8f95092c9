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
import itertools
import operator

from ptojax.errors import DtypeError, ShapeError
from ptojax.numpy._promote import asarray
from ptojax.numpy.creation import eye
from ptojax.numpy.einsum import einsum
from ptojax.numpy.manipulation import broadcast_to, expand_dims, matrix_transpose
from ptojax.numpy.vector_products import cross as _cross, vecdot as _vecdot
from ptojax.numpy.products import matmul as _matmul, tensordot as _tensordot
from ptojax.numpy.linalg_eig import EigResult, eig, eigvals  # noqa: F401
from ptojax.source_info import user_frame
from ptojax.public import add_examples, dir_function
from ptojax.numpy.linalg_factor import (EighResult, QRResult, SlogdetResult,  # noqa: F401
                                        SVDResult, cholesky, diagonal, eigh, eigvalsh, qr, svd,
                                        svdvals, trace)
from ptojax.numpy.linalg_norms import matrix_norm, matrix_rank, norm, vector_norm
from ptojax.numpy.linalg_solve import cond, inv, lstsq, pinv, solve, tensorinv, tensorsolve
from ptojax.numpy.linalg_det import det, slogdet

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "inv", "lstsq",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
           "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm"]
__dir__ = dir_function(__all__)


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
    the order ``einsum``'s path search finds (as JAX: ``optimize="auto"``)."""
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
    # JAX's form: one einsum over the chain, its path search choosing the order
    axes = [[i, i + 1] for i in range(len(arrays))]
    if arrays[0].ndim == 1:
        axes[0] = axes[0][1:]
    if arrays[-1].ndim == 1:
        axes[-1] = axes[-1][:1]
    return einsum(*itertools.chain(*zip(arrays, axes)), optimize="auto", precision=precision)


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
