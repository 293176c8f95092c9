"""``scipy.linalg.sqrtm``: the principal square root of a square matrix, by the complex Schur
method of Bjorck and Hammarling (1983), as JAX: ``A = Z T Z^H`` (``ops/schur.py``), the upper
triangular root ``R`` of ``T`` (``R R = T``), and ``sqrtm(A) = Z R Z^H``. Results are complex
(complex64 for float32 input), as JAX's; there is no derivative (Schur has none, as in JAX).

``R`` is filled one superdiagonal at a time: its diagonal is ``sqrt(diag T)``, and entry
``(i, i + d)`` is ``(T - R R)[i, i + d] / (R_ii + R_jj)``, where ``(R R)[i, i + d]`` is, once
the diagonals below ``d`` are set, exactly the sum over ``i < k < i + d`` the recurrence needs
(an entry whose numerator is 0 is 0, as JAX's, so a singular ``T`` stays finite where it
can).
"""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.control_flow import fori_loop
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.numpy._promote import promote_inexact
from ptojax.ops.schur import schur
from ptojax.public import add_examples
from ptojax.source_info import user_frame


def sqrtm(A, blocksize=1):
    """The principal square root of the square matrix ``A``: complex ``X`` with ``X @ X = A``
    (see the module). ``blocksize`` other than 1 is not supported, as in JAX."""
    if blocksize > 1:
        raise UnsupportedError("sqrtm: the blocked version (blocksize > 1) is not implemented, "
                               "as in JAX; use blocksize=1", user_frame())
    (A,) = promote_inexact("sqrtm", A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ShapeError(f"sqrtm: needs a square matrix of shape (N, N), got {A.aval}",
                         user_frame())
    T, Z = schur(A)
    R = _triangular_root(T)
    return pnp.matmul(pnp.matmul(Z, R), pnp.conj(Z.T))


def _triangular_root(T):
    n = T.shape[0]
    root_diag = pnp.sqrt(pnp.diagonal(T))
    rows, cols = pnp.arange(n)[:, None], pnp.arange(n)[None, :]
    sums = root_diag[:, None] + root_diag[None, :]

    def fill_superdiagonal(d, R):
        residual = T - R @ R
        value = pnp.where(residual == 0, 0, residual / sums)
        return pnp.where(cols - rows == d, value, R)

    return fori_loop(1, n, fill_superdiagonal, pnp.diag(root_diag))


add_examples(globals(), """
sqrtm:
    >>> pto.scipy.linalg.sqrtm(pnp.array([[4.0, 1.0], [0.0, 9.0]]))
    Array([[2. +0.j, 0.2+0.j],
           [0. +0.j, 3. +0.j]], dtype=complex64)
""")
