"""The Gauss hypergeometric function ``hyp2f1(a, b, c, x) = 2F1(a, b; c; x) = sum_k (a)_k
(b)_k / ((c)_k k!) x^k`` for real arguments, as JAX's (Pearson, Olver and Porter 2014,
arXiv:1407.7786; Abramowitz and Stegun 15.3.10-12):

- ``1`` at ``x = 0`` or ``a = 0``/``b = 0`` (``c != 0``); ``inf`` for ``c`` a non-positive
  integer, ``x > 1``, or ``x = 1`` with ``c - a - b <= 0``; Gauss's sum
  ``Gamma(c) Gamma(c-a-b) / (Gamma(c-a) Gamma(c-b))`` at ``x = 1``; ``(1-x)^-a`` where
  ``b = c`` and ``(1-x)^-b`` where ``a = c`` (``x < 1``);
- Euler's transformation ``(1-x)^(c-a-b) 2F1(c-a, c-b; c; x)`` where ``c - a - b <= -1``;
- otherwise the Taylor series; the terminating sum where ``a`` or ``b`` is a non-positive
  integer; and for ``x > 0.9`` with ``c - a - b`` an integer, the digamma expansion of
  A&S 15.3.10-12 in ``1 - x``.

Each loop is one ``while_loop`` over the whole array, each element stopping where JAX's
per-element loop stops. Derivatives: digamma-weighted series in ``a``, ``b``, ``c`` and
``d/dx = a b / c 2F1(a+1, b+1; c+1; x)``."""
from __future__ import annotations

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.dtypes import finfo
from ptojax.scipy.special.gamma_family import digamma, gamma
from ptojax.scipy.special.normal import inexact
from ptojax.scipy.special.series import MAX_TERMS, sequences_as_arrays, sum_series


def _taylor(a, b, c, x):
    return sum_series(pnp.ones_like(x), lambda k: (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x,
                      start=0.0, relative=False)


def _terminating(a, b, c, x):
    """The finite sum for a non-positive integer ``a`` or ``b`` (``|a|`` terms after the
    first; ``b`` takes ``a``'s place when it is the smaller such integer)."""
    eps = finfo(x.dtype).eps * 50
    swap = (b < a) & (pnp.abs(b - pnp.round(b)) < eps) & \
        ~((c % 1 == 0) & (c <= 0) & (c > b))
    a, b = pnp.where(swap, b, a), pnp.where(swap, a, b)
    a = pnp.abs(a)

    def body(state):
        i, serie, term = state
        going = i < a + 1
        term = pnp.where(going, term * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x), term)
        return i + 1.0, pnp.where(going, serie + term, serie), term

    one = pnp.ones_like(x)
    return lax.while_loop(lambda s: pnp.any(s[0] < a + 1), body, (one, one, one))[1]


def _digamma_transform(a, b, c, x):
    """A&S 15.3.10-12: ``2F1`` near ``x = 1`` for an integer ``c - a - b``."""
    rtol = finfo(x.dtype).eps
    d = c - a - b
    s = 1 - x
    rd = pnp.round(d)
    up = rd >= 0
    e = pnp.where(up, d, -d)
    d1, d2 = pnp.where(up, d, 0.0), pnp.where(up, 0.0, d)
    steps = pnp.abs(rd)
    log_s = pnp.log(s)
    y = (digamma(pnp.ones_like(x)) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1)
         - log_s) / gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def body(state):
        t, p, q, y = state
        going = (t < MAX_TERMS) & (pnp.abs(q) >= rtol * pnp.abs(y))
        r = digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) \
            - digamma(b + t + d1) - log_s
        q_next = p * r
        p_next = p * (s * (a + t + d1) / (t + 1.0)) * ((b + t + d1) / (t + 1.0 + e))
        return (pnp.where(going, t + 1.0, t), pnp.where(going, p_next, p),
                pnp.where(going, q_next, q), pnp.where(going, y + q_next, y))

    def going(state):
        t, _, q, y = state
        return pnp.any((t < MAX_TERMS) & (pnp.abs(q) >= rtol * pnp.abs(y)))

    y = lax.while_loop(going, body, (pnp.ones_like(x), p, y, y))[3]

    def finite_body(state):      # sum_{i=1}^{|rd|-1}
        i, t, p, total = state
        on = i < steps
        p_next = p * s * (a + t + d2) * (b + t + d2) / (1.0 - e + t) / (t + 1.0)
        return (i + 1.0, pnp.where(on, t + 1.0, t), pnp.where(on, p_next, p),
                pnp.where(on, total + p_next, total))

    one, zero = pnp.ones_like(x), pnp.zeros_like(x)
    finite = lax.while_loop(lambda st: pnp.any(st[0] < steps), finite_body,
                            (one, zero, one, one))[3]
    gamma_c = gamma(c)
    finite = finite * gamma(e) * gamma_c / (gamma(a + d1) * gamma(b + d1))
    y_scaled = y * gamma_c / (gamma(a + d2) * gamma(b + d2))
    y_scaled = pnp.where(steps % 2 == 1, -y_scaled, y_scaled)
    q = s ** rd
    combined = pnp.where(rd > 0, y_scaled * q + finite, y_scaled + finite * q)
    return pnp.where(rd == 0, y * gamma_c / (gamma(a) * gamma(b)), combined)


def _series_choice(a, b, c, x):
    """Which method sums ``2F1(a, b; c; x)``: 0 Taylor, 1 digamma transform, 2 terminating."""
    eps = finfo(x.dtype).eps * 50
    d = c - a - b
    negative_integer = ((a <= 0) & (pnp.abs(a - pnp.round(a)) < eps)) | \
        ((b <= 0) & (pnp.abs(b - pnp.round(b)) < eps))
    near_one = (x > 0.9) & ~negative_integer
    return pnp.where(near_one, pnp.where(pnp.abs(d - pnp.round(d)) >= eps, 0, 1),
                     pnp.where(negative_integer, 2, 0))


def _summed(a, b, c, x, use):
    """``2F1`` by the series of ``_series_choice`` where ``use``; each method gets benign
    arguments where it is not the one chosen (so its loop ends at once there)."""
    choice = _series_choice(a, b, c, x)
    taylor_here, digamma_here, finite_here = (use & (choice == i) for i in range(3))
    taylor = _taylor(a, b, c, pnp.where(taylor_here, x, 0.0))
    transformed = _digamma_transform(pnp.where(digamma_here, a, 0.5),
                                     pnp.where(digamma_here, b, 0.5),
                                     pnp.where(digamma_here, c, 2.0),
                                     pnp.where(digamma_here, x, 0.95))
    finite = _terminating(pnp.where(finite_here, a, 0.0), b, c, x)
    return pnp.where(choice == 1, transformed, pnp.where(choice == 2, finite, taylor))


@custom_jvp
def _hyp2f1(a, b, c, x):
    eps = finfo(x.dtype).eps * 50
    d = c - a - b
    s = 1 - x
    ca, cb = c - a, c - b
    infinite_c = (c == 0) | ((c < 0) & (c % 1 == 0))
    euler = (d <= -1) & ~((pnp.abs(d - pnp.round(d)) >= eps) & (s < 0))
    case = pnp.where(
        (x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0,
        pnp.where(infinite_c, 1,
                  pnp.where(euler, 2,
                            pnp.where((d <= 0) & (x == 1), 1,
                                      pnp.where((x < 1) & (b == c), 3,
                                                pnp.where((x < 1) & (a == c), 4,
                                                          pnp.where(x > 1, 1,
                                                                    pnp.where(x == 1, 5,
                                                                              6))))))))
    summed = _summed(pnp.where(case == 2, ca, a), pnp.where(case == 2, cb, b), c, x,
                     (case == 2) | (case == 6))
    gauss_sum = gamma(c) * gamma(d) / (gamma(ca) * gamma(cb))
    out = pnp.select([case == 0, case == 1, case == 2, case == 3, case == 4, case == 5],
                     [pnp.ones_like(x), pnp.full_like(x, np.inf), s ** d * summed, s ** (-a),
                      s ** (-b), gauss_sum], summed)
    return out


def _parameter_series(a, b, c, x, weight):
    return sum_series(a * b / c * x, lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x,
                      start=0.0, weight=weight)


_hyp2f1.defjvps(
    lambda t, out, a, b, c, x: _parameter_series(
        a, b, c, x, lambda k: digamma(a + k) - digamma(a)) * t,
    lambda t, out, a, b, c, x: _parameter_series(
        a, b, c, x, lambda k: digamma(b + k) - digamma(b)) * t,
    lambda t, out, a, b, c, x: _parameter_series(
        a, b, c, x, lambda k: digamma(c) - digamma(c + k)) * t,
    lambda t, out, a, b, c, x: a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * t)


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function ``2F1(a, b; c; x)`` of real arguments (see the
    module); as JAX, ``inf`` for ``x > 1`` (no analytic continuation), and large values lose
    accuracy in float32.

    Args:
      a: real array.
      b: real array.
      c: real array.
      x: real array.

    Returns:
      An array of floats (the arguments broadcast together).

    Example:
      >>> pto.scipy.special.hyp2f1(1.0, 1.0, 2.0, pnp.array([0.0, 0.5]))
      Array([1.       , 1.3862945], dtype=float32)
    """
    a, b, c, x = inexact("hyp2f1", *sequences_as_arrays("hyp2f1", a, b, c, x))
    if pnp.iscomplexobj(x):
        raise ValueError("hyp2f1 does not support complex-valued inputs.")
    a, b, c, x = pnp.broadcast_arrays(a, b, c, x)
    return _hyp2f1(a, b, c, x)
