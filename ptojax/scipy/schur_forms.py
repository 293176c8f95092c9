"""``scipy.linalg.schur``, ``rsf2csf`` and ``hessenberg``, as JAX's.

``schur`` is the Schur primitive (``ops/schur.py``): the real, quasi-triangular form of a
real matrix by default, the complex triangular one for ``output='complex'`` or complex input.
Neither has a derivative, as in JAX.

``rsf2csf`` turns a real Schur form into a complex one, as JAX (and SciPy) do: from the last
row up, each 2x2 diagonal block whose subdiagonal entry is not negligible is split by the
complex Givens rotation that zeroes that entry, built from the block's eigenvalue ``mu``
(the one of positive imaginary part, LAPACK's first), applied to the rows and columns of ``T``
the block touches and to ``Z``'s columns.

``hessenberg`` reduces each matrix by LAPACK's Householder reflectors
(``scipy/householder.py``; ``n - 1`` of them, the last only making the last subdiagonal
entry real), so the result is the one LAPACK's ``gehrd`` gives; ``Q`` is their product. It
is built from array operations in a ``fori_loop`` (so it traces, batches and differentiates
like any of them).
"""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.control_flow import cond, fori_loop
from ptojax.errors import DtypeError, ShapeError
from ptojax.numpy._promote import asarray, promote_inexact
from ptojax.ops.schur import schur as schur_decomposition
from ptojax.scipy.householder import reflect_left, reflect_right, reflector
from ptojax.public import add_examples
from ptojax.source_info import user_frame


def _hermitian_transpose(x):
    return pnp.conj(pnp.swapaxes(x, -1, -2))


def _require_inexact(op, a):
    if not pnp.issubdtype(a.dtype, pnp.inexact):
        raise DtypeError(f"{op} does not accept dtype {a.dtype} at position 0. Accepted dtypes "
                         f"at position 0 are subtypes of floating, complexfloating.",
                         user_frame())


# schur ------------------------------------------------------------------------------------------
def schur(a, output="real"):
    """``(T, Z)`` with ``a = Z T Z^H``: ``T`` quasi upper triangular (``output='real'``, real
    ``a``: 2x2 diagonal blocks for complex eigenvalue pairs) or upper triangular and complex
    (``output='complex'`` or complex ``a``), ``Z`` unitary. The order of the eigenvalues
    along ``T``'s diagonal may differ from LAPACK's (a Schur form is not unique)."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    a = asarray(a, op="schur")
    _require_inexact("schur", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The input to schur must be a square matrix. Got shape "
                         f"{tuple(a.shape)}.")
    return schur_decomposition(a, real=output == "real")


# rsf2csf ----------------------------------------------------------------------------------------
def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form ``(T, Z)`` of a real one (see the module): ``T`` upper
    triangular and complex, with ``Z T Z^H`` unchanged."""
    T, Z = asarray(T, op="rsf2csf"), asarray(Z, op="rsf2csf")
    if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T.shape[-1] != Z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {tuple(Z.shape)} vs. T: "
                         f"{tuple(T.shape)}")
    T, Z = promote_inexact("rsf2csf", T, Z)
    complex_dtype = (T.dtype if pnp.iscomplexobj(T) else
                     pnp.complex128 if T.dtype == pnp.float64 else pnp.complex64)
    T, Z = T.astype(complex_dtype), Z.astype(complex_dtype)
    return pnp.vectorize(_rsf2csf, signature="(n,n),(n,n)->(n,n),(n,n)")(T, Z)


def _rsf2csf(T, Z):
    n = T.shape[0]
    if n == 1:
        return T, Z
    eps = float(pnp.finfo(T.dtype).eps)
    rows, cols = pnp.arange(n)[:, None], pnp.arange(n)[None, :]

    def split_block(m, T, Z):
        a, b, c, d = T[m - 1, m - 1], T[m - 1, m], T[m, m - 1], T[m, m]
        half = (a - d) / 2
        root = pnp.sqrt(half * half + b * c)
        root = pnp.where(root.imag < 0, -root, root)      # LAPACK's first: Im >= 0
        mu = (a + d) / 2 + root - d
        r = pnp.sqrt(pnp.abs(mu) ** 2 + pnp.abs(c) ** 2).astype(T.dtype)
        cs, sn = mu / r, c / r
        rotation = _embedded(n, m, pnp.conj(cs), sn, -sn, cs, T.dtype)
        block_rows = (rows == m - 1) | (rows == m)
        T = pnp.where(block_rows & (cols >= m - 1), rotation @ T, T)
        block_cols = (cols == m - 1) | (cols == m)
        T = pnp.where(block_cols & (rows < m + 1), T @ _hermitian_transpose(rotation), T)
        return T, Z @ _hermitian_transpose(rotation)

    def step(i, state):
        T, Z = state
        m = n - i
        significant = pnp.abs(T[m, m - 1]) > eps * (pnp.abs(T[m - 1, m - 1]) + pnp.abs(T[m, m]))
        T, Z = cond(significant, lambda T, Z: split_block(m, T, Z), lambda T, Z: (T, Z), T, Z)
        return pnp.where((rows == m) & (cols == m - 1), 0, T), Z

    return fori_loop(1, n, step, (T, Z))


def _embedded(n, m, g00, g01, g10, g11, dtype):
    """The identity of order ``n`` with the 2x2 block ``[[g00, g01], [g10, g11]]`` at rows
    and columns ``m - 1, m``."""
    rows, cols = pnp.arange(n)[:, None], pnp.arange(n)[None, :]
    out = pnp.eye(n, dtype=dtype)
    for (i, j), value in (((m - 1, m - 1), g00), ((m - 1, m), g01), ((m, m - 1), g10),
                          ((m, m), g11)):
        out = pnp.where((rows == i) & (cols == j), value, out)
    return out


# hessenberg -------------------------------------------------------------------------------------
def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The upper Hessenberg form ``H`` of each square matrix (``(H, Q)`` with ``a = Q H Q^H``
    for ``calc_q``), by LAPACK's Householder reflectors (see the module)."""
    a = asarray(a, op="hessenberg")
    _require_inexact("hessenberg", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"Argument to Hessenberg reduction must have shape [..., n, n], got "
                         f"shape {tuple(a.shape)}", user_frame())
    n = a.shape[-1]
    if n == 0:
        return (pnp.zeros_like(a), pnp.zeros_like(a)) if calc_q else pnp.zeros_like(a)
    h, q = pnp.vectorize(_hessenberg, signature="(n,n)->(n,n),(n,n)")(a)
    return (h, q) if calc_q else h


def _hessenberg(a):
    n = a.shape[0]

    def reflect(k, state):
        h, q = state
        v, tau = reflector(h[:, k], k + 1)
        h = reflect_right(reflect_left(h, v, tau), v, tau)
        return h, reflect_right(q, v, tau)

    h, q = fori_loop(0, max(n - 1, 0), reflect, (a, pnp.eye(n, dtype=a.dtype)))
    return pnp.triu(h, -1), q


add_examples(globals(), """
schur:
    >>> T, Z = pto.scipy.linalg.schur(pnp.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> pnp.sort(pnp.diagonal(T)).round(4)
    Array([1., 3.], dtype=float32)
rsf2csf:
    >>> T, Z = pto.scipy.linalg.schur(pnp.array([[0.0, -1.0], [1.0, 0.0]]))
    >>> pnp.diagonal(pto.scipy.linalg.rsf2csf(T, Z)[0]).round(4)
    Array([0.+1.j, 0.-1.j], dtype=complex64)
hessenberg:
    >>> a = pnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
    >>> h, q = pto.scipy.linalg.hessenberg(a, calc_q=True)
    >>> (q @ h @ q.T).round(4)
    Array([[ 1.,  2.,  3.],
           [ 4.,  5.,  6.],
           [ 7.,  8., 10.]], dtype=float32)
""")
