"""``eig``: the eigenvalues (and right eigenvectors) of general square matrices, with every
fact — JAX's ``lax.linalg.eig`` without left eigenvectors.

Results are complex (complex64 for float32 input, complex128 for float64) and come from
numpy's LAPACK ``geev``, as JAX's CPU backend: each eigenvector has unit 2-norm and a real
largest component; a matrix LAPACK fails on gives NaNs. With ``vectors=True`` the primitive
also returns ``V^-1`` (the rows are the matching left eigenvectors), which the eigenvalue
derivative uses: ``dw = diag(V^-1 dA V)`` (first-order perturbation theory, as JAX). As in
JAX, derivatives of the eigenvectors are refused unless ``vector_derivatives`` (JAX's
``enable_eigvec_derivs``) opts in: they are valid only for distinct eigenvalues and a
unique largest component per eigenvector (geev's normalisation), which cannot be checked.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import UnsupportedError
from ptojax.ir.types import TensorType
from ptojax.ops import lapack
from ptojax.ops.arithmetic import abs as abs_, add, div, mul, neg, sub
from ptojax.ops.broadcast import reduce_sum
from ptojax.ops.complex_parts import complex as complex_, conj_p, imag, real
from ptojax.ops.convert import convert_element_type
from ptojax.ops.decomposition_facts import NOT_TILED, _define, check_operand, require_matrices
from ptojax.ops.logic import eq
from ptojax.ops.matrix import by_column, diagonal, eye, matmul, matrix_transpose as mT
from ptojax.ops.reductions import argmax
from ptojax.ops.shape import expand_dims
from ptojax.ops.slicing import broadcasted_iota
from ptojax.ops.tangents import Zero, is_zero
from ptojax.trace import Primitive

_COMPLEX = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128,
            dtypes.complex64: dtypes.complex64, dtypes.complex128: dtypes.complex128}


def _eig_abstract(x, *, vectors, vector_derivatives=False):
    require_matrices("eig", x, square=True, complex_ok=True)
    n, batch, dtype = x.shape[-1], tuple(x.shape[:-2]), _COMPLEX[x.dtype]
    values = TensorType((*batch, n), dtype)
    if not vectors:
        return [values]
    return [values, TensorType((*batch, n, n), dtype), TensorType((*batch, n, n), dtype)]


def _eig(x, *, vectors, vector_derivatives=False):
    dtype = _COMPLEX[x.dtype]

    def decompose(a):
        w, v = np.linalg.eig(a)
        w, v = w.astype(dtype), v.astype(dtype)
        return [w, v, np.linalg.inv(v).astype(dtype)] if vectors else [w]
    return lapack.nan_on_failure(decompose, x)


eig_p = Primitive("eig", _eig_abstract, _eig, multiple_results=True)


def _eig_jvp(primals, tangents, *, vectors, vector_derivatives=False):
    (a,), (t,) = primals, tangents
    if vectors and not vector_derivatives:
        raise UnsupportedError("eig: derivatives of non-symmetric eigenvectors are not "
                               "supported (as in JAX, they are valid only under assumptions "
                               "that cannot be checked); differentiate eigvals, or use eigh "
                               "for symmetric matrices, or opt in with "
                               "lax.linalg.eig(..., enable_eigvec_derivs=True)")
    w, v, v_inverse = outs = eig_p.bind(a, vectors=True, vector_derivatives=vector_derivatives)
    if is_zero(t):
        return (outs if vectors else [w]), [Zero(o.aval) for o in (outs if vectors else [w])]
    p = matmul(matmul(v_inverse, convert_element_type(t, w.dtype)), v)
    if not vectors:
        return [w], [diagonal(p)]
    dv = _eigenvector_tangent(w, v, p)
    return outs, [diagonal(p), dv, neg(matmul(matmul(v_inverse, dv), v_inverse))]


def _eigenvector_tangent(w, v, p):
    """``dV`` from ``P = V^-1 dA V`` (non-degenerate perturbation theory): ``U = V (F * P)``
    with ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, plus the multiple ``c_j v_j`` that
    keeps geev's normalisation — unit 2-norm (``Re(v_j^H dv_j) = 0``) and a real largest
    component ``v[k_j, j]`` (``Im(dv[k_j, j]) = 0``)."""
    n = w.shape[-1]
    identity = eye(n, w.dtype, w.shape[:-1])
    w_cols = by_column(w, identity.shape)
    f = sub(div(1, sub(add(identity, w_cols), mT(w_cols))), identity)
    u = matmul(v, mul(f, p))
    rows = v.ndim - 2
    largest = convert_element_type(eq(broadcasted_iota(dtypes.int32, v.shape, rows),
                                      expand_dims(argmax(abs_(v), rows), (rows,))), v.dtype)
    along = real(reduce_sum(mul(conj_p.bind(v), u), (rows,)))
    pivot_u = reduce_sum(mul(largest, u), (rows,))
    pivot_v = real(reduce_sum(mul(largest, v), (rows,)))
    c = complex_(neg(along), neg(div(imag(pivot_u), pivot_v)))
    return add(u, mul(v, by_column(c, v.shape)))


def _eig_flops(eqn) -> int:
    """Hessenberg reduction and the shifted QR iteration: about ``25 n^3`` (with vectors)."""
    x = eqn.inputs[0].type
    n = x.shape[-1]
    return int(np.prod(x.shape[:-2], dtype=np.int64)) * (25 if eqn.params["vectors"]
                                                          else 10) * n ** 3


def _eig_reference(jnp, lax):
    def run(x, vectors, vector_derivatives=False):
        if not vectors:
            return [lax.linalg.eig(x, compute_left_eigenvectors=False,
                                   compute_right_eigenvectors=False)[0]]
        w, v = lax.linalg.eig(x, compute_left_eigenvectors=False,
                              enable_eigvec_derivs=vector_derivatives)
        return [w, v, jnp.linalg.inv(v)]
    return run


_define(eig_p, _eig_jvp, cost=_eig_flops, reference=_eig_reference, tile=NOT_TILED)


def eig(x, *, compute_eigenvectors=True):
    """``(w, v)``: the complex eigenvalues ``w`` and right eigenvectors (columns of ``v``) of
    each square matrix of ``x`` (float or complex); ``(w,)`` without eigenvectors."""
    check_operand("eig", x, square=True, complex_ok=True)
    if not compute_eigenvectors:
        return tuple(eig_p.bind(x, vectors=False))
    w, v, _ = eig_p.bind(x, vectors=True, vector_derivatives=False)
    return w, v
