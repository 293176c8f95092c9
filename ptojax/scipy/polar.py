"""``scipy.linalg.polar``: ``a = u p`` (side 'right') or ``a = p u`` ('left') with ``u`` having
orthonormal columns (rows) and ``p`` Hermitian positive semi-definite, as JAX's.

``method='svd'`` forms both from the thin SVD ``a = W diag(s) V^H``: ``u = W V^H`` and
``p = V diag(s) V^H`` (or ``W diag(s) W^H``); it is differentiable through the SVD's rule.

``method='qdwh'`` (JAX's default) is the QR-based dynamically weighted Halley iteration
(Nakatsukasa, Bai and Gygi, 2010): ``a`` scaled below unit 2-norm, then rational iterations
``u <- e u + (a - e) u (c u^H u + I)^-1`` whose weights ``(a, b, c)`` follow a lower bound
``l`` on the smallest singular value (computed on the host, since it depends on the dtype's
epsilon only). Steps with a large ``c`` use a QR of ``[sqrt(c) u; I]`` for stability, the
others a Cholesky factor; then Halley steps until ``|u - u_prev|_F`` falls below
``(5 eps)^(1/3)`` (at most 10 steps in all, as JAX, whose ``max_iterations`` is accepted but
not used) and one Newton-Schulz refinement. As JAX's, it needs a full-rank ``a``, ``m >= n``
for 'right' and ``m < n`` for 'left', and has a forward-mode derivative but no reverse one
(the convergence loop is a ``while_loop``). Complex matrices are decomposed through their
real embedding (ptojax's QR and SVD are real only).
"""
from __future__ import annotations

import functools

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.control_flow import fori_loop, while_loop
from ptojax.numpy._promote import asarray
from ptojax.numpy.linalg import norm
from ptojax.ops import decompositions as dec
from ptojax.public import add_examples

_MAX_ITERATIONS = 10
_CHOLESKY_CUTOFF = 100


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
    if pnp.iscomplexobj(a):
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
    if side == "left":
        u, p = _qdwh(_hermitian_transpose(a), eps)
        return _hermitian_transpose(u), _hermitian_transpose(p)
    return _qdwh(a, eps)


def _weights(eps):
    """The ``(a, b, c)`` of each dynamically weighted step, from the lower bound ``l = eps``
    on the scaled matrix's smallest singular value until it reaches 1."""
    bound, tolerance, weights = eps, 10.0 * eps / 2.0, []
    while bound + tolerance < 1 and len(weights) < _MAX_ITERATIONS:
        l2 = bound * bound
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        bound = bound * (a + b * l2) / (1 + c * l2)
        weights.append((a, b, c))
    return weights


def _qr_step(u, weights):
    """``e u + (a - e) / sqrt(c) q1 q2^H`` with ``[sqrt(c) u; I] = [q1; q2] r``."""
    scale, root_c, e = weights[0], weights[1], weights[2]
    n = u.shape[-1]
    q, _ = dec.qr(pnp.concatenate([root_c * u, pnp.eye(n, dtype=u.dtype)], axis=0),
                  full_matrices=False)[:2]
    q1, q2 = q[:u.shape[0]], q[u.shape[0]:]
    return e * u + scale * (q1 @ _hermitian_transpose(q2))


def _cholesky_step(u, weights):
    """``e u + (a - e) u (c u^H u + I)^-1`` by the Cholesky factor of ``c u^H u + I``."""
    a_minus_e, c, e = weights[0], weights[1], weights[2]
    n = u.shape[-1]
    factor = dec.cholesky(c * (_hermitian_transpose(u) @ u) + pnp.eye(n, dtype=u.dtype),
                          symmetrize_input=False)
    z = dec.triangular_solve(factor, pnp.swapaxes(u, -1, -2), left_side=True, lower=True,
                             conjugate_a=True)
    z = dec.triangular_solve(factor, pnp.conj(z), left_side=True, lower=True,
                             transpose_a=True, conjugate_a=True)
    return e * u + a_minus_e * _hermitian_transpose(z)


def _weighted_steps(u, weights, step, tolerance):
    """``u`` after one ``step`` per weight triple (a ``fori_loop`` over them), and whether the
    last step still moved ``u`` by more than ``tolerance`` (True without a test or a step)."""
    if not weights:
        return u, pnp.asarray(True)
    table = pnp.asarray(np.asarray(weights, np.float64)).astype(u.dtype)

    def body(k, state):
        u, _ = state
        new = step(u, table[k])
        moving = pnp.asarray(True) if tolerance is None else norm(new - u) > tolerance
        return new, moving
    return fori_loop(0, len(weights), body, (u, pnp.asarray(True)))


def _qdwh(x, eps):
    """``(u, h)`` of one ``(m, n)`` matrix with ``m >= n`` (see the module)."""
    eps = float(pnp.finfo(x.dtype).eps) if eps is None else eps
    one_norm, inf_norm = norm(x, ord=1), norm(x, ord=np.inf)
    inverse_alpha = pnp.where(one_norm == 0, 1, lax.rsqrt(one_norm) * lax.rsqrt(inf_norm))
    u = x * inverse_alpha.astype(x.dtype)
    tolerance = float(np.cbrt(10.0 * eps / 2.0))
    weights = _weights(eps)
    qr_weights = [((a - b / c) / c ** 0.5, c ** 0.5, b / c) for a, b, c in weights
                  if c > _CHOLESKY_CUTOFF]
    cholesky_weights = [(a - b / c, c, b / c) for a, b, c in weights if c <= _CHOLESKY_CUTOFF]
    u, _ = _weighted_steps(u, qr_weights, _qr_step, None)
    u, moving = _weighted_steps(u, cholesky_weights, _cholesky_step, tolerance)
    halley = pnp.asarray(np.asarray([3 - 1 / 3, 3.0, 1 / 3])).astype(x.dtype)  # a, b, c = 3, 1, 3

    def keep_going(state):
        k, _, moving = state
        return pnp.logical_and(moving, k < _MAX_ITERATIONS)

    def halley_step(state):
        k, u, _ = state
        new = _cholesky_step(u, halley)
        return k + 1, new, norm(new - u) > tolerance

    _, u, _ = while_loop(keep_going, halley_step, (len(weights), u, moving))
    u = 1.5 * u - 0.5 * u @ (_hermitian_transpose(u) @ u)      # Newton-Schulz refinement
    h = _hermitian_transpose(u) @ x
    return u, (h + _hermitian_transpose(h)) / 2


add_examples(globals(), """
polar:
    >>> u, p = pto.scipy.linalg.polar(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> (u @ p).round(4)
    Array([[1., 2.],
           [3., 4.]], dtype=float32)
""")
