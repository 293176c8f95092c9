"""``pnp.linalg`` determinants: det and slogdet (closed forms for small matrices, LU or QR
otherwise) with JAX's custom JVP rules."""
from __future__ import annotations

import numpy as np

from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.numpy._promote import asarray, broadcast_shapes, promote_inexact
from ptojax.numpy.creation import arange, ones, zeros, zeros_like
from ptojax.numpy.manipulation import broadcast_to, concatenate, diagonal as _diagonal, expand_dims
from ptojax.numpy.math import abs, exp, isinf, isnan, log, logical_or, sign, where
from ptojax.numpy.reductions import any, count_nonzero, cumprod, prod, sum
from ptojax.ops import decompositions as dec
from ptojax.ops.matrix import take_rows
from ptojax.numpy.linalg_factor import SlogdetResult, _require_square, trace


# determinants ----------------------------------------------------------------------------------
def det(a):
    """The determinant of each square matrix (closed forms for 2x2 and 3x3)."""
    (a,) = promote_inexact("det", a)
    _require_square("linalg.det", a)
    n = a.shape[-1]
    if n == 2:
        return _det_2x2(a)
    if n == 3:
        return _det_3x3(a)
    return _det(a)


def _det_2x2(a):
    return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
    return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] +
            a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0] +
            a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] -
            a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0] -
            a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] -
            a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@custom_jvp
def _det(a):
    sign_, logdet = slogdet(a)
    return sign_ * exp(logdet).astype(sign_.dtype)


@_det.defjvp
def _det_jvp(primals, tangents):
    """``d det(a) = trace(adj(a) da)``, defined at singular matrices too (JAX's cofactor
    solve)."""
    (x,), (g,) = primals, tangents
    y, z = _cofactor_solve(x, g)
    return y, trace(z)


def _cofactor_solve(a, b):
    """``(det(a), det(a) * solve(a, b))``, finite for singular ``a`` (JAX's construction: the
    LU's last pivot is replaced so the partial determinant scales the solve, and matrices of
    rank below n - 1 give zeros)."""
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu, pivots, permutation = dec.lu(a)
    batch = broadcast_shapes("det", tuple(lu.shape[:-2]), tuple(b.shape[:-2]))
    x = broadcast_to(b, (*batch, *b.shape[-2:]))
    lu = broadcast_to(lu, (*batch, n, n))
    parity = count_nonzero(pivots != arange(n, dtype=pivots.dtype), axis=-1)
    flip = asarray(-2 * (parity % 2) + 1).astype(a.dtype)
    partial_det = cumprod(_diagonal(lu, 0, -2, -1), axis=-1) * expand_dims(flip, -1)
    lu = lu.at[..., -1, -1].set(1.0 / partial_det[..., -2])
    permutation = broadcast_to(permutation, (*batch, n))
    d = dec.triangular_solve(lu, ones(x.shape[:-1], x.dtype), left_side=True, lower=False)
    rank_deficient = expand_dims(any(logical_or(isnan(d), isinf(d)), axis=-1), (-2, -1))
    x = where(rank_deficient, zeros_like(x), x)
    x = dec.triangular_solve(lu, take_rows(x, permutation), left_side=True, lower=True,
                             unit_diagonal=True)
    x = concatenate([x[..., :-1, :] * partial_det[..., -1, None, None], x[..., -1:, :]],
                    axis=-2)
    x = dec.triangular_solve(lu, x, left_side=True, lower=False)
    return partial_det[..., -1], where(rank_deficient, zeros_like(x), x)


def slogdet(a, *, method=None):
    """``(sign, logabsdet)`` of each square matrix's determinant, by LU (``method`` None or
    'lu') or QR ('qr'); ``sign`` is 0 and ``logabsdet`` -inf for singular matrices."""
    (a,) = promote_inexact("slogdet", a)
    _require_square("linalg.slogdet", a)
    if method is None or method == "lu":
        small = a.shape[-1] in (1, 2)
        return SlogdetResult(*(_slogdet_small(a) if small else _slogdet_lu(a)))
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(a))
    raise ValueError(f"linalg.slogdet: unknown method {method!r} (use 'lu' or 'qr')")


@custom_jvp
def _slogdet_small(a):
    if a.shape[-1] == 1:
        det_ = a[..., 0, 0]
    else:
        det_ = _det_2x2(a)
    return sign(det_), log(abs(det_))


@_slogdet_small.defjvp
def _slogdet_small_jvp(primals, tangents):
    (x,), (g,) = primals, tangents
    sign_, ans = _slogdet_small(x)
    if x.shape[-1] == 1:
        ans_dot = g[..., 0, 0] / x[..., 0, 0]
    else:
        ans_dot = (g[..., 0, 0] * x[..., 1, 1] - g[..., 0, 1] * x[..., 1, 0]
                   - g[..., 1, 0] * x[..., 0, 1] + g[..., 1, 1] * x[..., 0, 0]) / _det_2x2(x)
    return (sign_, ans), (zeros_like(sign_), ans_dot)


@custom_jvp
def _slogdet_lu(a):
    n = a.shape[-1]
    lu, pivots, _ = dec.lu(a)
    diag = _diagonal(lu, 0, -2, -1)
    singular = any(diag == 0, axis=-1)
    parity = count_nonzero(pivots != arange(n, dtype=pivots.dtype), axis=-1) + \
        count_nonzero(diag < 0, axis=-1)
    sign_ = where(singular, zeros((), a.dtype), asarray(-2 * (parity % 2) + 1).astype(a.dtype))
    logdet = where(singular, asarray(-np.inf, a.dtype), sum(log(abs(diag)), axis=-1))
    return sign_, logdet


@custom_jvp
def _slogdet_qr(a):
    """``|det| = prod |diag(R)|``; each Householder reflection made (``tau != 0``) flips the
    sign."""
    n = a.shape[-1]
    r, taus = dec.geqrf(a)
    diag = _diagonal(r, 0, -2, -1)
    reflections = count_nonzero(taus[..., :n - 1] != 0, axis=-1)
    flips = asarray(-2 * (reflections % 2) + 1).astype(a.dtype)
    return prod(sign(diag), axis=-1) * flips, sum(log(abs(diag)), axis=-1)


def _slogdet_jvp(primals, tangents):
    """``d logabsdet = trace(a^-1 da)``; the sign is locally constant."""
    (x,), (g,) = primals, tangents
    sign_, ans = slogdet(x)
    lu, _, permutation = dec.lu(x)  # not solve(): its custom rule could not be transposed
    return (sign_, ans), (zeros_like(sign_), trace(dec.lu_solve(lu, permutation, g)))


_slogdet_lu.defjvp(_slogdet_jvp)
_slogdet_qr.defjvp(_slogdet_jvp)
