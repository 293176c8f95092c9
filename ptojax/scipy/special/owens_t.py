"""Owen's T function ``T(h, a) = 1/(2 pi) integral_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx``,
as JAX's ``jax.scipy.special.owens_t``.

The integral is taken by JAX's 13-point Gauss-type rule (Patefield and Tandy's method T5,
substituting ``x^2 = a^2 t`` so that the nodes ``t_i`` and weights ``w_i`` below absorb
``1/(2 pi)``): ``T(h, a) ~ a sum_i w_i exp(-h^2 (1 + a^2 t_i) / 2) / (1 + a^2 t_i)`` for
``|a| <= 1``. Larger ``|a|`` uses ``T(h, a) = (Phi(h) + Phi(ah))/2 - Phi(h) Phi(ah) - T(ah,
1/a)`` (in erf/erfc form), and ``h = 0``, ``|a| = 1`` have closed forms. ``T`` is even in
``h`` and odd in ``a``. Derivatives are closed forms: ``dT/dh = -exp(-h^2/2) erf(ah/sqrt 2) /
(2 sqrt(2 pi))``, ``dT/da = exp(-(1 + a^2) h^2 / 2) / (2 pi (1 + a^2))``.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.scipy.special.normal import inexact
from ptojax.public import add_examples

# the rule's nodes t_i in (0, 1) and weights w_i (JAX's table)
_NODES = np.array([
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
    0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
    0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
    0.99178832974629704])
_WEIGHTS = np.array([
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
    0.0016793031084546090])
_SQRT2 = math.sqrt(2.0)


def _quadrature(h, a):
    """The 13-point rule for ``0 <= a <= 1``, ``h >= 0``."""
    nodes = _NODES.astype(a.dtype)
    r = pnp.square(a)[..., None] * nodes
    integrand = pnp.exp(-0.5 * pnp.square(h)[..., None] * (1.0 + r)) / (1.0 + r)
    return a * (integrand @ _WEIGHTS.astype(a.dtype))


@custom_jvp
def _owens_t(h, a):
    h, abs_a = pnp.abs(h), pnp.abs(a)
    small_a = abs_a <= 1.0
    a_ = pnp.where(small_a, abs_a, 1.0 / abs_a)   # the rule's a: at most 1
    h_ = pnp.where(small_a, h, abs_a * h)
    t = _quadrature(h_, a_)
    t = pnp.where(h_ == 0.0, pnp.arctan(a_) / (2 * np.pi), t)
    t = pnp.where(a_ == 1.0, 0.125 * lax.erfc(-h_ / _SQRT2) * lax.erfc(h_ / _SQRT2), t)
    # |a| > 1: T(h, a) from T(ah, 1/a); erf form for small ah, erfc form otherwise
    h_half, ah_half = h / _SQRT2, abs_a * h / _SQRT2
    upper_h, upper_ah = lax.erfc(h_half), lax.erfc(ah_half)
    near = 0.25 - 0.25 * lax.erf(h_half) * lax.erf(ah_half) - t
    far = 0.25 * (upper_h + upper_ah - upper_h * upper_ah) - t
    t = pnp.where(small_a, t, pnp.where(abs_a * h <= 0.67, near, far))
    t = lax.sign(a) * t
    return pnp.where(pnp.isnan(a) | pnp.isnan(h), np.nan, t).astype(t.dtype)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (h_dot, a_dot) = primals, tangents
    d_h = (-pnp.exp(-0.5 * pnp.square(h)) * lax.erf(a * h / _SQRT2)
           / (2.0 * math.sqrt(2.0 * np.pi)))
    one_plus_a2 = pnp.square(a) + 1.0
    d_a = pnp.exp(-0.5 * one_plus_a2 * pnp.square(h)) / (2.0 * np.pi * one_plus_a2)
    out = _owens_t(h, a)
    return out, (d_h * h_dot + d_a * a_dot).astype(out.dtype)


def owens_t(h, a):
    """Owen's T function of real ``h`` and ``a`` (broadcast; see the module)."""
    h, a = inexact("owens_t", h, a)
    h, a = pnp.broadcast_arrays(h, a)
    return _owens_t(h, a)


add_examples(globals(), """
owens_t:
    >>> pto.scipy.special.owens_t(pnp.array([0.0, 0.5, 2.0]), pnp.array([0.5, 1.0, 3.0]))
    Array([0.07379181, 0.10667107, 0.01137507], dtype=float32)
""")
