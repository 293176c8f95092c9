"""Window functions (float32, as JAX's default float): ``bartlett``, ``blackman``,
``hamming``, ``hanning``, ``kaiser``. Windows of length 0 or 1 are all ones."""
from __future__ import annotations

import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.numpy import math as ew
from ptojax.numpy.floating import i0


def _samples(M):
    """The sample positions 0..M-1 (float32), or None when the window is all ones."""
    M = operator.index(M)
    return None if M <= 1 else lax.iota(dtypes.float32, M)


def _ones(M):
    return lax.broadcast_in_dim(np.float32(1), (max(operator.index(M), 0),), ())


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
