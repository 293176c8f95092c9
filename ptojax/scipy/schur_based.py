"""``scipy.linalg.funm`` and ``solve_sylvester``: the matrix functions and equations JAX solves
on a complex Schur form ``A = Z T Z^H`` (``ops/schur.py``). Like JAX's, they have no
derivative (the Schur decomposition has none).

``funm`` evaluates ``func`` on ``diag(T)`` and fills the rest of the upper triangular ``F``
by Parlett's recurrence (Golub and Van Loan, Algorithm 11.1.1), one superdiagonal at a time:
with the diagonals below ``d`` known, ``(T F - F T)[i, i + d]`` is exactly the recurrence's
numerator, divided by ``T[j, j] - T[i, i]`` (left as is where that is 0, as JAX's).

``solve_sylvester`` solves ``A X + X B = C`` as ``R Y + Y S = F`` with ``R`` the Schur form of
``A``, ``S`` the conjugate transpose of ``B^H``'s (lower triangular) and ``F = U^H C V``: one
triangular solve ``(R + S[j, j] I) y_j = f_j - Y s_j`` per column from the last, then
``X = U Y V^H``. Its 'eigen' method diagonalizes both instead. As in JAX, the result is NaN
where some eigenvalues of ``A`` and ``-B`` are closer than ``tol``.
"""
from __future__ import annotations

import functools

import numpy as np

from ptojax import numpy as pnp
from ptojax.control_flow import cond, fori_loop
from ptojax.numpy._promote import asarray, promote_inexact
from ptojax.numpy.linalg import eig, norm, solve
from ptojax.ops import decompositions as dec
from ptojax.ops.schur import schur
from ptojax.public import add_examples


def _hermitian_transpose(x):
    return pnp.conj(pnp.swapaxes(x, -1, -2))


# funm -------------------------------------------------------------------------------------------
def funm(A, func, disp=True):
    """``func`` of the square matrix ``A`` (``func`` maps an array of eigenvalues elementwise),
    by Parlett's recurrence on ``A``'s complex Schur form; always complex, as JAX's. With
    ``disp=False``, also JAX's estimate of the relative error. ``A``'s complex Schur form is
    computed directly (JAX goes through the real one and ``rsf2csf``): the same matrix up to
    rounding."""
    A = asarray(A, op="funm")
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("expected square array_like input")
    (A,) = promote_inexact("funm", A)
    T, Z = schur(A)
    F = pnp.diag(asarray(func(pnp.diagonal(T)), op="funm")).astype(T.dtype)
    F, min_gap = _parlett(F, T)
    F = Z @ F @ _hermitian_transpose(Z)
    if disp:
        return F
    tol = float(np.finfo(np.float32 if F.dtype == pnp.complex64 else np.float64).eps)
    min_gap = pnp.where(min_gap == 0.0, tol, min_gap)
    error = pnp.where(pnp.any(pnp.isinf(F)), np.inf, pnp.minimum(1, pnp.maximum(
        tol, (tol / min_gap) * norm(pnp.triu(T, 1), 1))))
    return F, error


def _parlett(F, T):
    """``F`` (holding ``f(diag T)``) completed by Parlett's recurrence, and the smallest
    ``|T[j, j] - T[i, i]|`` over ``i < j`` (and ``|T[0, 0]|``), as JAX's ``minden``."""
    n = T.shape[0]
    diagonal = pnp.diagonal(T)
    gaps = diagonal[None, :] - diagonal[:, None]
    rows, cols = pnp.arange(n)[:, None], pnp.arange(n)[None, :]
    upper = cols > rows
    min_gap = pnp.minimum(pnp.abs(T[0, 0]), pnp.min(pnp.where(upper, pnp.abs(gaps), np.inf)))

    def fill_superdiagonal(d, F):
        numerator = T @ F - F @ T
        value = pnp.where(gaps != 0, numerator / pnp.where(gaps != 0, gaps, 1), numerator)
        return pnp.where(cols - rows == d, value, F)
    return fori_loop(1, n, fill_superdiagonal, F), min_gap


# solve_sylvester --------------------------------------------------------------------------------
def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """``X`` with ``A X + X B = C`` for square ``A`` ``(m, m)`` and ``B`` ``(n, n)`` (stacks
    broadcast), by ``method`` 'schur' or 'eigen'; NaNs where eigenvalues of ``A`` and ``-B``
    are within ``tol`` (see the module). Real unless ``C`` is complex."""
    A, B, C = promote_inexact("solve_sylvester", A, B, C)
    m, n = C.shape[-2:]
    if tuple(A.shape[-2:]) != (m, m) or tuple(B.shape[-2:]) != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {tuple(A.shape)}\n"
                         f"B: {tuple(B.shape)}\nC: {tuple(C.shape)}")
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         f'"schur" or "eigen".')
    one = functools.partial(_sylvester, method=method, tol=tol)
    return pnp.vectorize(one, signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)


def _sylvester(A, B, C, method, tol):
    if method == "schur":
        X, eig_a, eig_b = _sylvester_schur(A, B, C)
    else:
        X, eig_a, eig_b = _sylvester_eigen(A, B, C)
    if not pnp.iscomplexobj(C):
        X = X.real
    close = pnp.any(pnp.abs(eig_a[:, None] + eig_b[None, :]) < tol)
    return cond(close, lambda X: pnp.full_like(X, np.nan), lambda X: X, X)


def _sylvester_schur(A, B, C):
    R, U = schur(A)
    S, V = schur(_hermitian_transpose(B))
    S = _hermitian_transpose(S)                      # lower triangular
    F = _hermitian_transpose(U) @ C.astype(R.dtype) @ V
    m, n = F.shape
    eye = pnp.eye(m, dtype=R.dtype)

    def column(k, Y):
        j = n - 1 - k
        rhs = F[:, j] - Y @ S[:, j]
        y = dec.triangular_solve(R + S[j, j] * eye, rhs[:, None], left_side=True, lower=False)
        return pnp.where(pnp.arange(n)[None, :] == j, y, Y)

    Y = fori_loop(0, n, column, pnp.zeros_like(F))
    return U @ Y @ _hermitian_transpose(V), pnp.diagonal(R), pnp.diagonal(S)


def _sylvester_eigen(A, B, C):
    eig_a, UA = eig(A)
    eig_b, UB = eig(B)
    F = _complex_solve(UA, C.astype(eig_a.dtype) @ UB)
    Y = F / (eig_a[:, None] + eig_b[None, :])
    UB_inverse = _complex_solve(UB, pnp.eye(UB.shape[0], dtype=UB.dtype))
    return UA @ Y @ UB_inverse, eig_a, eig_b


def _complex_solve(a, b):
    """``a^-1 b`` for complex ``a`` by the real system ``[[re, -im], [im, re]]`` (ptojax's LU
    is real only)."""
    n = a.shape[0]
    real = pnp.block([[a.real, -a.imag], [a.imag, a.real]])
    x = solve(real, pnp.concatenate([b.real, b.imag], axis=0))
    return x[:n] + 1j * x[n:]


add_examples(globals(), """
funm:
    >>> A = pnp.array([[1.0, 2.0], [0.0, 3.0]])
    >>> pto.scipy.linalg.funm(A, lambda x: x * x).real.round(4)
    Array([[1., 8.],
           [0., 9.]], dtype=float32)
solve_sylvester:
    >>> A = pnp.array([[2.0, 0.0], [0.0, 3.0]])
    >>> pto.scipy.linalg.solve_sylvester(A, A, pnp.array([[4.0, 5.0], [5.0, 6.0]])).round(4)
    Array([[1., 1.],
           [1., 1.]], dtype=float32)
""")
