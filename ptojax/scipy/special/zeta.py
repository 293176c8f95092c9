"""The Hurwitz zeta function and the polygamma functions built on it: ``scipy.special``'s
argument handling (promotion, broadcasting, an integer order) over the compositions of
``ptojax/ops/zeta.py``, which ``lax.zeta``/``lax.polygamma`` share."""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.ops import zeta as _ops_zeta
from ptojax.scipy.special.gamma_family import check_integer
from ptojax.scipy.special.normal import inexact

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
    return _ops_zeta.zeta(x, q)


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
    return polygamma_of_order(*inexact("polygamma", n, x))


def polygamma_of_order(n, x):
    """``polygamma`` of an order ``n`` given as floats of ``x``'s dtype (``lax.polygamma``):
    NaN where ``n`` is negative or not an integer."""
    return _ops_zeta.polygamma(*pnp.broadcast_arrays(n, x))
