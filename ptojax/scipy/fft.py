"""``pto.scipy.fft``: JAX's ``jax.scipy.fft``, the discrete cosine transforms ``dct``/``idct``
and their N-d forms ``dctn``/``idctn``.

Type 2 only, as JAX (its inverse is the type-3 transform): other types raise JAX's
NotImplementedError. Each 1-d transform is one complex FFT of length N (Makhoul's method):
the DCT-II of ``x`` is ``2 Re(exp(-i pi k / 2N) FFT(v)_k)`` with ``v`` the even entries of
``x`` followed by the odd ones reversed; the inverse runs the same steps backwards. The N-d
forms apply the 1-d ones axis after axis. ``norm`` is None/"backward" (SciPy's unscaled
DCT-II, whose inverse divides by 2N) or "ortho" (the orthonormal transform). Complex inputs
are transformed as their real and imaginary parts.
"""
from __future__ import annotations

import math
import operator

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray
from ptojax.public import add_examples, dir_function


def _check(name, type, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")


def _resized(x, axis, n):
    """``x`` cropped or zero-padded at the end of ``axis`` to length ``n``."""
    if n is None or n == x.shape[axis]:
        return x
    n = operator.index(n)
    if n < x.shape[axis]:
        return lax.slice_in_dim(x, 0, n, 1, axis)
    config = [(0, n - x.shape[axis], 0) if d == axis else (0, 0, 0) for d in range(x.ndim)]
    return lax.pad(x, lax.convert_element_type(0, x.dtype), config)


def _along(axis, ndim, values):
    """The 1-d ``values`` shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    return pnp.reshape(values, [-1 if d == axis else 1 for d in range(ndim)])


def _ortho_scale(n, dtype):
    """The factors taking SciPy's unscaled DCT-II coefficients to orthonormal ones."""
    first = pnp.full((1,), math.sqrt(1 / (4 * n)), dtype)
    return pnp.concatenate([first, pnp.full((n - 1,), math.sqrt(1 / (2 * n)), dtype)])


def _twiddle(n, sign, dtype):
    """``exp(sign * i pi k / 2n)`` for ``k = 0..n-1``."""
    angle = pnp.arange(n, dtype=dtype) * (sign * math.pi / (2 * n))
    return lax.complex(pnp.cos(angle), pnp.sin(angle))


def _complex_parts(fn, x, *args):
    """``fn`` of a complex ``x`` as ``fn(real) + i fn(imag)``, else ``fn(x)``."""
    if pnp.iscomplexobj(x):
        return lax.complex(fn(pnp.real(x), *args), fn(pnp.imag(x), *args))
    return fn(x, *args)


def _dct_1d(x, axis, norm):
    n = x.shape[axis]
    evens = lax.slice_in_dim(x, 0, n, 2, axis)
    odds = lax.rev(lax.slice_in_dim(x, 1, n, 2, axis), (axis,))
    spectrum = pnp.fft.fft(pnp.concatenate([evens, odds], axis), axis=axis)
    real = pnp.real(spectrum).dtype
    out = 2 * pnp.real(spectrum * _along(axis, x.ndim, _twiddle(n, -1, real)))
    if norm == "ortho":
        out = out * _along(axis, x.ndim, _ortho_scale(n, out.dtype))
    return out


def _idct_1d(x, axis, norm):
    n = x.shape[axis]
    if not pnp.issubdtype(x.dtype, pnp.inexact):
        x = x.astype(pnp.result_type(x.dtype, pnp.float32))
    if norm == "ortho":
        x = x / _along(axis, x.ndim, _ortho_scale(n, x.dtype))
    weights = pnp.concatenate([pnp.full((1,), 0.5, x.dtype), pnp.ones((n - 1,), x.dtype)])
    coefficients = x * _along(axis, x.ndim, weights)
    v = pnp.real(pnp.fft.ifft(coefficients * _along(axis, x.ndim, _twiddle(n, 1, x.dtype)),
                              axis=axis))
    half = (n + 1) // 2
    evens = lax.slice_in_dim(v, 0, half, 1, axis)
    odds = lax.rev(lax.slice_in_dim(v, half, n, 1, axis), (axis,))
    return _interleave(evens, odds, axis, n)


def _interleave(evens, odds, axis, n):
    """The length-``n`` array whose even entries along ``axis`` are ``evens`` and odd ones
    ``odds``."""
    if odds.shape[axis] < evens.shape[axis]:
        config = [(0, 1, 0) if d == axis else (0, 0, 0) for d in range(odds.ndim)]
        odds = lax.pad(odds, lax.convert_element_type(0, odds.dtype), config)
    shape = list(evens.shape)
    shape[axis] *= 2
    out = pnp.reshape(pnp.stack([evens, odds], axis=axis + 1), shape)
    return lax.slice_in_dim(out, 0, n, 1, axis)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The discrete cosine transform (type 2) of ``x`` along ``axis``, first cropped or
    zero-padded to length ``n``."""
    x = asarray(x, op="dct")
    _check("dct", type, norm)
    axis = normalize_axis("dct", axis, x.ndim)
    return _complex_parts(lambda part: _dct_1d(_resized(part, axis, n), axis, norm), x)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse of ``dct`` (a type-3 transform) along ``axis``, after cropping or
    zero-padding ``x`` to length ``n``."""
    x = asarray(x, op="idct")
    _check("idct", type, norm)
    axis = normalize_axis("idct", axis, x.ndim)
    return _complex_parts(lambda part: _idct_1d(_resized(part, axis, n), axis, norm), x)


def _axes_and_sizes(name, x, s, axes):
    """JAX's reading of ``s`` and ``axes``: ``s`` an int or sequence of at most ``x.ndim``
    lengths; axes default to the last ``len(s)`` (or all) axes."""
    if s is not None:
        s = [operator.index(s)] if not hasattr(s, "__iter__") else list(s)
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - (x.ndim if s is None else len(s)), x.ndim))
    else:
        given = (axes,) if not hasattr(axes, "__iter__") else tuple(axes)
        axes = tuple(normalize_axis(name, a, x.ndim) for a in given)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in {name} axes argument")
    sizes = [None] * len(axes) if s is None else s
    return list(zip(axes, sizes))


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The N-d discrete cosine transform (type 2) over ``axes`` (default: the last
    ``len(s)`` axes, or all), each cropped or zero-padded to its length in ``s``."""
    x = asarray(x, op="dctn")
    _check("dctn", type, norm)
    for axis, n in _axes_and_sizes("dctn", x, s, axes):
        x = dct(x, n=n, axis=axis, norm=norm)
    return x


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The inverse of ``dctn`` over ``axes``, after cropping or zero-padding to ``s``."""
    x = asarray(x, op="idctn")
    _check("idctn", type, norm)
    for axis, n in _axes_and_sizes("idctn", x, s, axes):
        x = idct(x, n=n, axis=axis, norm=norm)
    return x


__all__ = ["dct", "dctn", "idct", "idctn"]
__dir__ = dir_function(__all__)

add_examples(globals(), """
dct:
    >>> from ptojax.scipy import fft
    >>> fft.dct(pnp.array([1.0, 2.0, 3.0, 4.0])).round(3)
    Array([20.   , -6.309,  0.   , -0.448], dtype=float32)
idct:
    >>> from ptojax.scipy import fft
    >>> fft.idct(fft.dct(pnp.array([1.0, 2.0, 3.0, 4.0]))).round(3)
    Array([1., 2., 3., 4.], dtype=float32)
dctn:
    >>> from ptojax.scipy import fft
    >>> fft.dctn(pnp.array([[1.0, 2.0], [3.0, 4.0]]), norm="ortho").round(3)
    Array([[ 5., -1.],
           [-2.,  0.]], dtype=float32)
idctn:
    >>> from ptojax.scipy import fft
    >>> fft.idctn(pnp.array([[5.0, -1.0], [-2.0, 0.0]]), norm="ortho").round(3)
    Array([[1., 2.],
           [3., 4.]], dtype=float32)
""")
