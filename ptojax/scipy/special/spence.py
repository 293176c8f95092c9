"""Spence's function ``spence(x) = integral_1^x log(t) / (1 - t) dt = Li2(1 - x)`` for real
``x >= 0`` (NaN below), computed in float64 and returned in the input's dtype.

The dilogarithm ``Li2(y)`` is summed as ``sum_n B_n u**(n+1) / (n+1)!`` in
``u = -log(1 - y)`` (Bernoulli numbers ``B_n``, ``B_1 = -1/2``; ``|u| <= log 2`` here, so 30
terms reach float64 precision), after mapping ``y`` into ``[-1, 1/2]``: for ``x < 1/2``
through ``Li2(1-x) = pi**2/6 - log(x) log(1-x) - Li2(x)``, for ``x > 2`` through
``Li2(y) = -pi**2/6 - log(-y)**2 / 2 - Li2(1/y)``. Its derivative is ``log(x) / (1 - x)``
(-1 at ``x = 1``).
"""
from __future__ import annotations

import math

from ptojax import dtypes
from ptojax import numpy as pnp
from ptojax.ops.convert import convert_element_type as convert_exactly
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.scipy.special.bernoulli import bernoulli_numbers
from ptojax.scipy.special.normal import inexact

_TERMS = 30
_COEFFICIENTS = [float(b) / math.factorial(n + 1)
                 for n, b in enumerate(bernoulli_numbers(_TERMS))]
_PI2_6 = math.pi ** 2 / 6


def _li2_near_zero(y):
    """``Li2(y)`` for ``y`` in ``[-1, 1/2]``."""
    u = -pnp.log1p(-y)
    total = pnp.zeros_like(u)
    for c in reversed(_COEFFICIENTS):     # Horner in u, then times u
        total = total * u + c
    return total * u


def _spence_f64(x):
    low = x < 0.5
    high = x > 2.0
    x_low = pnp.where(low & (x > 0), x, 0.25)
    x_mid = pnp.where(low | high, 1.0, x)
    x_high = pnp.where(high, x, 4.0)
    from_low = _PI2_6 - pnp.log(x_low) * pnp.log1p(-x_low) - _li2_near_zero(x_low)
    from_mid = _li2_near_zero(1.0 - x_mid)
    from_high = (-_PI2_6 - 0.5 * pnp.log(x_high - 1.0) ** 2
                 - _li2_near_zero(1.0 / (1.0 - x_high)))
    out = pnp.where(low, from_low, pnp.where(high, from_high, from_mid))
    return pnp.where(x < 0, pnp.nan, pnp.where(x == 0, _PI2_6, out))


@custom_jvp
def _spence(x):
    return _spence_f64(convert_exactly(x, dtypes.float64)).astype(x.dtype)


def _derivative(x):
    one = x == 1
    safe = pnp.where(one, 2.0, x)
    return pnp.where(one, -pnp.ones_like(x), pnp.log(safe) / (1.0 - safe))


_spence.defjvps(lambda t, out, x: t * _derivative(x))


def spence(x):
    """Spence's function ``integral_1^x log(t) / (1 - t) dt`` (real ``x >= 0``).

    Example:
      >>> pto.scipy.special.spence(pnp.array([0.0, 0.5, 1.0, 2.0]))
      Array([ 1.644934 ,  0.5822405,  0.       , -0.822467 ], dtype=float32)
    """
    x = inexact("spence", pnp.asarray(x))   # a list too, as JAX's
    if dtypes.is_complex(x.dtype):
        raise ValueError("spence does not support complex-valued inputs.")
    return _spence(x)
