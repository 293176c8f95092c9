"""The error function family and the standard normal distribution function: ``erf``,
``erfc``, ``erfinv``, ``ndtr``, ``log_ndtr``, ``ndtri``."""
from __future__ import annotations

import math

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.errors import DtypeError
from ptojax.numpy._promote import promote_args
from ptojax.source_info import user_frame

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
# log_ndtr switches to -ndtr(-x) above UPPER and to the asymptotic series below LOWER
_LOG_NDTR_BOUNDS = {"float32": (-10.0, 5.0), "float64": (-20.0, 8.0)}


def strong(x):
    """``x`` without a weak type: JAX's ``ndtr``, ``ndtri``, ``log_ndtr``, ``erfcx``,
    ``dawsn`` and ``logsumexp`` return strongly typed results even for Python scalars."""
    return lax.convert_element_type(x, x.dtype) if getattr(x, "weak_type", False) else x


def inexact(name, *args):
    """``args`` promoted to one floating-point dtype (as ``pnp`` promotes)."""
    out = promote_args(name, *args, kind="float")
    return out[0] if len(out) == 1 else out


def erf(x):
    """The error function ``2/sqrt(pi) * integral_0^x exp(-t^2) dt``.

    Args:
      x: real array.

    Returns:
      An array of floats in ``[-1, 1]``.

    Example:
      >>> pto.scipy.special.erf(pnp.array([0.0, 1.0]))
      Array([0.       , 0.8427008], dtype=float32)
    """
    return lax.erf(inexact("erf", x))


def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate in the right tail.

    Args:
      x: real array.

    Returns:
      An array of floats in ``[0, 2]``.

    Example:
      >>> pto.scipy.special.erfc(pnp.array([0.0, 3.0]))
      Array([1.0000000e+00, 2.2090497e-05], dtype=float32)
    """
    return lax.erfc(inexact("erfc", x))


def erfinv(x):
    """The inverse error function: ``erf(erfinv(x)) == x`` for ``x`` in ``(-1, 1)``.

    Args:
      x: real array; ``-1`` and ``1`` give ``-inf`` and ``inf``, beyond them NaN.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.erfinv(pnp.array([0.5]))
      Array([0.47693628], dtype=float32)
    """
    return lax.erf_inv(inexact("erfinv", x))


def ndtr(x):
    """The standard normal distribution function ``(1 + erf(x / sqrt(2))) / 2``, accurate in
    both tails.

    Args:
      x: real array.

    Returns:
      An array of floats in ``[0, 1]``.

    Example:
      >>> pto.scipy.special.ndtr(pnp.array([0.0, -3.0]))
      Array([0.5      , 0.0013499], dtype=float32)
    """
    x = inexact("ndtr", pnp.asarray(x))   # a list too, as JAX's
    w = pnp.multiply(x, math.sqrt(0.5))
    z = pnp.abs(w)
    tail = lax.erfc(z)
    y = pnp.where(pnp.less(z, math.sqrt(0.5)), pnp.add(1.0, lax.erf(w)),
                  pnp.where(pnp.greater(w, 0), pnp.subtract(2.0, tail), tail))
    return strong(pnp.multiply(0.5, y))


def _float_only(name, x):
    x = pnp.asarray(x)
    if x.dtype.name not in _LOG_NDTR_BOUNDS:
        raise DtypeError(f"{name}: x must be float32 or float64, got {x.aval}", user_frame(2))
    return x


def norm_logpdf(x):
    """The log density of the standard normal at ``x``."""
    return pnp.subtract(pnp.multiply(-0.5, pnp.square(x)), _LOG_SQRT_2PI)


def _asymptotic_log_ndtr(x, series_order):
    """log ndtr(x) for x << -1: log(pdf(x) / -x) + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n))."""
    x2 = pnp.square(x)
    total, power, double_factorial = pnp.ones_like(x), x2, 1
    for n in range(1, series_order + 1):
        double_factorial *= 2 * n - 1
        term = pnp.divide(float(double_factorial), power)
        total = pnp.subtract(total, term) if n % 2 else pnp.add(total, term)
        power = pnp.multiply(power, x2)
    return pnp.add(pnp.subtract(norm_logpdf(x), pnp.log(pnp.negative(x))), pnp.log(total))


def _log_ndtr(x, series_order):
    lower, upper = _LOG_NDTR_BOUNDS[x.dtype.name]
    above = pnp.greater(x, upper)
    # one ndtr for both the middle and the upper range; the clamps keep the unchosen
    # branches finite so their (zero-weighted) gradients are not NaN
    cdf = ndtr(pnp.where(above, pnp.negative(x), pnp.maximum(x, lower)))
    series = _asymptotic_log_ndtr(pnp.minimum(x, lower), series_order)
    return pnp.where(above, pnp.negative(cdf),
                     pnp.where(pnp.greater(x, lower), pnp.log(cdf), series))


_log_ndtr_with_jvp = custom_jvp(_log_ndtr, nondiff_argnums=(1,))


@_log_ndtr_with_jvp.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    out = _log_ndtr_with_jvp(x, series_order)
    return out, pnp.multiply(t, pnp.exp(pnp.subtract(norm_logpdf(x), out)))


def log_ndtr(x, series_order=3):
    """``log(ndtr(x))``, accurate far into both tails (an asymptotic series below -10 for
    float32, -20 for float64; ``-ndtr(-x)`` above 5 / 8).

    Args:
      x: a float32 or float64 array.
      series_order: the number of terms of the asymptotic series (a Python int in
        ``[0, 30]``), default 3.

    Returns:
      An array of ``x``'s dtype; its derivative is ``pdf(x) / ndtr(x)``, computed in logs.

    Example:
      >>> pto.scipy.special.log_ndtr(pnp.array([0.0, -20.0]))
      Array([  -0.6931472, -203.91716  ], dtype=float32)
    """
    if not isinstance(series_order, int) or isinstance(series_order, bool):
        raise TypeError(f"log_ndtr: series_order must be a Python int, got {series_order!r}")
    if not 0 <= series_order <= 30:
        raise ValueError(f"log_ndtr: series_order must be in [0, 30], got {series_order}")
    return strong(_log_ndtr_with_jvp(_float_only("log_ndtr", x), series_order))


def _tail_start(q):
    """A starting point (|error| < 4.5e-4) for ndtri(q), q <= 1/2: Abramowitz & Stegun
    26.2.23."""
    t = pnp.sqrt(pnp.multiply(-2.0, pnp.log(q)))
    numerator = pnp.add(2.515517, pnp.multiply(t, pnp.add(0.802853, pnp.multiply(t, 0.010328))))
    denominator = pnp.add(1.0, pnp.multiply(t, pnp.add(1.432788, pnp.multiply(
        t, pnp.add(0.189269, pnp.multiply(t, 0.001308))))))
    return pnp.negative(pnp.subtract(t, pnp.divide(numerator, denominator)))


def _ndtri(p):
    """ndtri: ``sqrt(2) erfinv(2p - 1)`` in the middle; in the tails Newton steps on
    ``log_ndtr(x) = log(q)`` (q = min(p, 1 - p)), which keep their relative accuracy down to
    the smallest q."""
    central = pnp.less_equal(pnp.abs(pnp.subtract(p, 0.5)), 0.425)
    middle = pnp.multiply(math.sqrt(2.0), lax.erf_inv(pnp.subtract(pnp.multiply(2.0, p), 1.0)))
    q = pnp.minimum(p, pnp.subtract(1.0, p))
    q = pnp.where(central | ~(q > 0), 0.25, q)      # keep unused lanes finite
    log_q = pnp.log(q)
    x = _tail_start(q)
    for _ in range(3):
        log_cdf = _log_ndtr(x, 3)
        x = pnp.subtract(x, pnp.multiply(pnp.subtract(log_cdf, log_q),
                                         pnp.exp(pnp.subtract(log_cdf, norm_logpdf(x)))))
    tail = pnp.where(pnp.greater(p, 0.5), pnp.negative(x), x)
    out = pnp.where(central, middle, tail)
    out = pnp.where(pnp.equal(p, 0), -pnp.inf, pnp.where(pnp.equal(p, 1), pnp.inf, out))
    return pnp.where((p < 0) | (p > 1) | pnp.isnan(p), pnp.nan, out)


_ndtri_with_jvp = custom_jvp(_ndtri)
_ndtri_with_jvp.defjvps(lambda t, x, p: pnp.multiply(t, pnp.exp(pnp.negative(norm_logpdf(x)))))


def ndtri(p):
    """The inverse of ``ndtr``: the ``x`` with ``ndtr(x) == p``.

    Args:
      p: a float32 or float64 array of probabilities; 0 and 1 give ``-inf`` and ``inf``,
        values outside ``[0, 1]`` NaN.

    Returns:
      An array of ``p``'s dtype; its derivative is ``1 / pdf(x)``.

    Example:
      >>> pto.scipy.special.ndtri(pnp.array([0.5, 0.975]))
      Array([0.       , 1.9599644], dtype=float32)
    """
    p = pnp.asarray(p)
    if p.dtype not in (dtypes.float32, dtypes.float64):
        raise DtypeError(f"ndtri: p must be float32 or float64, got {p.aval}", user_frame())
    return strong(_ndtri_with_jvp(p))
