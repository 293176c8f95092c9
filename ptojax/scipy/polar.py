"""``scipy.linalg.polar``: ``a = u p`` (side 'right') or ``a = p u`` ('left') with ``u`` having
orthonormal columns (rows) and ``p`` Hermitian positive semi-definite, as JAX's.

``method='svd'`` forms both from the thin SVD ``a = W diag(s) V^H``: ``u = W V^H`` and
``p = V diag(s) V^H`` (or ``W diag(s) W^H``); it is differentiable through the SVD's rule.

``method='qdwh'`` (JAX's default) is ``lax.linalg.qdwh`` (``lax/qdwh.py``: the QR-based
dynamically weighted Halley iteration, at most 10 steps; polar's ``max_iterations`` is accepted
but not used, as in JAX). As JAX's, it needs a full-rank ``a``, ``m >= n`` for 'right' and
``m < n`` for 'left', and has a forward-mode derivative but no reverse one (the convergence
loop is a ``while_loop``). Complex matrices are decomposed through their real embedding
(ptojax's QR and SVD are real only).
"""
from __future__ import annotations

import functools

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray
from ptojax.ops import decompositions as dec
from ptojax.public import add_examples


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """The polar decomposition ``(u, p)`` of each matrix of ``a``: ``a = u @ p`` ('right') or
    ``a = p @ u`` ('left'); ``method`` 'qdwh' (the default, see the module) or 'svd'. As in
    JAX, ``max_iterations`` is not used and 'qdwh' needs ``m >= n`` for 'right', ``m < n``
    for 'left'."""
    a = asarray(a, op="polar")
    if a.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ("right", "left"):
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    if not pnp.issubdtype(a.dtype, pnp.inexact):
        if method == "svd":
            raise TypeError(f"svd does not accept dtype {a.dtype}: polar needs a floating or "
                            f"complex matrix (convert it with .astype(float))")
        raise ValueError(f"polar: data type {a.dtype} not inexact (method='qdwh' needs a "
                         f"floating or complex matrix; convert it with .astype(float))")
    m, n = a.shape[-2:]
    if method == "qdwh" and (m >= n) != (side == "right"):
        raise NotImplementedError(f"method='qdwh' only supports mxn matrices where m < n where "
                                  f"side='right' and m >= n side='left', got {tuple(a.shape)} "
                                  f"with side={side!r}")
    one = functools.partial(_polar_svd if method == "svd" else _polar_qdwh, side=side, eps=eps)
    if pnp.iscomplexobj(a) and method == "svd":
        one = functools.partial(_through_real_embedding, one)
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return pnp.vectorize(one, signature=signature)(a)


def _through_real_embedding(polar_real, a):
    """The polar factors of complex ``a`` from those of its real embedding
    ``[[re, -im], [im, re]]``: the embedding keeps products and conjugate transposes, so the
    (unique) factors of the embedding embed ``a``'s (ptojax's QR and SVD are real only)."""
    m, n = a.shape
    real = pnp.block([[a.real, -a.imag], [a.imag, a.real]])
    u, p = polar_real(real)
    k = p.shape[0] // 2
    return u[:m, :n] + 1j * u[m:, :n], p[:k, :k] + 1j * p[k:, :k]


def _hermitian_transpose(x):
    return pnp.conj(pnp.swapaxes(x, -1, -2))


def _polar_svd(a, side, eps):
    w, s, vh = dec.svd(a, full_matrices=False, compute_uv=True)
    s = s.astype(w.dtype)
    u = w @ vh
    if side == "right":
        return u, (_hermitian_transpose(vh) * s[None, :]) @ vh
    return u, (w * s[None, :]) @ _hermitian_transpose(w)


def _polar_qdwh(a, side, eps):
    """``lax.linalg.qdwh`` (of ``a^H`` for 'left')."""
    if side == "left":
        u, p = _polar_qdwh(_hermitian_transpose(a), "right", eps)
        return _hermitian_transpose(u), _hermitian_transpose(p)
    u, p, _, _ = lax.linalg.qdwh(a, eps=eps)
    return u, p


add_examples(globals(), """
polar:
    >>> u, p = pto.scipy.linalg.polar(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> (u @ p).round(4)
    Array([[1., 2.],
           [3., 4.]], dtype=float32)
""")
