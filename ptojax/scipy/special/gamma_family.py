"""The gamma function family: ``gammaln``, ``gammasgn``, ``gamma``, ``loggamma``, ``digamma``,
``beta``, ``betaln``, ``factorial``, ``comb``, ``poch``, ``multigammaln``."""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.errors import ConcretizationError, DtypeError
from ptojax.scipy.special.bernoulli import stirling_coefficients
from ptojax.scipy.special.normal import inexact
from ptojax.source_info import user_frame


def gammaln(x):
    """``log(|Gamma(x)|)``.

    Args:
      x: real array.

    Returns:
      An array of floats (``inf`` at the poles ``0, -1, -2, ...``).

    Example:
      >>> pto.scipy.special.gammaln(pnp.array([4.0, 0.5]))
      Array([1.7917595, 0.5723649], dtype=float32)
    """
    return lax.lgamma(inexact("gammaln", x))


def digamma(x):
    """The digamma function ``d/dx log(Gamma(x))``.

    Args:
      x: real array.

    Returns:
      An array of floats (NaN at the poles ``0, -1, -2, ...``).

    Example:
      >>> pto.scipy.special.digamma(pnp.array([1.0]))
      Array([-0.5772157], dtype=float32)
    """
    return lax.digamma(inexact("digamma", x))


def gammasgn(x):
    """The sign of ``Gamma(x)``: 1 or -1; ``+-1`` at ``+-0``; NaN at negative integers,
    ``-inf`` and NaN.

    Args:
      x: real array.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.gammasgn(pnp.array([2.5, -0.5, -1.5]))
      Array([ 1., -1.,  1.], dtype=float32)
    """
    x = inexact("gammasgn", x)
    floor_x = pnp.floor(x)
    negative = pnp.less(x, 0)
    undefined = (negative & pnp.equal(x, floor_x)) | pnp.isnan(x)
    minus = (negative & pnp.not_equal(pnp.remainder(floor_x, 2), 0)) | \
        (pnp.equal(x, 0) & pnp.signbit(x))
    return pnp.where(undefined, pnp.nan, pnp.where(minus, -1.0, 1.0)).astype(x.dtype)


def gamma(x):
    """The gamma function ``Gamma(x)`` (``(x - 1)!`` at positive integers).

    Args:
      x: real array.

    Returns:
      An array of floats: ``+-inf`` at ``+-0``, NaN at negative integers.

    Example:
      >>> pto.scipy.special.gamma(pnp.array([5.0, 0.5]))
      Array([24.       ,  1.7724538], dtype=float32)
    """
    x = inexact("gamma", x)
    return pnp.multiply(gammasgn(x), pnp.exp(lax.lgamma(x)))


def loggamma(x):
    """The principal branch of ``log(Gamma(x))`` for real ``x``: ``gammaln(x)`` for ``x > 0``,
    NaN elsewhere (complex inputs are not supported).

    Args:
      x: real array.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.loggamma(pnp.array([3.0, -0.5]))
      Array([0.6931472,       nan], dtype=float32)
    """
    x = inexact("loggamma", x)
    return pnp.where(pnp.greater(x, 0), lax.lgamma(x), pnp.nan)


def _stirling_remainder(x):
    """``delta(x) = lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2)`` for ``x >= 8``."""
    inv = pnp.reciprocal(x)
    inv2 = pnp.square(inv)
    total = pnp.zeros_like(x)
    for c in reversed(stirling_coefficients(8)):
        total = pnp.add(pnp.multiply(total, inv2), c)
    return pnp.multiply(total, inv)


def _lgamma_ratio(a, b):
    """``lgamma(b) - lgamma(a + b)`` for ``b >= 8``, without the cancellation of the
    difference: Stirling's formula for both, with ``log(a + b) = log b + log1p(a / b)``."""
    b = pnp.maximum(b, 8.0)
    linear = pnp.multiply(a, pnp.subtract(pnp.log(b), 1.0))
    shifted = pnp.multiply(pnp.add(b, pnp.subtract(a, 0.5)), pnp.log1p(pnp.divide(a, b)))
    remainders = pnp.subtract(_stirling_remainder(b), _stirling_remainder(pnp.add(a, b)))
    return pnp.subtract(remainders, pnp.add(linear, shifted))


def betaln(a, b):
    """``log(|B(a, b)|) = gammaln(a) + gammaln(b) - gammaln(a + b)``, accurate when ``a`` or
    ``b`` is large (Stirling's series for the ratio once ``max(a, b) >= 8``).

    Args:
      a: real array.
      b: real array broadcasting against ``a``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.betaln(pnp.array([2.0]), pnp.array([3.0]))
      Array([-2.4849067], dtype=float32)
    """
    a, b = inexact("betaln", a, b)
    a, b = pnp.minimum(a, b), pnp.maximum(a, b)
    direct = pnp.add(lax.lgamma(a), pnp.subtract(lax.lgamma(b), lax.lgamma(pnp.add(a, b))))
    large = pnp.add(lax.lgamma(a), _lgamma_ratio(a, b))
    return pnp.where(pnp.less(b, 8), direct, large)


def beta(a, b):
    """The beta function ``B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)``.

    Args:
      a: real array.
      b: real array broadcasting against ``a``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.beta(pnp.array([2.0]), pnp.array([3.0]))
      Array([0.08333334], dtype=float32)
    """
    a, b = inexact("beta", a, b)
    sign = pnp.multiply(pnp.multiply(gammasgn(a), gammasgn(b)), gammasgn(pnp.add(a, b)))
    return pnp.multiply(sign, pnp.exp(betaln(a, b)))


def factorial(n, exact=False):
    """``n! = Gamma(n + 1)`` as floats (0 for negative ``n``).

    Args:
      n: real array.
      exact: only False (float results) is supported, as in JAX.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.factorial(pnp.array([0.0, 5.0, -1.0]))
      Array([  1.      , 120.000015,   0.      ], dtype=float32)
    """
    if exact:
        raise NotImplementedError("factorial: exact=True is not supported (as in JAX); "
                                  "results are floats")
    n = inexact("factorial", n)
    return pnp.where(pnp.less(n, 0), 0.0, pnp.exp(lax.lgamma(pnp.add(n, 1))))


def comb(N, k, *, repetition=False):
    """The number of ways to choose ``k`` of ``N`` things, as floats; 0 when ``N < 0``,
    ``k < 0`` or ``k > N`` (without repetition).

    Args:
      N: real array.
      k: real array broadcasting against ``N``.
      repetition: count combinations with repetition, ``comb(N + k - 1, k)``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.comb(pnp.array([5.0]), pnp.array([2.0]))
      Array([10.000001], dtype=float32)
    """
    N, k = inexact("comb", N, k)
    if repetition:
        result = comb(pnp.subtract(pnp.add(N, k), 1), k)
        return pnp.where(pnp.equal(k, 0) & pnp.greater_equal(N, 0), 1.0, result)
    valid = pnp.less_equal(k, N) & pnp.greater_equal(N, 0) & pnp.greater_equal(k, 0)
    n, kk = pnp.where(valid, N, 0.0), pnp.where(valid, k, 0.0)
    log_result = pnp.subtract(pnp.subtract(lax.lgamma(pnp.add(n, 1)), lax.lgamma(pnp.add(kk, 1))),
                              lax.lgamma(pnp.subtract(pnp.add(n, 1), kk)))
    return pnp.where(valid, pnp.exp(log_result), 0.0)


@custom_jvp
def _poch(z, m):
    ratio = pnp.divide(gamma(pnp.add(z, m)), gamma(z))
    return pnp.where(pnp.equal(m, 0), pnp.ones_like(ratio), ratio)


_poch.defjvps(
    lambda t, out, z, m: pnp.multiply(t, pnp.multiply(
        pnp.subtract(lax.digamma(pnp.add(z, m)), lax.digamma(z)), out)),
    lambda t, out, z, m: pnp.multiply(t, pnp.multiply(lax.digamma(pnp.add(z, m)), out)))


def poch(z, m):
    """The Pochhammer symbol ``(z)_m = Gamma(z + m) / Gamma(z)`` (1 when ``m == 0``).

    Args:
      z: real array.
      m: real array broadcasting against ``z``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.poch(pnp.array([3.0]), pnp.array([2.0]))
      Array([12.], dtype=float32)
    """
    z, m = inexact("poch", z, m)
    return _poch(*pnp.broadcast_arrays(z, m))


def multigammaln(a, d):
    """The log of the multivariate gamma function
    ``log(pi^(d(d-1)/4) prod_{i=1..d} Gamma(a - (i-1)/2))``.

    Args:
      a: real array.
      d: the dimension (a static Python int).

    Returns:
      An array of ``a``'s shape.

    Example:
      >>> pto.scipy.special.multigammaln(pnp.array([3.0]), 2)
      Array([1.550195], dtype=float32)
    """
    try:
        d = operator.index(d)
    except TypeError:
        raise ConcretizationError(f"multigammaln: d must be a static Python int, got {d!r}",
                                  user_frame()) from None
    a = inexact("multigammaln", a)
    halves = pnp.asarray(np.arange(d) / 2.0, a.dtype)
    terms = lax.lgamma(pnp.subtract(pnp.expand_dims(a, -1), halves))
    constant = 0.25 * d * (d - 1) * math.log(math.pi)
    return pnp.add(pnp.sum(terms, axis=-1), pnp.asarray(constant, a.dtype))


def check_integer(name, what, x):
    """``x`` as an array of an integer dtype, else a DtypeError."""
    x = pnp.asarray(x)
    if not pnp.issubdtype(x.dtype, pnp.integer):
        raise DtypeError(f"{name}: {what} must be of an integer dtype, got {x.aval}",
                         user_frame(2))
    return x
