"""The Hurwitz zeta function and the polygamma functions built on it."""
from __future__ import annotations

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.scipy.special.bernoulli import euler_maclaurin_coefficients
from ptojax.scipy.special.gamma_family import check_integer
from ptojax.scipy.special.normal import inexact

# terms summed directly (N) and Euler-Maclaurin correction terms (M), by dtype
_TERMS = {"float32": 8, "float64": 16}


def _terms(dtype) -> int:
    return _TERMS.get(np.dtype(dtype).name, 8)


def _euler_maclaurin(s, a):
    """``zeta(s, a)`` for ``s > 1`` by Euler-Maclaurin summation: ``sum_{k<N} (a + k)^-s``,
    the integral of the tail ``(a + N)^(1-s) / (s - 1)`` and its corrections
    ``(a + N)^-s (1/2 + sum_j B_2j / (2j)! * s (s+1) ... (s+2j-2) / (a + N)^(2j-1))``."""
    n = _terms(s.dtype)
    head = pnp.zeros_like(s)
    for k in range(n):
        head = pnp.add(head, pnp.power(pnp.add(a, float(k)), pnp.negative(s)))
    tail_start = pnp.add(a, float(n))
    integral = pnp.divide(pnp.power(tail_start, pnp.subtract(1.0, s)), pnp.subtract(s, 1.0))
    rising = pnp.divide(s, tail_start)            # s (s+1) ... (s+2j-2) / (a+N)^(2j-1)
    corrections = pnp.full_like(s, 0.5)
    for j, c in enumerate(euler_maclaurin_coefficients(n), 1):
        corrections = pnp.add(corrections, pnp.multiply(c, rising))
        for m in (2 * j - 1, 2 * j):
            rising = pnp.multiply(rising, pnp.divide(pnp.add(s, float(m)), tail_start))
    return pnp.add(pnp.add(head, integral),
                   pnp.multiply(pnp.power(tail_start, pnp.negative(s)), corrections))


def zeta(x, q=None):
    """The Hurwitz zeta function ``sum_{n >= 0} (n + q)^-x``.

    As in JAX: ``inf`` at ``x == 1`` and at non-positive integer ``q``, NaN for ``x < 1``
    and for negative non-integer ``q`` with non-integer ``x``. Differentiable in both
    arguments (the derivative of the summation formula).

    Args:
      x: real array, the exponent.
      q: real array broadcasting against ``x``, the shift (required: the Riemann zeta
        function ``q = None`` is not implemented, as in JAX).

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.zeta(pnp.array([2.0]), pnp.array([1.0]))
      Array([1.6449342], dtype=float32)
    """
    if q is None:
        raise NotImplementedError("zeta: the Riemann zeta function (q=None) is not "
                                  "implemented, as in JAX; pass q=1.0")
    x, q = pnp.broadcast_arrays(*inexact("zeta", x, q))
    q_is_integer = pnp.equal(q, pnp.floor(q))
    x_is_integer = pnp.equal(x, pnp.floor(x))
    value = _euler_maclaurin(x, q)
    value = pnp.where(pnp.equal(x, 1) | (pnp.less_equal(q, 0) & q_is_integer), pnp.inf, value)
    undefined = pnp.less(x, 1) | (pnp.less(q, 0) & ~q_is_integer & ~x_is_integer)
    return pnp.where(undefined | pnp.isnan(x) | pnp.isnan(q), pnp.nan, value)


def polygamma(n, x):
    """The polygamma function ``psi^(n)(x)``, the ``n``-th derivative of ``digamma``:
    ``digamma(x)`` for ``n == 0``, ``(-1)^(n+1) n! zeta(n + 1, x)`` for ``n >= 1``, NaN for
    negative ``n``.

    Args:
      n: array of an integer dtype, the order.
      x: real array broadcasting against ``n``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.polygamma(1, pnp.array([1.0]))
      Array([1.6449342], dtype=float32)
    """
    check_integer("polygamma", "n", n)
    n, x = pnp.broadcast_arrays(*inexact("polygamma", n, x))
    order = pnp.maximum(n, 1.0)
    sign = pnp.where(pnp.equal(pnp.remainder(order, 2), 1), 1.0, -1.0)
    scale = pnp.multiply(sign, pnp.exp(lax.lgamma(pnp.add(order, 1.0))))
    higher = pnp.multiply(scale, zeta(pnp.add(order, 1.0), x))
    out = pnp.where(pnp.equal(n, 0), lax.digamma(x), higher)
    return pnp.where(pnp.less(n, 0), pnp.nan, out)
