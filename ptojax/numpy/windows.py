"""Window functions in JAX's default float (float32; float64 in x64 mode): ``bartlett``,
``blackman``, ``hamming``, ``hanning``, ``kaiser``. Windows of length 0 or 1 are all ones."""
from __future__ import annotations

import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.numpy import math as ew
from ptojax.numpy.floating import i0
from ptojax.public import add_examples as _add_examples


def _samples(M):
    """The sample positions 0..M-1 (the default float: float32, float64 in x64 mode), or
    None when the window is all ones."""
    M = operator.index(M)
    return None if M <= 1 else lax.iota(dtypes.default_float(), M)


def _ones(M):
    return lax.broadcast_in_dim(np.asarray(1, dtypes.default_float()),
                                (max(operator.index(M), 0),), ())


def _cosine_window(M, *coefficients):
    """``sum_k c_k cos(2 pi k n / (M - 1))`` (signs alternating, as the named windows)."""
    n = _samples(M)
    if n is None:
        return _ones(M)
    out = None
    for k, c in enumerate(coefficients):
        term = ew.multiply(c, ew.cos(ew.divide(ew.multiply(2 * np.pi * k, n), M - 1))) if k \
            else c
        out = term if out is None else (ew.subtract(out, term) if k % 2 else ew.add(out, term))
    return out


def blackman(M):
    return _cosine_window(M, 0.42, 0.5, 0.08)


def hamming(M):
    return _cosine_window(M, 0.54, 0.46)


def hanning(M):
    n = _samples(M)
    if n is None:
        return _ones(M)
    return ew.multiply(0.5, ew.subtract(1, ew.cos(ew.divide(ew.multiply(2 * np.pi, n), M - 1))))


def bartlett(M):
    n = _samples(M)
    if n is None:
        return _ones(M)
    return ew.subtract(1, ew.divide(ew.absolute(ew.subtract(ew.add(ew.multiply(2, n), 1), M)),
                                    M - 1))


def kaiser(M, beta):
    n = _samples(M)
    if n is None:
        return _ones(M)
    alpha = 0.5 * (M - 1)
    ratio = ew.divide(ew.subtract(n, alpha), alpha)
    return ew.divide(i0(ew.multiply(beta, ew.sqrt(ew.subtract(1, ew.square(ratio))))),
                     i0(beta))


__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


_add_examples(globals(), """
bartlett: The Bartlett (triangular) window of ``M`` points.
    >>> pnp.bartlett(5)
    Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
blackman: The Blackman window of ``M`` points.
    >>> pnp.blackman(5)
    Array([-1.4901161e-08,  3.4000003e-01,  9.9999994e-01,  3.3999997e-01,
           -1.4901161e-08], dtype=float32)
hamming: The Hamming window of ``M`` points.
    >>> pnp.hamming(5)
    Array([0.08000001, 0.54      , 1.        , 0.54      , 0.08000001],      dtype=float32)
hanning: The Hann window of ``M`` points.
    >>> pnp.hanning(5)
    Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
kaiser: The Kaiser window of ``M`` points with shape parameter ``beta``.
    >>> pnp.kaiser(5, 2.0)
    Array([0.43867633, 0.8347613 , 1.        , 0.8347613 , 0.43867633],      dtype=float32)
""")
