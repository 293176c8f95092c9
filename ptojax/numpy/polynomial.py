"""Polynomials as coefficient arrays, highest power first: ``polyval``, ``polyadd``,
``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``, ``poly`` (from roots),
``vander``, ``polyfit`` (least squares). Options that trim leading zeros make the shape depend on the values, so they need
concrete inputs (as in JAX)."""
from __future__ import annotations

import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.control_flow import scan
from ptojax.errors import ConcretizationError, ShapeError, UnsupportedError
from ptojax.eval.array import Array
from ptojax.numpy._promote import (asarray, broadcast_shapes, convert, promote_dtypes,
                                   promote_inexact)
from ptojax.numpy import math as ew
from ptojax.numpy.convolution import convolve
from ptojax.numpy.creation import zeros
from ptojax.numpy.insert_delete import trim_zeros
from ptojax.numpy.indexing import take
from ptojax.numpy.linalg import eigvals, inv, lstsq
from ptojax.numpy.manipulation import atleast_1d, concatenate
from ptojax.numpy.products import matmul
from ptojax.numpy.reductions import all as _all, argmin, sum as _sum
from ptojax.numpy.sorting import argsort
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def _coefficients(name, p):
    p = asarray(p, op=name)
    if p.ndim != 1:
        raise ShapeError(f"{name}: coefficients must be 1-D, got {p.aval}", user_frame())
    return p


def polyval(p, x, *, unroll=16):
    """``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule (a scan over the coefficients;
    extra dimensions of ``p`` broadcast against ``x``)."""
    p, x = promote_dtypes("polyval", p, x)
    shape = broadcast_shapes("polyval", tuple(p.shape[1:]), tuple(x.shape))
    start = lax.broadcast_in_dim(np.asarray(0, x.dtype), shape, ())
    value, _ = scan(lambda y, c: (ew.add(ew.multiply(y, x), c), None), start, p,
                    unroll=unroll)
    return value


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter aligned to the lowest powers)."""
    a1, a2 = promote_dtypes("polyadd", a1, a2)
    if a2.shape[0] > a1.shape[0]:
        a1, a2 = a2, a1
    return a1.at[a1.shape[0] - a2.shape[0]:].add(a2)


def polysub(a1, a2):
    """The difference of two polynomials."""
    a1, a2 = promote_dtypes("polysub", a1, a2)
    return polyadd(a1, ew.negative(a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (a full convolution, in an inexact dtype)."""
    a1, a2 = promote_dtypes("polymul", a1, a2, kind="float")
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    if a1.shape[0] == 0:
        a1 = zeros(1, a2.dtype)
    if a2.shape[0] == 0:
        a2 = zeros(1, a1.dtype)
    return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """``(quotient, remainder)`` of polynomial long division (the remainder keeps ``u``'s
    length unless ``trim_leading_zeros``)."""
    u, v = promote_dtypes("polydiv", u, v, kind="float")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = ew.divide(1.0, lax.index_in_dim(v, 0, 0, False))
    q = zeros(max(m - n + 1, 1), u.dtype)
    for k in range(m - n + 1):
        d = ew.multiply(scale, lax.index_in_dim(u, k, 0, False))
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(ew.negative(ew.multiply(d, v)))
    if trim_leading_zeros:
        values = np.asarray(u)
        small = np.abs(values) < np.sqrt(np.finfo(values.dtype).eps)
        u = Array(values[int(np.argmin(small)):].copy()) if not small.all() else \
            zeros(0, u.dtype)
    return q, u


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial."""
    (p,) = promote_dtypes("polyder", _coefficients("polyder", p), kind="float")
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"polyder: the order m must be non-negative, got {m}")
    if m == 0:
        return p
    n = p.shape[0]
    factors = (np.arange(m, n)[None, :] - np.arange(m)[:, None]).prod(0)[::-1]
    kept = lax.slice_in_dim(p, 0, max(n - m, 0), 1, 0)
    return ew.multiply(kept, convert(Array(factors.astype(np.float64)), p.dtype))


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k`` (a
    scalar or one per integration, lowest order last)."""
    m = operator.index(m)
    p, k = promote_dtypes("polyint", _coefficients("polyint", p), 0 if k is None else k,
                          kind="float")
    if m < 0:
        raise ValueError(f"polyint: the order m must be non-negative, got {m}")
    k = atleast_1d(k)
    if k.shape[0] == 1:
        k = lax.broadcast_in_dim(lax.reshape(k, ()), (m,), ())
    if tuple(k.shape) != (m,):
        raise ShapeError(f"polyint: k must be a scalar or have {m} values, got {k.aval}",
                         user_frame())
    if m == 0:
        return p
    grid = np.arange(p.shape[0] + m)[None, :] - np.arange(m)[:, None]
    divisors = np.maximum(1, grid).prod(0)[::-1].astype(np.float64)
    return ew.divide(concatenate([p, k], 0), convert(Array(divisors), p.dtype))


def poly(seq_of_zeros):
    """The monic polynomial with the given roots (1-D input; the characteristic polynomial
    of a matrix needs eigenvalues, which ptojax does not compute)."""
    (zs,) = promote_dtypes("poly", seq_of_zeros, kind="float")
    zs = atleast_1d(zs)
    if zs.ndim == 2 and zs.shape[0] == zs.shape[1] and zs.shape[0] != 0:
        raise UnsupportedError("poly: the characteristic polynomial of a matrix needs its "
                               "eigenvalues, which ptojax cannot compute; pass the roots",
                               user_frame())
    if zs.ndim != 1:
        raise ShapeError(f"poly: the input must be 1-D, got {zs.aval}", user_frame())
    out = lax.broadcast_in_dim(np.asarray(1, zs.dtype), (1,) if zs.shape[0] else (), ())
    for i in range(zs.shape[0]):
        root = lax.index_in_dim(zs, i, 0, True)
        factor = concatenate([lax.broadcast_in_dim(np.asarray(1, zs.dtype), (1,), ()),
                              ew.negative(root)], 0)
        out = convolve(out, factor, mode="full")
    return out


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix: columns are powers of ``x`` (decreasing unless
    ``increasing``)."""
    x = asarray(x, op="vander")
    if x.ndim != 1:
        raise ShapeError(f"vander: x must be 1-D, got {x.aval}", user_frame())
    N = x.shape[0] if N is None else operator.index(N)
    if N < 0:
        raise ShapeError(f"vander: N must be non-negative, got {N}", user_frame())
    powers = lax.iota(x.dtype, N) if x.dtype != np.bool_ else lax.iota(np.int32, N)
    if not increasing:
        powers = ew.subtract(N - 1, powers)
    return ew.power(lax.expand_dims(x, (1,)), lax.expand_dims(powers, (0,)))


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree ``deg`` through ``(x, y)``, highest power first
    (one column of coefficients per column of a 2-D ``y``), as NumPy and JAX: the weighted
    Vandermonde columns are scaled to unit norm, then solved by ``linalg.lstsq`` with
    ``rcond`` (default ``len(x) * eps``). ``full`` also returns the residuals, rank, singular
    values and rcond; ``cov`` the coefficients' covariance (``"unscaled"``: not scaled by the
    residual variance)."""
    if isinstance(deg, Tracer):
        raise ConcretizationError("polyfit: deg must be a concrete int (it sets the result's "
                                  "shape)", user_frame())
    deg = operator.index(deg)
    if deg < 0:
        raise ShapeError(f"polyfit: deg must be non-negative, got {deg}", user_frame())
    x, y = promote_inexact("polyfit", x, y)
    if x.ndim != 1 or y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise ShapeError(f"polyfit: needs a 1-D x and a 1-D or 2-D y of the same length, got "
                         f"{x.aval} and {y.aval}", user_frame())
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(dtypes.finfo(x.dtype).eps)
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = convert(asarray(w, op="polyfit"), x.dtype)
        if w.shape != x.shape:
            raise ShapeError(f"polyfit: w must have the shape of x {x.aval}, got {w.aval}",
                             user_frame())
        lhs = ew.multiply(lhs, lax.expand_dims(w, (1,)))
        rhs = ew.multiply(rhs, w if y.ndim == 1 else lax.expand_dims(w, (1,)))
    scale = ew.sqrt(_sum(ew.multiply(lhs, lhs), axis=0))
    lhs = ew.divide(lhs, scale)
    c, residuals, rank, s = lstsq(lhs, rhs, rcond=rcond)
    c = ew.divide(c, scale if c.ndim == 1 else lax.expand_dims(scale, (1,)))
    if full:
        return c, residuals, rank, s, asarray(rcond, x.dtype)
    if not cov:
        return c
    base = ew.divide(inv(matmul(lax.transpose(lhs, (1, 0)), lhs)),
                     ew.multiply(lax.expand_dims(scale, (1,)), lax.expand_dims(scale, (0,))))
    if cov == "unscaled":
        factor = asarray(1, x.dtype)
    else:
        if x.shape[0] <= order:
            raise ShapeError(f"polyfit: scaling the covariance needs more data points "
                             f"({x.shape[0]}) than coefficients ({order}); pass "
                             f"cov='unscaled'", user_frame())
        factor = ew.divide(residuals, x.shape[0] - order)
    if y.ndim == 1:
        return c, ew.multiply(base, factor)
    return c, ew.multiply(lax.expand_dims(base, (2,)), factor)


def _companion_roots(p):
    """The eigenvalues of the companion matrix of ``p`` (leading coefficient nonzero)."""
    n = p.shape[0] - 1
    if n < 1:
        return zeros(0, dtypes.complex_dtype(p.dtype))
    rows = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    companion = convert(ew.equal(rows, ew.add(cols, 1)), p.dtype)
    top = ew.negative(ew.divide(p[1:], p[0]))
    return eigvals(companion.at[0, :].set(top))


def roots(p, *, strip_zeros=True):
    """The (complex) roots of the polynomial with coefficients ``p``, highest power first.
    Leading zeros are dropped (``p`` must then be concrete); with ``strip_zeros=False`` they
    stay, and as many roots are NaN, so it traces."""
    (p,) = promote_inexact("roots", p)
    p = atleast_1d(p)
    if p.ndim != 1:
        raise ShapeError(f"roots: the coefficients must be 1-D, got {p.aval}", user_frame())
    n = p.shape[0]
    if n < 2:
        return zeros(0, dtypes.complex_dtype(p.dtype))
    is_zero = ew.equal(p, 0)
    leading = ew.where(_all(is_zero), n, argmin(is_zero))
    if strip_zeros:
        if type(leading) is Tracer:
            raise ConcretizationError("roots: dropping the leading zeros depends on traced "
                                      "values; pass strip_zeros=False under jit (roots for "
                                      "the leading zeros are then NaN)", user_frame())
        return _companion_roots(p[int(leading):])
    p = ew.where(ew.equal(leading, n), convert(1, p.dtype), p)   # all zero: no LAPACK error
    shifted = take(p, ew.remainder(ew.add(lax.iota(dtypes.int32, n), leading), n))
    found = _companion_roots(shifted)
    found = take(found, argsort(ew.equal(found, 0), stable=True))  # zero roots last
    valid = ew.less(lax.iota(dtypes.int32, n - 1), ew.subtract(n - 1, leading))
    return ew.where(valid, found, convert(complex(np.nan, np.nan), found.dtype))


__all__ = ["poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul",
           "polysub", "polyval", "roots", "vander"]


_add_examples(globals(), """
roots:
    >>> pnp.roots(pnp.array([1.0, -3.0, 2.0]))
    Array([2.+0.j, 1.+0.j], dtype=complex64)
poly:
    >>> pnp.poly(pnp.array([1.0, 2.0]))
    Array([ 1., -3.,  2.], dtype=float32)
polyadd:
    >>> pnp.polyadd(pnp.array([1, 2]), pnp.array([1, 0, 1]))
    Array([1, 1, 3], dtype=int32)
polyder:
    >>> pnp.polyder(pnp.array([1, 2, 3]))
    Array([2., 2.], dtype=float32)
polydiv:
    >>> pnp.polydiv(pnp.array([1.0, 3.0, 2.0]), pnp.array([1.0, 1.0]))
    (Array([1., 2.], dtype=float32), Array([0., 0., 0.], dtype=float32))
polyfit:
    >>> pnp.polyfit(pnp.array([0.0, 1.0, 2.0]), pnp.array([1.0, 3.0, 5.0]), 1)
    Array([1.9999998, 1.0000001], dtype=float32)
polyint:
    >>> pnp.polyint(pnp.array([3.0, 2.0]))
    Array([1.5, 2. , 0. ], dtype=float32)
polymul:
    >>> pnp.polymul(pnp.array([1, 1]), pnp.array([1, -1]))
    Array([ 1.,  0., -1.], dtype=float32)
polysub:
    >>> pnp.polysub(pnp.array([1, 2]), pnp.array([1, 0, 1]))
    Array([-1,  1,  1], dtype=int32)
polyval:
    >>> pnp.polyval(pnp.array([1, 2, 3]), pnp.array([0, 1, 2]))
    Array([ 3,  6, 11], dtype=int32)
vander:
    >>> pnp.vander(pnp.array([1, 2, 3]), 3)
    Array([[1, 1, 1],
           [4, 2, 1],
           [9, 3, 1]], dtype=int32)
""")
