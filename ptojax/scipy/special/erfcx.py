"""The scaled complementary error function ``erfcx(x) = exp(x**2) * erfc(x)``, as JAX
computes it for real inputs: that product while ``exp(x**2)`` is finite (below
``sqrt(log(max float))``, 9.4 for float32, 26.6 for float64), the asymptotic series
``1 / (x sqrt(pi)) * sum_k (-1)**k (2k-1)!! / (2 x**2)**k`` beyond (5 terms for float32, 9 for
float64); float16 and bfloat16 go through float32. Its derivative is
``2 x erfcx(x) - 2 / sqrt(pi)``."""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.errors import UnsupportedError
from ptojax.scipy.special.normal import inexact, strong
from ptojax.source_info import user_frame


def _series_coefficient(k):
    """``(-1)**k (2k-1)!! / 2**k``."""
    return (-1) ** k * math.prod(range(1, 2 * k, 2)) / 2 ** k


def _asymptotic(x, nterms):
    t = 1.0 / lax.square(x)
    p = pnp.zeros_like(x)
    for k in reversed(range(nterms)):   # Horner in t
        p = p * t + _series_coefficient(k)
    return p / (x * math.sqrt(math.pi))


def _erfcx_of(x):
    nterms = 9 if x.dtype == dtypes.float64 else 5
    threshold = float(np.sqrt(np.log(dtypes.finfo(x.dtype).max)))
    large = x > threshold
    safe = pnp.where(large, pnp.ones_like(x), x)
    direct = lax.exp(lax.square(safe)) * lax.erfc(safe)
    return pnp.where(large, _asymptotic(x, nterms), direct)


_erfcx = custom_jvp(_erfcx_of)
_erfcx.defjvps(lambda t, out, x: t * (2 * x * out - 2.0 / math.sqrt(math.pi)))


def erfcx(x):
    """The scaled complementary error function ``exp(x**2) * erfc(x)`` (real inputs).

    Example:
      >>> pto.scipy.special.erfcx(pnp.array([-1.0, 0.0, 1.0, 30.0]))
      Array([5.0089803 , 1.        , 0.4275836 , 0.01879589], dtype=float32)
    """
    x = inexact("erfcx", x)
    if dtypes.is_complex(x.dtype):
        raise UnsupportedError("erfcx: complex inputs are not supported", user_frame())
    if x.dtype in (dtypes.float32, dtypes.float64):
        return strong(_erfcx(x))
    return _erfcx(x.astype(dtypes.float32)).astype(x.dtype)
