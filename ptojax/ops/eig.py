"""``eig``: the eigenvalues (and right eigenvectors) of general square matrices, with every
fact — JAX's ``lax.linalg.eig`` without left eigenvectors.

Results are complex (complex64 for float32 input, complex128 for float64) and come from
numpy's LAPACK ``geev``, as JAX's CPU backend: each eigenvector has unit 2-norm and a real
largest component; a matrix LAPACK fails on gives NaNs. With ``vectors=True`` the primitive
also returns ``V^-1`` (the rows are the matching left eigenvectors), which the eigenvalue
derivative uses: ``dw = diag(V^-1 dA V)`` (first-order perturbation theory, as JAX). As in
JAX, derivatives of the eigenvectors are not provided (they are valid only under
assumptions JAX cannot check).
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import UnsupportedError
from ptojax.ir.types import TensorType
from ptojax.ops import lapack
from ptojax.ops.convert import convert_element_type
from ptojax.ops.decomposition_facts import NOT_TILED, _define, check_operand, require_matrices
from ptojax.ops.matrix import diagonal, matmul
from ptojax.ops.tangents import Zero, is_zero
from ptojax.trace import Primitive

_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128,
            dtypes.complex64: dtypes.complex64, dtypes.complex128: dtypes.complex128}


def _eig_abstract(x, *, vectors):
    require_matrices("eig", x, square=True, complex_ok=True)
    n, batch, dtype = x.shape[-1], tuple(x.shape[:-2]), _COMPLEX[x.dtype]
    values = TensorType((*batch, n), dtype)
    if not vectors:
        return [values]
    return [values, TensorType((*batch, n, n), dtype), TensorType((*batch, n, n), dtype)]


def _eig(x, *, vectors):
    dtype = _COMPLEX[x.dtype]

    def decompose(a):
        w, v = np.linalg.eig(a)
        w, v = w.astype(dtype), v.astype(dtype)
        return [w, v, np.linalg.inv(v).astype(dtype)] if vectors else [w]
    return lapack.nan_on_failure(decompose, x)


eig_p = Primitive("eig", _eig_abstract, _eig, multiple_results=True)


def _eig_jvp(primals, tangents, *, vectors):
    (a,), (t,) = primals, tangents
    if vectors:
        raise UnsupportedError("eig: derivatives of non-symmetric eigenvectors are not "
                               "supported (as in JAX, they are valid only under assumptions "
                               "that cannot be checked); differentiate eigvals, or use eigh "
                               "for symmetric matrices")
    w, v, v_inverse = eig_p.bind(a, vectors=True)
    if is_zero(t):
        return [w], [Zero(w.aval)]
    t = convert_element_type(t, w.dtype)
    return [w], [diagonal(matmul(matmul(v_inverse, t), v))]


def _eig_flops(eqn) -> int:
    """Hessenberg reduction and the shifted QR iteration: about ``25 n^3`` (with vectors)."""
    x = eqn.inputs[0].type
    n = x.shape[-1]
    return int(np.prod(x.shape[:-2], dtype=np.int64)) * (25 if eqn.params["vectors"]
                                                          else 10) * n ** 3


def _eig_reference(jnp, lax):
    def run(x, vectors):
        if not vectors:
            return [lax.linalg.eig(x, compute_left_eigenvectors=False,
                                   compute_right_eigenvectors=False)[0]]
        w, v = lax.linalg.eig(x, compute_left_eigenvectors=False)
        return [w, v, jnp.linalg.inv(v)]
    return run


_define(eig_p, _eig_jvp, cost=_eig_flops, reference=_eig_reference, tile=NOT_TILED)


def eig(x, *, compute_eigenvectors=True):
    """``(w, v)``: the complex eigenvalues ``w`` and right eigenvectors (columns of ``v``) of
    each square matrix of ``x`` (float or complex); ``(w,)`` without eigenvectors."""
    check_operand("eig", x, square=True, complex_ok=True)
    if not compute_eigenvectors:
        return tuple(eig_p.bind(x, vectors=False))
    w, v, _ = eig_p.bind(x, vectors=True)
    return w, v
