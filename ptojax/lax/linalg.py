"""``pto.lax.linalg``: the matrix decompositions and solves, with JAX's ``jax.lax.linalg`` names
and signatures. Most are defined beside their primitives (``ops/decompositions.py``,
``ops/spectral.py``, ``ops/eig.py``, ``ops/schur.py``, ``ops/householder_forms.py``,
``ops/rank_updates.py``, ``ops/tridiagonal_solve.py``) and QDWH in ``lax/qdwh.py``; the
wrappers here give ``eig``, ``eigh``, ``schur`` and ``svd`` JAX's keywords (the algorithm
choices are those of JAX's CPU backend: the host runs LAPACK's).

``eig_p`` and ``schur_p`` are ptojax's primitives for those decompositions; their
parameters differ from JAX's (``eig_p`` takes ``vectors`` and also returns ``V^-1``,
``schur_p`` takes ``real``): ``eig`` and ``schur`` translate.
"""
from __future__ import annotations

import enum
import warnings

from ptojax import dtypes
from ptojax.lax.qdwh import qdwh
from ptojax.ops.arithmetic import abs as abs_, div, mul
from ptojax.ops.broadcast import reduce_sum
from ptojax.ops.convert import convert_element_type
from ptojax.ops.decomposition_facts import check_operand
from ptojax.ops.decompositions import (cholesky, cholesky_p, eigh as _eigh, eigh_p, lu, lu_p,
                                       lu_pivots_to_permutation, lu_pivots_to_permutation_p,
                                       qr, qr_p, svd as _svd, svd_p, triangular_solve,
                                       triangular_solve_p)
from ptojax.ops.eig import eig_p
from ptojax.ops.householder_forms import (hessenberg, hessenberg_p, householder_product,
                                          householder_product_p, ormqr, ormqr_p, tridiagonal,
                                          tridiagonal_p)
from ptojax.ops.logic import eq
from ptojax.ops.matrix import conjugate_transpose
from ptojax.ops.rank_updates import (cholesky_update, cholesky_update_p, symmetric_product,
                                     symmetric_product_p)
from ptojax.ops.reductions import argmax
from ptojax.ops.schur import schur_p
from ptojax.ops.shape import expand_dims
from ptojax.ops.slicing import broadcasted_iota
from ptojax.ops.transcendental import sqrt
from ptojax.ops.tridiagonal_solve import tridiagonal_solve, tridiagonal_solve_p
from ptojax.public import add_examples as _add_examples, dir_function

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p",
           "cholesky_update", "cholesky_update_p", "eig", "eig_p", "eigh", "eigh_p",
           "hessenberg", "hessenberg_p", "householder_product", "householder_product_p", "lu",
           "lu_p", "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "ormqr",
           "ormqr_p", "qdwh", "qr", "qr_p", "schur", "schur_p", "svd", "svd_p",
           "symmetric_product", "symmetric_product_p", "triangular_solve",
           "triangular_solve_p", "tridiagonal", "tridiagonal_p", "tridiagonal_solve",
           "tridiagonal_solve_p"]
__dir__ = dir_function(__all__)


class EigImplementation(enum.Enum):
    """The algorithm of ``eig``: only ``LAPACK`` (the host's) runs here, as on JAX's CPU.

    >>> pto.lax.linalg.EigImplementation.LAPACK.value
    'lapack'
    """
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """The algorithm of ``eigh``: only ``QR`` (LAPACK's) runs here, as on JAX's CPU.

    >>> pto.lax.linalg.EighImplementation.QR.value
    'qr'
    """
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """The algorithm of ``svd``: ``DEFAULT``, ``QR`` and ``DIVIDE_AND_CONQUER`` run LAPACK's
    SVD on the host; ``JACOBI`` and ``POLAR`` are not available on CPU, as in JAX.

    >>> pto.lax.linalg.SvdAlgorithm.DIVIDE_AND_CONQUER.value
    'divide_and_conquer'
    """
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


# eig -------------------------------------------------------------------------------------------
def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):
    """``[w, vl, vr]``: the complex eigenvalues ``w`` of each square matrix of ``x``, its left
    eigenvectors (columns of ``vl``: ``vl^H x = diag(w) vl^H``) and right ones (columns of
    ``vr``), each included only when asked for; eigenvectors have unit 2-norm and a real
    largest component, as LAPACK's ``geev``. A matrix LAPACK fails on gives NaNs.

    As in JAX, only the eigenvalues have a derivative unless ``enable_eigvec_derivs`` opts in
    to the eigenvectors' (valid for distinct eigenvalues and a unique largest component per
    eigenvector, which cannot be checked)."""
    if use_magma is not None:
        warnings.warn("use_magma is deprecated, please use "
                      "implementation=EigImplementation.MAGMA instead.", DeprecationWarning,
                      stacklevel=2)
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    if implementation not in (None, EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on CPU.")
    check_operand("eig", x, square=True, complex_ok=True)
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        return list(eig_p.bind(x, vectors=False, vector_derivatives=False))
    w, vr, vr_inverse = eig_p.bind(x, vectors=True,
                                   vector_derivatives=bool(enable_eigvec_derivs))
    out = [w]
    if compute_left_eigenvectors:
        out.append(_geev_normalized(conjugate_transpose(vr_inverse)))
    if compute_right_eigenvectors:
        out.append(vr)
    return out


def _geev_normalized(v):
    """The columns of ``v`` scaled to unit 2-norm with their largest component real
    (positive), as LAPACK's ``geev`` returns eigenvectors."""
    magnitude = abs_(v)
    norms = sqrt(reduce_sum(mul(magnitude, magnitude), (v.ndim - 2,)))
    rows = v.ndim - 2
    largest = eq(broadcasted_iota(dtypes.int32, v.shape, rows),
                 expand_dims(argmax(magnitude, rows), (rows,)))
    pivot = reduce_sum(mul(v, convert_element_type(largest, v.dtype)), (rows,))
    phase = div(pivot, convert_element_type(abs_(pivot), v.dtype))
    return div(v, expand_dims(mul(phase, convert_element_type(norms, v.dtype)), (rows,)))


# eigh, svd, schur: JAX's keywords --------------------------------------------------------------
def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None):
    """``(v, w)``: the eigenvectors (columns of ``v``) and ascending eigenvalues ``w`` of each
    symmetric matrix. With ``symmetrize_input`` of ``(x + x^T) / 2``; without, only the
    ``lower`` (or upper) triangle is read. ``subset_by_index=(lo, hi)`` keeps eigenpairs
    ``lo..hi-1``. ``implementation`` ``None`` or ``QR`` (LAPACK's, the host's)."""
    if implementation == EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU")
    if implementation == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    return _eigh(x, lower=lower, symmetrize_input=symmetrize_input,
                 sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index)


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """``(u, s, vt)`` with ``x = u diag(s) vt`` and ``s`` descending (only ``s`` without
    ``compute_uv``); ``u`` is ``(m, m)`` and ``vt`` ``(n, n)`` with ``full_matrices``, else
    ``(m, k)`` and ``(k, n)``, ``k = min(m, n)``. ``algorithm``: ``None``, ``DEFAULT``, ``QR``
    or ``DIVIDE_AND_CONQUER`` (LAPACK's SVD on the host)."""
    if algorithm not in (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.QR,
                         SvdAlgorithm.DIVIDE_AND_CONQUER):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on "
                                  "CPU.")
    return _svd(x, full_matrices=full_matrices, compute_uv=compute_uv,
                subset_by_index=subset_by_index)


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """``[T, Q]`` with ``x = Q T Q^H`` for each square matrix: ``T`` quasi upper triangular
    for real ``x`` (2x2 diagonal blocks for complex eigenvalue pairs), upper triangular for
    complex ``x``, ``Q`` orthogonal (unitary); ``[T]`` without ``compute_schur_vectors``. The
    order of the eigenvalues along ``T``'s diagonal may differ from LAPACK's.
    ``select_callable`` is unused and sorting not implemented, as in JAX."""
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented.")
    check_operand("schur", x, square=True, complex_ok=True)
    t, q = schur_p.bind(x, real=not dtypes.is_complex(x.dtype))
    return [t, q] if compute_schur_vectors else [t]


_add_examples(globals(), """
eigh:
    >>> v, w = pto.lax.linalg.eigh(pnp.array([[2.0, 1.0], [1.0, 2.0]]),
    ...                            implementation=pto.lax.linalg.EighImplementation.QR)
    >>> w
    Array([1., 3.], dtype=float32)
svd:
    >>> pto.lax.linalg.svd(pnp.array([[4.0, 2.0], [2.0, 3.0]]), compute_uv=False,
    ...                    algorithm=pto.lax.linalg.SvdAlgorithm.QR)
    Array([5.561553 , 1.4384472], dtype=float32)
eig:
    >>> w, vl, vr = pto.lax.linalg.eig(pnp.array([[2.0, 0.0], [0.0, 3.0]]))
    >>> w
    Array([2.+0.j, 3.+0.j], dtype=complex64)
schur:
    >>> t, q = pto.lax.linalg.schur(pnp.array([[2.0, 1.0], [0.0, 3.0]]))
    >>> pnp.diagonal(t)
    Array([2., 3.], dtype=float32)
""")
