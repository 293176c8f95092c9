"""The confluent hypergeometric function ``hyp1f1(a, b, x) = 1F1(a; b; x) = sum_k (a)_k /
((b)_k k!) x^k``, as JAX (Pearson, Olver and Porter 2014, arXiv:1407.7786): the Taylor
series (their eq. 3.2) for ``|x| < 100``, the asymptotic expansion ``Gamma(b) / Gamma(a) e^x
x^(a-b) sum_k (b-a)_k (1-a)_k / k! x^-k`` (eq. 3.8) beyond; ``1`` where ``a = 0``, ``e^x``
where ``a = b != 0``, ``inf`` where ``b = 0 != a``. Derivatives: the series of
``d/da``/``d/db`` with digamma weights, and ``d/dx = a/b 1F1(a+1; b+1; x)``."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.scipy.special.gamma_family import digamma, gamma
from ptojax.scipy.special.normal import inexact
from ptojax.scipy.special.series import sequences_as_arrays, sum_series

_ASYMPTOTIC_FROM = 100.0


def _taylor(a, b, x):
    return sum_series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1))


def _asymptotic(a, b, x):
    serie = sum_series((b - a) * (1 - a) / x, lambda k: (b - a + k) * (1 - a + k) / (k + 1) / x)
    return gamma(b) / gamma(a) * pnp.exp(x) * x ** (a - b) * serie


def _d_da(a, b, x):
    return sum_series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1), start=0.0,
                      weight=lambda k: digamma(a + k) - digamma(a))


def _d_db(a, b, x):
    return sum_series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1), start=0.0,
                      weight=lambda k: digamma(b) - digamma(b + k))


@custom_jvp
def _hyp1f1(a, b, x):
    near = pnp.abs(x) < _ASYMPTOTIC_FROM
    taylor = _taylor(a, b, pnp.where(near, x, 0.0))
    asymptotic = _asymptotic(a, b, pnp.where(near, 10 * _ASYMPTOTIC_FROM, x))
    out = pnp.where(near, taylor, asymptotic)
    out = pnp.where((b == 0) & (a != 0), np.inf, out)
    out = pnp.where((a == b) & (a != 0), pnp.exp(x), out)
    return pnp.where(a == 0, 1.0, out).astype(x.dtype)


_hyp1f1.defjvps(lambda t, out, a, b, x: _d_da(a, b, x) * t,
                lambda t, out, a, b, x: _d_db(a, b, x) * t,
                lambda t, out, a, b, x: a / b * _hyp1f1(a + 1, b + 1, x) * t)


def hyp1f1(a, b, x):
    """The confluent hypergeometric function ``1F1(a; b; x)`` of real arguments (see the
    module); as JAX, ``hyp1f1(0, 0, x) = 1`` (SciPy: NaN), and large values lose accuracy
    in float32.

    Args:
      a: real array.
      b: real array.
      x: real array.

    Returns:
      An array of floats (the arguments broadcast together).

    Example:
      >>> pto.scipy.special.hyp1f1(1.0, 2.0, pnp.array([0.0, 1.0]))
      Array([1.       , 1.7182816], dtype=float32)
    """
    a, b, x = inexact("hyp1f1", *sequences_as_arrays("hyp1f1", a, b, x))
    if pnp.iscomplexobj(x):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    a, b, x = pnp.broadcast_arrays(a, b, x)
    return _hyp1f1(a, b, x)
