"""LAPACK's packed Householder forms, with every fact: ``hessenberg`` (gehrd), ``tridiagonal``
(sytrd/hetrd), ``householder_product`` (orgqr/ungqr) and ``ormqr`` (ormqr/unmqr) — JAX's
``lax.linalg`` primitives of those names.

A reduction returns the reduced matrix with the reflectors packed below (``tridiagonal`` with
``lower=False``: above) the band it keeps, and their scalars ``taus``: reflector ``i`` is
``H_i = I - tau_i v_i v_i^H`` with ``v_i`` one at its pivot row and the packed entries beyond
it (LAPACK's ``larfg``: ``H_i^H`` maps the column to ``beta e_1``, ``beta`` real). The product
of the reflectors is the orthogonal (unitary) factor, which ``householder_product`` forms and
``ormqr`` applies.

numpy has no such routines, so the host runs LAPACK's unblocked algorithms here, one matrix
of the stack at a time, in float64 / complex128 (results in the input's dtype). As in JAX,
none of them has a derivative.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.ir.types import TensorType
from ptojax.ops.checks import fmt_types
from ptojax.ops.decomposition_facts import _define, _stack_size, require_matrices
from ptojax.public import add_examples as _add_examples
from ptojax.trace import Primitive, Unsupported

_REAL = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _no_derivative(name):
    return Unsupported(f"{name} has no derivative (as in JAX): differentiate the "
                       f"decomposition it serves instead")


def _working(x):
    """``x`` in the precision the host computes in (a fresh copy)."""
    return np.array(x, np.complex128 if np.iscomplexobj(x) else np.float64)


def _stacked(one, x, *others):
    """``one`` applied to each matrix of the stack of ``x`` (and of ``others``, which share
    it): a list of stacked results."""
    stack = x.shape[:-2]
    results = [one(x[i], *(o[i] for o in others)) for i in np.ndindex(*stack)]
    if not results:
        return [np.zeros(stack + r.shape, r.dtype)
                for r in one(np.zeros(x.shape[-2:], x.dtype),
                             *(np.zeros(o.shape[len(stack):], o.dtype) for o in others))]
    return [np.stack([r[k] for r in results]).reshape(stack + results[0][k].shape)
            for k in range(len(results[0]))]


def larfg(alpha, x):
    """``(beta, tau, tail)`` of LAPACK's reflector for the column ``[alpha; x]``:
    ``H^H [alpha; x] = [beta; 0]`` with ``H = I - tau v v^H``, ``v = [1; tail]``."""
    norm = np.linalg.norm(x)
    if norm == 0 and np.imag(alpha) == 0:
        return alpha, 0 * alpha, np.zeros_like(x)
    beta = -np.copysign(np.sqrt(abs(alpha) ** 2 + norm ** 2), np.real(alpha))
    return beta, (beta - alpha) / beta, x / (alpha - beta)


def _reflect_both(a, rows, v, tau):
    """``a <- H^H a H`` with ``H`` acting on ``rows`` (``v`` spans them)."""
    a[rows, :] -= np.conj(tau) * np.outer(v, v.conj() @ a[rows, :])
    a[:, rows] -= tau * np.outer(a[:, rows] @ v, v.conj())


# hessenberg ------------------------------------------------------------------------------------
def _hessenberg_abstract(a):
    require_matrices("hessenberg", a, square=True, complex_ok=True)
    if a.shape[-1] == 0:
        raise ShapeError(f"hessenberg: needs non-empty square matrices, got {a}")
    return [a.strip_weak(), TensorType((*a.shape[:-2], a.shape[-1] - 1), a.dtype)]


def _hessenberg_one(a):
    h, n = _working(a), a.shape[0]
    taus = np.zeros(n - 1, h.dtype)
    for i in range(n - 1):
        beta, tau, tail = larfg(h[i + 1, i], h[i + 2:, i])
        v = np.concatenate([[1], tail])
        h[i + 1, i], h[i + 2:, i] = beta, 0
        h[i + 1:, i + 1:] -= np.conj(tau) * np.outer(v, v.conj() @ h[i + 1:, i + 1:])
        h[:, i + 1:] -= tau * np.outer(h[:, i + 1:] @ v, v.conj())
        h[i + 2:, i], taus[i] = tail, tau
    return [h.astype(a.dtype), taus.astype(a.dtype)]


hessenberg_p = Primitive("hessenberg", _hessenberg_abstract,
                         lambda a: _stacked(_hessenberg_one, a), multiple_results=True)
_define(hessenberg_p, _no_derivative("hessenberg"),
        cost=lambda eqn: _stack_size(eqn.inputs[0].type) * 10 * eqn.inputs[0].type.shape[-1]
        ** 3 // 3,
        reference=lambda jnp, lax: lambda a: list(lax.linalg.hessenberg(a)))


def hessenberg(a):
    """``(a, taus)``: each square matrix reduced to upper Hessenberg form (its upper triangle
    and first subdiagonal), the Householder reflectors packed below the subdiagonal and their
    scalars in ``taus`` (LAPACK's ``gehrd``)."""
    return tuple(hessenberg_p.bind(a))


# tridiagonal -----------------------------------------------------------------------------------
def _tridiagonal_abstract(a, *, lower):
    require_matrices("tridiagonal", a, square=True, complex_ok=True)
    n = a.shape[-1]
    if n == 0:
        raise ShapeError(f"tridiagonal: needs non-empty square matrices, got {a}")
    stack, real = tuple(a.shape[:-2]), _REAL.get(a.dtype, a.dtype)
    return [a.strip_weak(), TensorType((*stack, n), real), TensorType((*stack, n - 1), real),
            TensorType((*stack, n - 1), a.dtype)]


def _hermitian_from(a, lower):
    """The Hermitian matrix whose ``lower`` (or upper) triangle ``a`` holds (real diagonal)."""
    t = np.tril(a, -1) if lower else np.triu(a, 1)
    return t + np.conj(t.T) + np.diag(np.real(np.diag(a)))


def _tridiagonal_one(a, lower):
    n = a.shape[0]
    full, out = _hermitian_from(_working(a), lower), _working(a)
    e, taus = np.zeros(n - 1), np.zeros(n - 1, full.dtype)
    steps = range(n - 1) if lower else reversed(range(n - 1))
    for i in steps:
        if lower:       # annihilate column i below the subdiagonal
            rows, alpha, x = slice(i + 1, n), full[i + 1, i], full[i + 2:, i]
        else:           # annihilate column i + 1 above the superdiagonal
            rows, alpha, x = slice(0, i + 1), full[i, i + 1], full[:i, i + 1]
        beta, tau, tail = larfg(alpha, x)
        v = np.concatenate([[1], tail]) if lower else np.concatenate([tail, [1]])
        _reflect_both(full, rows, v, tau)
        e[i], taus[i] = np.real(beta), tau
        if lower:
            out[i + 1, i], out[i + 2:, i] = beta, tail
        else:
            out[i, i + 1], out[:i, i + 1] = beta, tail
    d = np.real(np.diag(full))
    np.fill_diagonal(out, d)
    real = np.finfo(a.dtype).dtype
    return [out.astype(a.dtype), d.astype(real), e.astype(real), taus.astype(a.dtype)]


tridiagonal_p = Primitive("tridiagonal", _tridiagonal_abstract,
                          lambda a, *, lower: _stacked(lambda m: _tridiagonal_one(m, lower), a),
                          multiple_results=True)
_define(tridiagonal_p, _no_derivative("tridiagonal"),
        cost=lambda eqn: _stack_size(eqn.inputs[0].type) * 4 * eqn.inputs[0].type.shape[-1]
        ** 3 // 3,
        reference=lambda jnp, lax: lambda a, lower: list(lax.linalg.tridiagonal(
            a, lower=lower)))


def tridiagonal(a, *, lower=True):
    """``(a, d, e, taus)``: each symmetric (Hermitian) matrix, read from its ``lower`` (or
    upper) triangle, reduced to tridiagonal form ``Q^H A Q`` with diagonal ``d`` and
    sub-(super-)diagonal ``e`` (real); ``a`` holds them and the Householder reflectors of
    ``Q`` packed below (above) the band, ``taus`` their scalars (LAPACK's ``sytrd``)."""
    return tuple(tridiagonal_p.bind(a, lower=bool(lower)))


# householder_product ---------------------------------------------------------------------------
def _same_dtype_and_stack(name, *xs):
    if len({x.dtype for x in xs}) != 1:
        raise DtypeError(f"{name}: operands have different dtypes ({fmt_types(xs)}); convert "
                         f"them to one dtype first")
    ranks = [2 if i != 1 else 1 for i in range(len(xs))]
    if len({tuple(x.shape[:x.ndim - r]) for x, r in zip(xs, ranks)}) != 1:
        raise ShapeError(f"{name}: the operands' stacks (leading dimensions) differ "
                         f"({fmt_types(xs)}); broadcast them to one stack first")


def _householder_product_abstract(a, taus):
    require_matrices("householder_product", a, complex_ok=True)
    require_matrices("householder_product", taus, rank=1)
    _same_dtype_and_stack("householder_product", a, taus)
    m, n = a.shape[-2:]
    if m < n:
        raise ShapeError(f"The first argument to householder_product must have at least as "
                         f"many rows as columns, got shape {tuple(a.shape)}")
    if taus.shape[-1] > min(m, n):
        raise ShapeError("The second argument to householder_product must not have more rows "
                         "than the minimum of the first argument's rows and columns.")
    return a.strip_weak()


def _reflectors_product(a, taus, columns):
    """The first ``columns`` columns of ``H_0 H_1 ... H_{k-1}`` (``k = len(taus)``), each
    ``v_i`` read from column ``i`` of ``a`` below the diagonal."""
    a, taus = _working(a), _working(taus)
    q = np.eye(a.shape[0], columns, dtype=a.dtype)
    for i in reversed(range(len(taus))):
        v = np.concatenate([[1], a[i + 1:, i]])
        q[i:, :] -= taus[i] * np.outer(v, v.conj() @ q[i:, :])
    return q


def _householder_product_one(a, taus):
    return [_reflectors_product(a, taus, a.shape[1]).astype(a.dtype)]


householder_product_p = Primitive(
    "householder_product", _householder_product_abstract,
    lambda a, taus: _stacked(_householder_product_one, a, taus)[0])
_define(householder_product_p, _no_derivative("householder_product"),
        cost=lambda eqn: _stack_size(eqn.inputs[0].type) * 4 * eqn.inputs[0].type.shape[-2]
        * eqn.inputs[0].type.shape[-1] * eqn.inputs[1].type.shape[-1],
        reference=lambda jnp, lax: lambda a, taus: lax.linalg.householder_product(a, taus))


def householder_product(a, taus):
    """The product ``H_0 ... H_{k-1}`` of the Householder reflectors packed below the
    diagonal of each ``(m, n)`` matrix of ``a`` (``m >= n``) with scalars ``taus``
    (``k <= n``): its first ``n`` columns, orthonormal (LAPACK's ``orgqr``)."""
    return householder_product_p.bind(a, taus)


# ormqr -----------------------------------------------------------------------------------------
def _ormqr_abstract(a, taus, c, *, left, transpose):
    require_matrices("ormqr", a, complex_ok=True)
    require_matrices("ormqr", taus, rank=1)
    require_matrices("ormqr", c, complex_ok=True)
    _same_dtype_and_stack("ormqr", a, taus, c)
    m = a.shape[-2]
    if taus.shape[-1] > min(a.shape[-2:]):
        raise ShapeError(f"ormqr: {taus.shape[-1]} reflector scalars but a {a} holds at most "
                         f"{min(a.shape[-2:])} reflectors")
    if left and c.shape[-2] != m:
        raise ShapeError(f"ormqr with left=True expects c to have the same number of rows as "
                         f"the Householder matrix a. Got a shape {tuple(a.shape)} and c shape "
                         f"{tuple(c.shape)}.")
    if not left and c.shape[-1] != m:
        raise ShapeError(f"ormqr with left=False expects c to have the same number of columns "
                         f"as the Householder matrix a has rows. Got a shape {tuple(a.shape)} "
                         f"and c shape {tuple(c.shape)}.")
    return c.strip_weak()


def _ormqr_one(a, taus, c, left, transpose):
    q = _reflectors_product(a, taus, a.shape[0])
    q = np.conj(q.T) if transpose else q
    return [(q @ c if left else c @ q).astype(c.dtype)]


ormqr_p = Primitive(
    "ormqr", _ormqr_abstract,
    lambda a, taus, c, *, left, transpose: _stacked(
        lambda *ops: _ormqr_one(*ops, left, transpose), a, taus, c)[0])
_define(ormqr_p, _no_derivative("ormqr"),
        cost=lambda eqn: _stack_size(eqn.inputs[2].type) * 4 * eqn.inputs[2].type.shape[-2]
        * eqn.inputs[2].type.shape[-1] * eqn.inputs[1].type.shape[-1],
        reference=lambda jnp, lax: lambda a, taus, c, left, transpose: lax.linalg.ormqr(
            a, taus, c, left=left, transpose=transpose))


def ormqr(a, taus, c, *, left=True, transpose=False):
    """``Q c`` (``left``) or ``c Q`` without forming ``Q``, the product of the Householder
    reflectors packed in ``a`` with scalars ``taus`` (as LAPACK's ``geqrf`` leaves them, e.g.
    ``pnp.linalg.qr(x, mode="raw")`` transposed); ``transpose`` uses ``Q^H``."""
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


_add_examples(globals(), """
hessenberg:
    >>> a, taus = pto.lax.linalg.hessenberg(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> taus
    Array([0.], dtype=float32)
tridiagonal:
    >>> a, d, e, taus = pto.lax.linalg.tridiagonal(pnp.array([[2.0, 1.0], [1.0, 3.0]]))
    >>> d, e
    (Array([2., 3.], dtype=float32), Array([1.], dtype=float32))
householder_product:
    >>> h, taus = pnp.linalg.qr(pnp.array([[3.0], [4.0]]), mode="raw")
    >>> pto.lax.linalg.householder_product(h.mT, taus)
    Array([[-0.6],
           [-0.8]], dtype=float32)
ormqr:
    >>> h, taus = pnp.linalg.qr(pnp.array([[3.0], [4.0]]), mode="raw")
    >>> pto.lax.linalg.ormqr(h.mT, taus, pnp.eye(2))
    Array([[-0.6, -0.8],
           [-0.8,  0.6]], dtype=float32)
""")
