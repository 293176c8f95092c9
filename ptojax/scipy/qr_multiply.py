"""``scipy.linalg.qr_multiply``: the product of ``a``'s QR factor ``Q`` with ``c``, as JAX's.

JAX applies LAPACK's Householder reflectors (``ormqr``) to ``c`` without forming ``Q``; only
``Q``'s first ``k = min(m, n)`` columns reach the result (JAX pads ``c`` with zero rows for
'left' and keeps ``k`` columns for 'right'), so here the economic ``Q`` is formed and
multiplied: the same values, differentiable through the QR's rule. A complex ``a`` (not
pivoted) gets LAPACK's reflectors as array operations (``scipy/householder.py``), since the
QR primitive is real only.
"""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.errors import UnsupportedError
from ptojax.numpy._promote import broadcast_shapes, promote_inexact
from ptojax.ops import decompositions as dec
from ptojax.public import add_examples
from ptojax.scipy.householder import householder_qr
from ptojax.source_info import user_frame


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """``(Q @ c, r)`` ('left') or ``(c @ Q, r)`` ('right') for the QR factorization ``a = Q r``
    (``Q`` conjugated with ``conjugate``), and the column permutation ``p`` with
    ``pivoting``. Unlike JAX, complex matrices cannot be pivoted (ptojax's pivoted QR is
    real)."""
    a, c = promote_inexact("qr_multiply", a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    if pnp.iscomplexobj(a) and pivoting:
        raise UnsupportedError(f"qr_multiply: pivoting on complex matrices ({a.dtype}) is not "
                               f"supported yet (ptojax's pivoted QR is real only)",
                               user_frame())
    vector = c.ndim == 1
    if vector:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                         f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} "
                         f"rows (expected {k}).")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                         f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} "
                         f"columns (expected {m}).")
    batch = broadcast_shapes("qr_multiply", tuple(a.shape[:-2]), tuple(c.shape[:-2]))
    a = pnp.broadcast_to(a, (*batch, m, n))
    c = pnp.broadcast_to(c, (*batch, *c.shape[-2:]))
    if pnp.iscomplexobj(a):
        q, r = pnp.vectorize(householder_qr, signature="(m,n)->(m,m),(m,n)")(a)
        q, r, p = q[..., :k], r[..., :k, :], []
    else:
        q, r, *p = dec.qr(a, pivoting=pivoting, full_matrices=False)
    q = pnp.conj(q) if conjugate else q
    product = q @ c if mode == "left" else c @ q
    product = product.ravel() if vector else product
    return (product, r, *p)


add_examples(globals(), """
qr_multiply:
    >>> a = pnp.array([[3.0, 1.0], [4.0, 2.0]])
    >>> cq, r = pto.scipy.linalg.qr_multiply(a, pnp.eye(2), mode="left")
    >>> (cq @ r).round(4)
    Array([[3., 1.],
           [4., 2.]], dtype=float32)
""")
