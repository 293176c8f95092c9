"""``pto.random``'s gamma family: ``gamma``, ``loggamma``, and ``beta`` and ``dirichlet`` built
from them, drawn as JAX draws them, so that the same key gives JAX's samples.

A Gamma(``a``) draw follows JAX's algorithm (Marsaglia and Tsang, "A simple method for
generating gamma variables", 2000) and its use of keys step by step:

- the key is split into one key per element of the result (flat order); each element splits
  its key into a rejection key and a boost key;
- ``a < 1`` is raised to ``a + 1``; then ``d = a - 1/3`` and ``c = 1 / (3 sqrt(d))``;
- each rejection round splits the rejection key in three (the next rejection key, a normal
  key, a uniform key). From the normal key it draws normals ``x`` from successive splits
  until ``v = 1 + c x`` is positive, then one uniform ``U`` from the uniform key. It accepts
  ``d v^3`` unless ``U >= 1 - 0.0331 x^4`` and ``log U >= x^2 / 2 + d (1 - v^3 + log v^3)``;
- for ``a < 1`` the sample is multiplied by ``(1 - u)^(1/a)`` (``gamma``), or ``log1p(-u) / a``
  is added to its log (``loggamma``), for ``u`` uniform from the boost key.

All elements run the rounds together, and an element that has accepted keeps its value. This
is what JAX's vectorized loop does, so every element sees the same keys as in JAX.

The samples equal JAX's to the last bits of ``normal``, ``log`` and ``pow``. ptojax's
``erf_inv`` and ``log1p`` are not XLA's float32 approximations (see ``core.py``): a normal
draw may differ by a few ulps, and a gamma sample by as much. The accept/reject decisions are
the same unless a proposal lies within those ulps of the bound, which is very rare.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray as _asarray
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.errors import ShapeError
from ptojax.eval.array import Array
from ptojax.ops.convert import convert_element_type as convert_exactly
from ptojax.public import add_examples
from ptojax.random.core import (_check_broadcasts, _float_dtype, _normal_of_unit, _shape,
                                _shape_or_broadcast, _unit_floats)
from ptojax.random.keys import _check_key, _hash, split
from ptojax.source_info import user_frame

_SQUEEZE = 0.0331   # Marsaglia and Tsang's squeeze constant


def gamma(key, a, shape=None, dtype=None):
    """Gamma(``a``, 1) samples (Marsaglia-Tsang rejection; ``a < 1`` boosted by
    ``u ** (1 / a)``), as JAX draws them. ``shape`` defaults to ``a``'s shape. Differentiable
    in ``a`` by implicit reparameterization (``d x / d a = -(d F / d a) / p(x)``), as JAX."""
    key, a, shape = _gamma_arguments("gamma", key, a, shape, dtype)
    return _gamma(key, pnp.broadcast_to(a, shape))


def loggamma(key, a, shape=None, dtype=None):
    """``log`` of Gamma(``a``, 1) samples, computed in log space so that small ``a`` (whose
    samples underflow) keeps its precision. Differentiable in ``a``."""
    key, a, shape = _gamma_arguments("loggamma", key, a, shape, dtype)
    return _loggamma(key, pnp.broadcast_to(a, shape))


def _gamma_arguments(name, key, a, shape, dtype):
    key = _check_key(name, key)
    dtype = _float_dtype(name, dtype)
    a = _asarray(a, dtype)
    shape = tuple(a.shape) if shape is None else _shape(shape)
    _check_broadcasts(name, a.shape, shape)
    return key, a, shape


@custom_jvp
def _gamma(key, a):
    return _marsaglia_tsang(key, a, log_space=False)


@_gamma.defjvp
def _gamma_jvp(primals, tangents):
    key, a = primals
    _, a_dot = tangents
    x = _gamma(key, a)
    return x, pnp.multiply(_gamma_sample_grad(a, x), a_dot)


@custom_jvp
def _loggamma(key, a):
    return _marsaglia_tsang(key, a, log_space=True)


@_loggamma.defjvp
def _loggamma_jvp(primals, tangents):
    key, a = primals
    _, a_dot = tangents
    log_x = _loggamma(key, a)
    return log_x, pnp.multiply(_log_gamma_sample_grad(a, log_x), a_dot)


# the draw ----------------------------------------------------------------------------------------
def _marsaglia_tsang(key, a, log_space):
    """Gamma(``a``) samples (or their logs), one per element of ``a``, as the module docstring
    says."""
    shape, dtype = tuple(a.shape), a.dtype
    size = math.prod(shape)
    if size == 0:
        return pnp.zeros(shape, dtype)
    alpha = lax.reshape(a, (size,))
    rejection_keys, boost_keys = _split_each(split(key, size), 2)
    unboosted = pnp.greater_equal(alpha, 1)
    d = pnp.subtract(pnp.where(unboosted, alpha, pnp.add(alpha, 1)), 1 / 3)
    c = pnp.divide(1 / 3, pnp.sqrt(d))

    def rejected(state):
        _, x2, v3, u = state
        squeeze = pnp.greater_equal(u, pnp.subtract(1, pnp.multiply(_SQUEEZE, pnp.multiply(x2, x2))))
        bound = pnp.add(pnp.multiply(x2, 0.5),
                        pnp.multiply(d, pnp.add(pnp.subtract(1, v3), pnp.log(v3))))
        return pnp.logical_and(squeeze, pnp.greater_equal(pnp.log(u), bound))

    def round_(state):
        keys, x2, v3, u = state
        again = rejected(state)
        next_keys, normal_keys, uniform_keys = _split_each(keys, 3)
        x, v = _positive_proposal(normal_keys, c, again)
        new = (next_keys, pnp.multiply(x, x), pnp.multiply(pnp.multiply(v, v), v),
               _unit_floats(uniform_keys, (), dtype))
        return tuple(pnp.where(_column(again, n), n, o) for n, o in zip(new, state))

    ones = pnp.ones((size,), dtype)
    start = (rejection_keys, pnp.zeros((size,), dtype), ones, pnp.multiply(ones, 2))
    v3 = lax.while_loop(lambda state: pnp.any(rejected(state)), round_, start)[2]
    u = _unit_floats(boost_keys, (), dtype)
    if log_space:
        log_u = lax.log1p(pnp.negative(u))
        log_boost = pnp.where(pnp.logical_or(unboosted, pnp.equal(log_u, 0)), 0,
                              pnp.multiply(log_u, pnp.divide(1, alpha)))
        out = pnp.add(pnp.add(pnp.log(d), pnp.log(v3)), log_boost)
    else:
        boost = pnp.where(unboosted, 1, pnp.power(pnp.subtract(1, u), pnp.divide(1, alpha)))
        out = pnp.multiply(pnp.multiply(d, v3), boost)
    return lax.reshape(out, shape)


def _positive_proposal(keys, c, wanted):
    """Per element, normals ``x`` from successive splits of its key until ``v = 1 + c x > 0``
    (only where ``wanted``): ``(x, v)``."""
    def step(state):
        keys, x, v = state
        pending = pnp.less_equal(v, 0)
        next_keys, normal_keys = _split_each(keys, 2)
        new_x = _normal_of_unit(_unit_floats(normal_keys, (), c.dtype))
        new = (next_keys, new_x, pnp.add(1, pnp.multiply(new_x, c)))
        return tuple(pnp.where(_column(pending, n), n, o) for n, o in zip(new, state))

    zeros = pnp.zeros(c.shape, c.dtype)
    start = (keys, zeros, pnp.where(wanted, -1, 1).astype(c.dtype))
    _, x, v = lax.while_loop(lambda state: pnp.any(pnp.less_equal(state[2], 0)), step, start)
    return x, v


def _split_each(keys, num):
    """``num`` keys from each key of the batch ``keys`` (uint32 words, shape (n, 2)), as
    ``split(key, num)`` of each: a list of ``num`` batches."""
    zero = Array(np.zeros((), dtypes.uint32))
    return [pnp.stack(_hash(keys, (zero, Array(np.asarray(i, dtypes.uint32)))), axis=-1)
            for i in range(num)]


def _column(mask, like):
    """``mask`` (n,) broadcastable against ``like`` ((n,) or a batch of keys (n, 2))."""
    return mask if like.ndim == 1 else pnp.expand_dims(mask, -1)


# derivatives in a ------------------------------------------------------------------------------
def _gamma_sample_grad(a, x):
    """``d x / d a`` of a Gamma(a) sample ``x``: ``lax.random_gamma_grad(a, x)``, in float64."""
    wide_a, wide_x = convert_exactly(a, dtypes.float64), convert_exactly(x, dtypes.float64)
    return lax.convert_element_type(lax.random_gamma_grad(wide_a, wide_x), a.dtype)


def _log_gamma_sample_grad(a, log_x):
    """``d log x / d a`` of a Gamma(a) sample ``x``: ``lax.random_gamma_grad(a, x) / x``, in
    float64 (a small ``a``'s samples underflow float32, their logs do not). Where even float64
    underflows (``log x < -700``), the limit for small ``x``: ``P(a, x) ~ x^a / Gamma(a + 1)``
    gives ``-(log x - digamma(a + 1)) / a``."""
    wide_a = convert_exactly(a, dtypes.float64)
    wide_log_x = convert_exactly(log_x, dtypes.float64)
    tiny = pnp.less(wide_log_x, -700.0)
    x = pnp.exp(pnp.where(tiny, 0.0, wide_log_x))
    exact = pnp.divide(lax.random_gamma_grad(wide_a, x), x)
    limit = pnp.divide(pnp.subtract(lax.digamma(pnp.add(wide_a, 1.0)), wide_log_x), wide_a)
    return lax.convert_element_type(pnp.where(tiny, limit, exact), a.dtype)


# from gamma draws ------------------------------------------------------------------------------
def beta(key, a, b, shape=None, dtype=None):
    """Beta(``a``, ``b``) samples, as ``Ga / (Ga + Gb)`` of two gamma draws (in log space).
    ``shape`` defaults to the broadcast shape of ``a`` and ``b``."""
    key = _check_key("beta", key)
    dtype = _float_dtype("beta", dtype)
    a, b = _asarray(a, dtype), _asarray(b, dtype)
    shape = _shape_or_broadcast(shape, a, b)
    key_a, key_b = split(key)
    log_a = loggamma(key_a, pnp.broadcast_to(a, shape), shape, dtype)
    log_b = loggamma(key_b, pnp.broadcast_to(b, shape), shape, dtype)
    top = lax.stop_gradient(pnp.maximum(log_a, log_b))
    gamma_a, gamma_b = pnp.exp(pnp.subtract(log_a, top)), pnp.exp(pnp.subtract(log_b, top))
    return pnp.divide(gamma_a, pnp.add(gamma_a, gamma_b))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(``alpha``) samples over ``alpha``'s last axis: normalized gamma draws.
    The result has shape ``shape + alpha.shape[-1:]``; ``shape`` defaults to
    ``alpha.shape[:-1]`` and must broadcast with it."""
    key = _check_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    alpha = _asarray(alpha, dtype)
    if alpha.ndim < 1:
        raise ShapeError(f"dirichlet: alpha must have at least one axis, got {alpha.aval}",
                         user_frame())
    shape = tuple(alpha.shape[:-1]) if shape is None else _shape(shape)
    _check_broadcasts("dirichlet", alpha.shape[:-1], shape)
    full = (*shape, alpha.shape[-1])
    log_gammas = loggamma(key, pnp.broadcast_to(alpha, full), full, dtype)
    top = lax.stop_gradient(pnp.max(log_gammas, axis=-1, keepdims=True))
    gammas = pnp.exp(pnp.subtract(log_gammas, top))
    return pnp.divide(gammas, pnp.sum(gammas, axis=-1, keepdims=True))


add_examples(globals(), """
gamma:
    >>> pto.random.gamma(pto.random.key(0), 2.0, (3,))
    Array([1.5897877, 1.7599413, 1.1290073], dtype=float32)
loggamma:
    >>> pto.random.loggamma(pto.random.key(2), 0.5, (2,))
    Array([-4.3054795, -2.1534681], dtype=float32)
beta:
    >>> pto.random.beta(pto.random.key(0), 2.0, 3.0, (3,))
    Array([0.23627363, 0.4904596 , 0.6837948 ], dtype=float32)
dirichlet:
    >>> pto.random.dirichlet(pto.random.key(0), pnp.array([1.0, 2.0, 3.0]))
    Array([0.1422856 , 0.40488255, 0.45283186], dtype=float32)
""")
