"""The Faddeeva function ``wofz(z) = exp(-z^2) erfc(-i z)``, by Weideman's rational
expansion (J. A. C. Weideman, SIAM J. Numer. Anal. 31, 1994) with ``N = 32`` terms, as JAX:
``w(z) = 2 p(Z) / (L - i z)^2 + 1 / (sqrt(pi) (L - i z))``, ``Z = (L + i z) / (L - i z)``,
``L = sqrt(N / sqrt(2))``, in the upper half plane, and ``2 exp(-z^2) - w(-z)`` below it.
The coefficients of ``p`` are computed here (at import, with NumPy's FFT) by Weideman's
recipe rather than tabulated. Derivative ``w'(z) = -2 z w(z) + 2 i / sqrt(pi)``."""
from __future__ import annotations

import math

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.numpy._promote import convert, result_type, to_inexact
from ptojax import dtypes

_N = 32
_L = math.sqrt(_N / math.sqrt(2.0))


def _weideman_coefficients(n=_N):
    """The ``n`` coefficients of Weideman's polynomial, highest power first."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    t = _L * np.tan(k * np.pi / (2 * m))
    samples = np.concatenate([[0.0], np.exp(-t * t) * (_L * _L + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(samples))) / (2 * m)
    return np.flipud(a[1:n + 1])


_COEFFICIENTS = _weideman_coefficients()


def _wofz_upper(z):
    """``w(z)`` for ``Im z >= 0``."""
    iz = lax.complex(-pnp.imag(z), pnp.real(z))
    denominator = _L - iz
    big_z = (_L + iz) / denominator
    p = pnp.polyval(pnp.asarray(_COEFFICIENTS, big_z.dtype), big_z)
    return 2 * p / (denominator * denominator) + (1 / math.sqrt(math.pi)) / denominator


@custom_jvp
def _wofz(z):
    upper = pnp.imag(z) >= 0
    w_upper = _wofz_upper(pnp.where(upper, z, -z))
    return pnp.where(upper, w_upper, 2 * pnp.exp(-(z * z)) - w_upper)


_wofz.defjvps(lambda t, out, z: t * (-2 * z * out + 2j / math.sqrt(math.pi)))


def _to_complex(name, z):
    dtype, weak = result_type(z, op=name)
    dtype = to_inexact(dtype)
    if not dtypes.issubdtype(dtype, np.complexfloating):
        dtype = np.result_type(dtype, np.complex64)
    return convert(z, dtype, weak)


def wofz(z):
    """The Faddeeva function ``exp(-z^2) erfc(-i z)`` of real or complex ``z`` (complex result).

    Args:
      z: real or complex array.

    Returns:
      A complex array of the shape of ``z``.

    Example:
      >>> pto.scipy.special.wofz(pnp.array([0.5, 1.0j]))
      Array([0.7788009 +0.4789253j, 0.42758358+0.j       ], dtype=complex64)
    """
    return _wofz(_to_complex("wofz", z))
