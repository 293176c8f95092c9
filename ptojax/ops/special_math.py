"""Numpy implementations of special functions numpy lacks (erf, erf_inv), accurate to float64.

Computed in float64 and rounded to the operand's dtype.
"""
from __future__ import annotations

import numpy as np

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)


def _erf_f64(x):
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    small = a < 3.0
    out = np.empty_like(x)
    # |x| < 3: erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n 2^n x^(2n+1) / (2n+1)!!, all terms
    # positive, so no cancellation.
    xs = a[small]
    term = xs.copy()
    total = xs.copy()
    two_x2 = 2.0 * xs * xs
    for n in range(1, 75):
        term = term * two_x2 / (2 * n + 1)
        total += term
    out[small] = _TWO_OVER_SQRT_PI * np.exp(-xs * xs) * total
    # |x| >= 3: erfc by its continued fraction, evaluated from the tail.
    xl = a[~small]
    k = xl.copy()
    for n in range(60, 0, -1):
        k = xl + (n / 2.0) / k
    out[~small] = 1.0 - np.exp(-xl * xl) / (np.sqrt(np.pi) * k)
    out[np.isnan(x)] = np.nan
    return np.copysign(out, x)


def erf(x):
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        return _erf_f64(x).astype(x.dtype)


def _erf_inv_f64(y):
    y = np.asarray(y, np.float64)
    # Giles' single-precision approximation as the starting point, then Newton on erf.
    w = -np.log((1.0 - y) * (1.0 + y))
    central = w < 5.0
    wc = np.where(central, w - 2.5, np.sqrt(np.maximum(w, 5.0)) - 3.0)
    pc = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                     0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                     1.50140941], wc)
    pt = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                     0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                     2.83297682], wc)
    x = np.where(central, pc, pt) * y
    finite = np.abs(y) < 1.0
    for _ in range(3):
        xf = np.where(finite, x, 0.0)
        step = (_erf_f64(xf) - y) / (_TWO_OVER_SQRT_PI * np.exp(-xf * xf))
        x = np.where(finite, xf - step, x)
    x = np.where(y == 1.0, np.inf, np.where(y == -1.0, -np.inf, x))
    return np.where(np.abs(y) > 1.0, np.nan, x)


def erf_inv(y):
    y = np.asarray(y)
    with np.errstate(all="ignore"):
        return _erf_inv_f64(y).astype(y.dtype)
