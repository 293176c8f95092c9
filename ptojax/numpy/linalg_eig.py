"""``pnp.linalg.eig`` and ``eigvals``: eigen-decomposition of general (non-symmetric) square
matrices, complex results (``ops/eig.py``). Eigenvalues are differentiable; eigenvectors are
not, as in JAX."""
from __future__ import annotations

from typing import NamedTuple

from ptojax.errors import ShapeError
from ptojax.numpy._promote import promote_inexact
from ptojax.ops import eig as _eig
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


def _square(op, a):
    (a,) = promote_inexact(op, a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{op}: needs square matrices of shape (..., n, n), got {a.aval}",
                         user_frame())
    return a


def eig(a):
    """The eigenvalues and right eigenvectors (the columns, unit norm) of each square matrix
    of ``a``, both complex: ``(eigenvalues, eigenvectors)``."""
    w, v = _eig.eig(_square("linalg.eig", a))
    return EigResult(w, v)


def eigvals(a):
    """The (complex) eigenvalues of each square matrix of ``a``."""
    return _eig.eig(_square("linalg.eigvals", a), compute_eigenvectors=False)[0]


_add_examples(globals(), """
eig:
    >>> w, v = pnp.linalg.eig(pnp.array([[2.0, 0.0], [0.0, 3.0]]))
    >>> w
    Array([2.+0.j, 3.+0.j], dtype=complex64)
eigvals:
    >>> pnp.linalg.eigvals(pnp.array([[0.0, -1.0], [1.0, 0.0]]))
    Array([0.+1.j, 0.-1.j], dtype=complex64)
""")
