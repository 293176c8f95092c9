"""The modified Bessel functions of the first kind of orders 0 and 1, ``i0``, ``i1``, and
their exponentially scaled forms ``i0e``, ``i1e`` (``lax.bessel_i0e``/``bessel_i1e``; the
unscaled ones times ``exp(|x|)``, as JAX)."""
from __future__ import annotations

from ptojax import lax
from ptojax.scipy.special.normal import inexact


def i0e(x):
    """``exp(-|x|) * i0(x)``.

    Example:
      >>> pto.scipy.special.i0e(pnp.array([0.0, 1.0, 10.0]))
      Array([1.        , 0.4657596 , 0.12783334], dtype=float32)
    """
    return lax.bessel_i0e(inexact("i0e", x))


def i0(x):
    """The modified Bessel function of the first kind of order 0.

    Example:
      >>> pto.scipy.special.i0(pnp.array([0.0, 1.0, 2.0]))
      Array([1.       , 1.266066 , 2.2795854], dtype=float32)
    """
    x = inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x):
    """``exp(-|x|) * i1(x)``.

    Example:
      >>> pto.scipy.special.i1e(pnp.array([0.0, 1.0, -10.0]))
      Array([ 0.        ,  0.20791042, -0.12126268], dtype=float32)
    """
    return lax.bessel_i1e(inexact("i1e", x))


def i1(x):
    """The modified Bessel function of the first kind of order 1.

    Example:
      >>> pto.scipy.special.i1(pnp.array([0.0, 1.0, 2.0]))
      Array([0.        , 0.56515914, 1.5906367 ], dtype=float32)
    """
    x = inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))
