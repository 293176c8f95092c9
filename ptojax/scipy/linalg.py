"""``pto.scipy.linalg``: JAX's ``jax.scipy.linalg`` — SciPy's names and signatures over the
decomposition primitives (``ops/decompositions.py``) and ``pnp.linalg``.

SciPy's ``overwrite_*``, ``check_finite``, ``lwork``, ``lapack_driver``, ``turbo`` and
``debug`` arguments are accepted and ignored, as in JAX. Like JAX (and unlike SciPy), the
solvers and factorizations take stacks of matrices, broadcasting their leading dimensions.
"""
from __future__ import annotations

import builtins
import functools
import warnings

import numpy as np

from ptojax import dtypes, lax
from ptojax.autodiff.api import jvp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.batching.api import vmap
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.numpy import linalg as pnp_linalg
from ptojax.numpy._promote import asarray, broadcast_shapes, convert, promote_inexact, result_type
from ptojax.numpy.creation import arange, eye, full_like, zeros
from ptojax.numpy.manipulation import (atleast_2d, broadcast_to, concatenate, expand_dims,
                                       reshape, tril, triu)
from ptojax.numpy.math import floor, log2, maximum
from ptojax.numpy.products import matmul
from ptojax.numpy.reductions import sum
from ptojax.ops import decompositions as dec
from ptojax.ops.matrix import matrix_transpose as mT
from ptojax.source_info import user_frame
from ptojax.public import add_examples, dir_function
from ptojax.scipy.matrix_sqrt import sqrtm
from ptojax.scipy.polar import polar
from ptojax.scipy.qr_multiply import qr_multiply
from ptojax.scipy.schur_based import funm, solve_sylvester
from ptojax.scipy.schur_forms import hessenberg, rsf2csf, schur
from ptojax.scipy.tridiagonal import eigh_tridiagonal
from ptojax.scipy.special_matrices import (circulant, companion, convolution_matrix, dft,
                                           fiedler, fiedler_companion, hadamard, hankel,
                                           helmert, hilbert, invhilbert, invpascal, leslie,
                                           pascal, toeplitz)

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
           "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet",
           "fiedler", "fiedler_companion", "funm", "hadamard", "hankel", "helmert", "hessenberg",
           "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu", "lu_factor", "lu_solve",
           "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve", "solve_sylvester",
           "solve_triangular", "sqrtm", "svd", "toeplitz"]
__dir__ = dir_function(__all__)


# Cholesky ---------------------------------------------------------------------------------------
def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of symmetric positive-definite matrices, upper (``a = U^T U``) by
    default or ``lower``; only that triangle of ``a`` is read. NaNs where ``a`` is not positive
    definite."""
    (a,) = promote_inexact("cholesky", a)
    factor = dec.cholesky(a if lower else mT(a), symmetrize_input=False)
    return factor if lower else mT(factor)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for ``cho_solve``: the Cholesky factor and which triangle holds it."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``x`` with ``a x = b`` from ``cho_factor(a)``'s ``(c, lower)``."""
    c, lower = c_and_lower
    c, b = promote_inexact("cho_solve", c, b)
    return _stacked_solve("cho_solve", c, b, functools.partial(_cho_solve, lower=lower))


def _cho_solve(c, b, lower):
    b = dec.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                             conjugate_a=not lower)
    return dec.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower,
                                conjugate_a=lower)


def _stacked_solve(op, a, b, solve, *more):
    """``solve(a, b, *more)`` with stacks of ``(n, n)`` ``a`` (and of ``(n,)`` ``more``) and
    ``b`` of vectors ``(n,)`` or matrices ``(n, k)`` broadcast together, as JAX's
    ``jnp.vectorize`` does. A ``b`` of one dimension fewer than ``a`` whose last dimension is
    ``n`` is a stack of vectors, with JAX's deprecation warning."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{op}: needs square matrices (..., n, n), got {a.aval}", user_frame())
    n = a.shape[-1]
    vector = b.ndim == 1
    if not vector and a.ndim == b.ndim + 1 and b.shape[-1] == n:
        warnings.warn(f"{op}: batched 1D solves with b.ndim > 1 are deprecated (as in JAX), "
                      f"and in the future will be treated as a batched 2D solve. Use "
                      f"{op}(..., b[..., None])[..., 0] to avoid this warning.", FutureWarning,
                      stacklevel=3)
        vector = True
    b = expand_dims(b, -1) if vector else b
    if b.ndim < 2 or b.shape[-2] != n:
        raise ShapeError(f"{op}: a {a.aval} cannot solve b {b.aval}: b needs {n} rows",
                         user_frame())
    batch = broadcast_shapes(op, tuple(a.shape[:-2]), tuple(b.shape[:-2]),
                             *(tuple(m.shape[:-1]) for m in more))
    a = broadcast_to(a, (*batch, n, n))
    b = broadcast_to(b, (*batch, *b.shape[-2:]))
    more = [broadcast_to(m, (*batch, m.shape[-1])) for m in more]
    x = solve(a, b, *more)
    return x[..., 0] if vector else x


# triangular and general solves ------------------------------------------------------------------
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """``x`` with ``op(a) x = b`` for triangular ``a`` (only its ``lower`` or upper triangle is
    read); ``trans`` 0/'N', 1/'T' or 2/'C' chooses ``op`` (none, transpose, conjugate
    transpose)."""
    transpose_a, conjugate_a = _trans("solve_triangular", trans)
    a, b = promote_inexact("solve_triangular", a, b)
    solve = functools.partial(dec.triangular_solve, left_side=True, lower=lower,
                              transpose_a=transpose_a, conjugate_a=conjugate_a,
                              unit_diagonal=unit_diagonal)
    return _stacked_solve("solve_triangular", a, b, solve)


def _trans(op, trans):
    if trans in (0, "N"):
        return False, False
    if trans in (1, "T"):
        return True, False
    if trans in (2, "C"):
        return True, True
    raise ValueError(f"{op}: invalid trans {trans!r} (use 0/'N', 1/'T' or 2/'C')")


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """``x`` with ``a x = b``: by LU (``assume_a`` 'gen', 'sym' or 'her') or, for positive-
    definite ``a`` ('pos'), by Cholesky, reading its ``lower`` (or upper) triangle."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"solve: assume_a must be one of 'gen', 'sym', 'her', 'pos'; got "
                         f"{assume_a!r}")
    if assume_a != "pos":
        return pnp_linalg.solve(a, b)
    a, b = promote_inexact("solve", a, b)
    if not (a.ndim >= 2 and b.ndim in (a.ndim, a.ndim - 1)
            and a.shape[-1] == a.shape[-2] == b.shape[a.ndim - 2]):
        raise ShapeError(f"solve: needs a of shape (..., m, m) and b of shape (..., m, k) or "
                         f"(..., m); got {a.aval} and {b.aval}", user_frame())
    vector = b.ndim == a.ndim - 1
    b = expand_dims(b, -1) if vector else b
    x = _positive_definite_solve(a, broadcast_to(b, (*a.shape[:-1], b.shape[-1])), lower)
    return x[..., 0] if vector else x


@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _positive_definite_solve(a, b, lower):
    return _cho_solve(cholesky(a, lower=lower), b, lower)


@_positive_definite_solve.defjvp
def _positive_definite_solve_jvp(lower, primals, tangents):
    """``dx = a^-1 (db - da x)`` with the primal's Cholesky factor (JAX's symmetric
    ``custom_linear_solve``)."""
    (a, b), (da, db) = primals, tangents
    factor = cholesky(a, lower=lower)
    x = _cho_solve(factor, b, lower)
    return x, _cho_solve(factor, db - matmul(da, x), lower)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of each square matrix."""
    return pnp_linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of each square matrix."""
    return pnp_linalg.det(a)


# LU ---------------------------------------------------------------------------------------------
def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)`` for ``lu_solve``: ``L`` (unit diagonal, not stored) and ``U`` in one
    matrix, and the row swapped with each row (int32)."""
    (a,) = promote_inexact("lu_factor", a)
    lu_, pivots, _ = dec.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """``x`` with ``a x = b`` (``trans`` 0), ``a^T x = b`` (1) or ``a^H x = b`` (2) from
    ``lu_factor(a)``."""
    lu_, pivots = lu_and_piv
    lu_, b = promote_inexact("lu_solve", lu_, b)
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    permutation = dec.lu_pivots_to_permutation(asarray(pivots), lu_.shape[-2])

    def solve(lu_, b, permutation):
        return dec.lu_solve(lu_, permutation, b, trans)
    return _stacked_solve("lu_solve", lu_, b, solve, permutation)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """``(p, l, u)`` with ``a = p @ l @ u`` (``(p @ l, u)`` with ``permute_l``): ``p`` a
    permutation matrix, ``l`` unit lower triangular ``(m, k)``, ``u`` upper ``(k, n)``."""
    (a,) = promote_inexact("lu", a)
    lu_, _, permutation = dec.lu(a)
    *batch, m, n = a.shape
    k = min(m, n)
    p = (expand_dims(permutation, -2) == expand_dims(arange(m, dtype=dtypes.int32), -1)
         ).astype(a.dtype)
    lower = tril(lu_, -1)[..., :, :k] + eye(m, k, dtype=a.dtype)
    upper = triu(lu_)[..., :k, :]
    if permute_l:
        return matmul(p, lower), upper
    return p, lower, upper


# QR, SVD, eigh ----------------------------------------------------------------------------------
def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``(q, r)`` with ``a = q r`` for ``mode`` 'full' (``q`` is ``(m, m)``) or 'economic'
    (``(m, k)``); ``(r,)`` for 'r'. With ``pivoting``, also ``p`` with ``a[:, p] = q r``."""
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"qr: unsupported mode {mode!r} (use 'full', 'economic' or 'r')")
    (a,) = promote_inexact("qr", a)
    q, r, *p = dec.qr(a, pivoting=pivoting, full_matrices=mode != "economic")
    return ((r, *p) if mode == "r" else (q, r, *p))


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """``(u, s, vh)`` with ``a = u diag(s) vh``, ``s`` descending (``s`` alone without
    ``compute_uv``)."""
    (a,) = promote_inexact("svd", a)
    return dec.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):
    """``(w, v)``: ascending eigenvalues and eigenvectors (columns) of symmetric matrices
    (``w`` alone with ``eigvals_only``). The generalized problem (``b``), ``type`` other than 1
    and ``eigvals`` are not implemented, as in JAX."""
    if b is not None:
        raise UnsupportedError("scipy.linalg.eigh: only b=None is implemented (as in JAX)",
                               user_frame())
    if type != 1:
        raise UnsupportedError("scipy.linalg.eigh: only type=1 is implemented (as in JAX)",
                               user_frame())
    if eigvals is not None:
        raise UnsupportedError("scipy.linalg.eigh: only eigvals=None is implemented (as in "
                               "JAX); use jax-style subset_by_index via pto.lax.linalg.eigh",
                               user_frame())
    (a,) = promote_inexact("eigh", a)
    v, w = dec.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


# matrix exponential -----------------------------------------------------------------------------
def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential by scaling and squaring with a Pade approximant (Higham 2005), as
    JAX: NaNs when more than ``max_squarings`` squarings would be needed. With
    ``upper_triangular`` the Pade quotient is a triangular solve."""
    (A,) = promote_inexact("expm", A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"expm: needs a (stack of) square matrices, got {A.aval}",
                         user_frame())
    one = functools.partial(_expm, upper_triangular=upper_triangular,
                            max_squarings=max_squarings)
    if A.ndim == 2:
        return one(A)
    n = A.shape[-1]
    return reshape(vmap(one)(reshape(A, (-1, n, n))), A.shape)


def _expm(A, upper_triangular, max_squarings):
    P, Q, n_squarings = _pade_quotient_terms(A)

    def overflow(operands):
        return full_like(operands[0], np.nan)

    def compute(operands):
        _, P, Q = operands
        R = solve_triangular(Q, P) if upper_triangular else pnp_linalg.solve(Q, P)
        return _squaring(R, n_squarings, max_squarings)
    return lax.cond(n_squarings > max_squarings, overflow, compute, (A, P, Q))


# Higham's bounds on the 1-norm for each Pade degree, and the largest scaled norm
_PADE_BOUNDS = {
    dtypes.float64: ((1.495585217958292e-002, 2.539398330063230e-001, 9.504178996162932e-001,
                      2.097847961257068e+000), 5.371920351148152),
    dtypes.float32: ((4.258730016922831e-001, 1.880152677804762e+000), 3.925724783138660),
}


def _pade_quotient_terms(A):
    """``(P, Q, n_squarings)``: the Pade approximant's numerator and denominator for
    ``A / 2**n_squarings``, of the lowest degree accurate for its 1-norm."""
    if A.dtype not in _PADE_BOUNDS:
        raise TypeError(f"expm: A.dtype={A.dtype} is not supported (use float32 or float64)")
    bounds, max_norm = _PADE_BOUNDS[A.dtype]
    norm1 = pnp_linalg.norm(A, 1)
    n_squarings = maximum(0, floor(log2(norm1 / max_norm)))
    A = A / (2 ** n_squarings).astype(A.dtype)
    degree = sum(asarray(np.asarray(bounds, A.dtype)) <= norm1).astype(dtypes.int32)
    branches = [_pade3, _pade5, _pade7, _pade9, _pade13][:len(bounds) + 1]
    U, V = lax.switch(degree, branches, A)
    return U + V, -U + V, n_squarings


def _squaring(R, n_squarings, max_squarings):
    """``R`` squared ``n_squarings`` times (a scan of ``max_squarings`` conditional steps)."""
    def step(carry, i):
        return lax.cond(i < n_squarings, lambda x: matmul(x, x), lambda x: x, carry), None
    out, _ = lax.scan(step, R, arange(max_squarings, dtype=n_squarings.dtype))
    return out


def _pade(A, b, powers):
    """``(U, V)`` of the Pade approximant with coefficients ``b``: ``U`` sums the odd terms
    (times ``A``), ``V`` the even ones, highest power first (as JAX)."""
    even = [eye(A.shape[0], dtype=A.dtype)] + [powers[k] for k in sorted(powers)]
    return matmul(A, _polynomial(b[1::2], even)), _polynomial(b[0::2], even)


def _polynomial(coefficients, matrices):
    """``sum(c * m)``, added from the last term to the first."""
    terms = [c * m for c, m in zip(coefficients, matrices)][::-1]
    out = terms[0]
    for term in terms[1:]:
        out = out + term
    return out


def _even_powers(A, highest):
    A2 = matmul(A, A)
    powers = {2: A2}
    for k in range(4, highest + 1, 2):
        powers[k] = matmul(powers[k - 2], A2) if k != 4 else matmul(A2, A2)
    return powers


def _pade3(A):
    return _pade(A, (120., 60., 12., 1.), _even_powers(A, 2))


def _pade5(A):
    return _pade(A, (30240., 15120., 3360., 420., 30., 1.), _even_powers(A, 4))


def _pade7(A):
    return _pade(A, (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
                 _even_powers(A, 6))


def _pade9(A):
    return _pade(A, (17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                     2162160., 110880., 3960., 90., 1.), _even_powers(A, 8))


def _pade13(A):
    """Degree 13 groups its terms to need only A^2, A^4 and A^6 (Higham 2005)."""
    b = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.)
    ident = eye(A.shape[0], dtype=A.dtype)
    A2 = matmul(A, A)
    A4 = matmul(A2, A2)
    A6 = matmul(A4, A2)
    U = matmul(A, matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)
               + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 \
        + b[2] * A2 + b[0] * ident
    return U, V


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative of ``expm`` at ``A`` in the direction ``E`` (with ``expm(A)``
    first unless not ``compute_expm``): the JVP of ``expm``."""
    A, E = asarray(A, op="expm_frechet"), asarray(E, op="expm_frechet")
    if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
        raise ShapeError(f"expm_frechet: A must be a (stack of) square matrices, got {A.aval}",
                         user_frame())
    if E.ndim < 2 or E.shape[-2] != E.shape[-1]:
        raise ShapeError(f"expm_frechet: E must be a (stack of) square matrices, got {E.aval}",
                         user_frame())
    if tuple(A.shape) != tuple(E.shape):
        raise ShapeError(f"expm_frechet: A and E must have one shape, got {A.aval} and "
                         f"{E.aval}", user_frame())
    value, derivative = jvp(expm, (A,), (E,))
    return (value, derivative) if compute_expm else derivative


# construction -----------------------------------------------------------------------------------
def block_diag(*arrs):
    """The block-diagonal matrix of the given (at most 2-D) arrays."""
    if not arrs:
        arrs = (zeros((1, 0)),)
    arrs = [asarray(a, op="block_diag") for a in arrs]
    dtype, weak = result_type(*arrs, op="block_diag")
    for i, a in enumerate(arrs):
        if a.ndim > 2:
            raise ShapeError(f"block_diag: the arrays must have at most 2 dimensions, got "
                             f"{a.aval} at argument {i}", user_frame())
    arrs = [atleast_2d(convert(a, dtype, weak)) for a in arrs]
    total = builtins.sum(a.shape[1] for a in arrs)
    rows, start = [], 0
    for a in arrs:
        config = ((0, 0, 0), (start, total - start - a.shape[1], 0))
        rows.append(lax.pad(a, convert(0, dtype), config))
        start += a.shape[1]
    return concatenate(rows, axis=0)


add_examples(globals(), """
block_diag:
    >>> pto.scipy.linalg.block_diag(pnp.array([[1, 2]]), pnp.array([[3]]))
    Array([[1, 2, 0],
           [0, 0, 3]], dtype=int32)
cho_factor:
    >>> c, lower = pto.scipy.linalg.cho_factor(pnp.array([[4.0, 2.0], [2.0, 3.0]]), lower=True)
    >>> pnp.tril(c)
    Array([[2.       , 0.       ],
           [1.       , 1.4142135]], dtype=float32)
cho_solve:
    >>> factor = pto.scipy.linalg.cho_factor(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    >>> pto.scipy.linalg.cho_solve(factor, pnp.array([2.0, 1.0]))
    Array([0.5, 0. ], dtype=float32)
cholesky:
    >>> pto.scipy.linalg.cholesky(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    Array([[2.       , 1.       ],
           [0.       , 1.4142135]], dtype=float32)
det:
    >>> pto.scipy.linalg.det(pnp.array([[4.0, 2.0], [2.0, 3.0]]))
    Array(8., dtype=float32)
eigh:
    >>> pto.scipy.linalg.eigh(pnp.array([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True)
    Array([1., 3.], dtype=float32)
expm:
    >>> pto.scipy.linalg.expm(pnp.array([[0.0, 1.0], [0.0, 0.0]]))
    Array([[1., 1.],
           [0., 1.]], dtype=float32)
expm_frechet:
    >>> pto.scipy.linalg.expm_frechet(pnp.zeros((2, 2)), pnp.eye(2), compute_expm=False)
    Array([[1., 0.],
           [0., 1.]], dtype=float32)
inv:
    >>> pto.scipy.linalg.inv(pnp.array([[2.0, 0.0], [0.0, 4.0]]))
    Array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
lu:
    >>> p, l, u = pto.scipy.linalg.lu(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> u
    Array([[3.       , 4.       ],
           [0.       , 0.6666666]], dtype=float32)
lu_factor:
    >>> lu, piv = pto.scipy.linalg.lu_factor(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> piv
    Array([1, 1], dtype=int32)
lu_solve:
    >>> factors = pto.scipy.linalg.lu_factor(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> pto.scipy.linalg.lu_solve(factors, pnp.array([5.0, 11.0]))
    Array([1., 2.], dtype=float32)
qr:
    >>> pnp.abs(pto.scipy.linalg.qr(pnp.array([[4.0, 2.0], [2.0, 3.0]]))[1])
    Array([[4.472136 , 3.130495 ],
           [0.       , 1.7888544]], dtype=float32)
solve:
    >>> pto.scipy.linalg.solve(pnp.array([[4.0, 2.0], [2.0, 3.0]]), pnp.array([2.0, 1.0]))
    Array([0.5, 0. ], dtype=float32)
solve_triangular:
    >>> lower = pnp.array([[2.0, 0.0], [1.0, 1.0]])
    >>> pto.scipy.linalg.solve_triangular(lower, pnp.array([4.0, 3.0]), lower=True)
    Array([2., 1.], dtype=float32)
svd:
    >>> pto.scipy.linalg.svd(pnp.array([[4.0, 2.0], [2.0, 3.0]]), compute_uv=False)
    Array([5.561553 , 1.4384472], dtype=float32)
""")
