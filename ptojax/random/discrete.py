"""``pto.random``'s counting distributions, ``poisson``, ``binomial`` and ``multinomial``, by
JAX's algorithms: whole-array rejection or counting loops (``lax.while_loop``) that draw a
fresh uniform array per round from keys split as JAX splits them, until every element is done.

- ``poisson``: Knuth's product of uniforms for ``lam < 10``, Hörmann's transformed rejection
  (PTRS) above.
- ``binomial``: summed geometric waiting times (inversion) when ``n * min(p, 1-p) <= 10``,
  Hörmann's BTRS rejection above; the answer for ``p > 1/2`` is ``n`` minus a draw at ``1-p``.
- ``multinomial``: a ``scan`` of conditional binomials over the categories.

The uniform draws are JAX's bit for bit, so the samples agree with JAX's except where a
last-bit difference of ``log`` flips an acceptance test.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray as _asarray
from ptojax.eval.leaves import check_arraylike
from ptojax.errors import SamplerDtypeError
from ptojax.random.core import _check_key, _shape, split, uniform
from ptojax.source_info import user_frame
from ptojax.public import add_examples


def _isnan(x):
    return lax.ne(x, x)


def _split(key, num=2):
    keys = split(key, num)
    return [keys[i] for i in range(num)]


# poisson ----------------------------------------------------------------------------------------
def _poisson_knuth(key, lam, shape, dtype, max_iters):
    """Count the uniforms whose running product stays above ``exp(-lam)``."""
    def body(carry):
        i, k, key, log_prod = carry
        key, subkey = _split(key)
        k = lax.select(log_prod > -lam, k + 1, k)
        return i + 1, k, key, log_prod + pnp.log(uniform(subkey, shape, np.float32))

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return pnp.any(log_prod > -lam) & (i < max_iters)
    init = (0, pnp.zeros(shape, dtype), key, pnp.zeros(shape, np.float32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dtype)


def _until_accepted(propose, key, shape, value_dtype, dtype, max_iters):
    """Rejection sampling over a whole array: ``propose(key) -> (key, k, accept)`` draws a
    candidate per element, and an element takes ``k`` in every round that accepts it (as JAX:
    -1 if none does within ``max_iters`` rounds); rounds go on while any element has none."""
    def body(carry):
        i, k_out, accepted, key = carry
        key, k, accept = propose(key)
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, accepted = carry[0], carry[2]
        return pnp.any(~accepted) & (i < max_iters)
    init = (0, pnp.full(shape, -1, value_dtype), pnp.zeros(shape, bool), key)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    """Hörmann's PTRS: a transformed-rejection proposal, accepted by a squeeze or the log-pmf."""
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def propose(key):
        key, subkey_0, subkey_1 = _split(key, 3)
        u = uniform(subkey_0, shape, lam.dtype) - 0.5
        v = uniform(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        squeeze = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = squeeze | (~reject & (s <= t))
        return key, k, accept

    return _until_accepted(propose, key, shape, lam.dtype, dtype, max_iters)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(``lam``) samples (int by default); ``shape`` defaults to ``lam``'s shape.
    ``lam`` is taken at float32, as JAX."""
    key = _check_key("poisson", key)
    dtype = dtypes.user_dtype(int if dtype is None else dtype)
    if not dtypes.is_integer(dtype):
        raise SamplerDtypeError(f"poisson: dtype must be an integer dtype, got {dtype}",
                                user_frame())
    shape = tuple(np.shape(lam)) if shape is None else _shape(shape)
    lam = pnp.broadcast_to(_asarray(lam), shape).astype(np.float32)
    use_knuth = _isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, pnp.zeros_like(lam))
    lam_rejection = lax.select(use_knuth, pnp.full_like(lam, 1e5), lam)
    max_iters = np.iinfo(dtype).max
    result = lax.select(use_knuth,
                        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, pnp.zeros_like(result), result)


# binomial -------------------------------------------------------------------------------------
# log(k!) minus Stirling's approximation of it, for k = 0..9 (where the series is poor)
_STIRLING_TAIL = [math.lgamma(k + 1) - (k + 0.5) * math.log(k + 1) + (k + 1)
                  - 0.5 * math.log(2 * math.pi) for k in range(10)]


def _stirling_tail(k):
    """JAX's tail of Stirling's series: the table for k <= 9, else the series evaluated at the
    clamped k (as JAX computes it)."""
    table = _asarray(np.asarray(_STIRLING_TAIL), k.dtype)
    small = k <= 9
    k = lax.clamp(_asarray(0.0, k.dtype), k, _asarray(9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    return lax.select(small, table[pnp.floor(k).astype("int32")], approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    """Count geometric waiting times until their sum passes ``count``."""
    log_q = pnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = _split(key)
        num_geom = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        geom = pnp.ceil(pnp.log(uniform(subkey, shape, prob.dtype)) / log_q)
        return i + 1, num_geom, geom_sum + geom, key

    def cond(carry):
        i, geom_sum = carry[0], carry[2]
        return pnp.any(geom_sum <= count) & (i < max_iters)
    zeros = pnp.zeros(shape, prob.dtype)
    k = lax.while_loop(cond, body, (0, zeros, zeros, key))[1]
    return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    """Hörmann's BTRS: transformed rejection with a squeeze, then an exact log-ratio bound."""
    stddev = pnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = pnp.floor((count + 1) * prob)

    def propose(key):
        key, subkey_0, subkey_1 = _split(key, 3)
        u = uniform(subkey_0, shape, prob.dtype) - 0.5
        v = uniform(subkey_1, shape, prob.dtype)
        us = 0.5 - pnp.abs(u)
        squeeze = (us >= 0.07) & (v <= v_r)
        k = pnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = pnp.log(v * alpha / (a / (us * us) + b))
        bound = ((m + 0.5) * pnp.log((m + 1) / (r * (count - m + 1)))
                 + (count + 1) * pnp.log((count - m + 1) / (count - k + 1))
                 + (k + 0.5) * pnp.log(r * (count - k + 1) / (k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(count - k))
        accept = squeeze | (~reject & (v <= bound))
        return key, k, accept

    return _until_accepted(propose, key, shape, prob.dtype, dtype, max_iters)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(``n``, ``p``) samples as floats (float by default); ``shape`` defaults to the
    broadcast shape of ``n`` and ``p``. Invalid parameters (``p`` outside [0, 1] or NaN,
    ``n`` negative or NaN) give NaN, ``n = inf`` gives inf."""
    key = _check_key("binomial", key)
    dtype = dtypes.user_dtype(float if dtype is None else dtype)
    if not dtypes.is_float(dtype):
        raise SamplerDtypeError(f"binomial: dtype must be a floating-point dtype, got "
                                f"{dtype}", user_frame())
    check_arraylike("binomial", n, p)
    return _binomial(key, n, p, shape, dtype)


def _binomial(key, count, prob, shape, dtype):
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
    shape = _shape(shape)
    prob = _asarray(prob)
    prob = prob if dtypes.is_inexact(prob.dtype) else prob.astype(dtypes.canonicalize(float))
    count = pnp.broadcast_to(_asarray(count).astype(prob.dtype), shape)
    prob = pnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = _isnan(count) | (count < 0.0)
    count_inf = pnp.isinf(count)
    q_is_nan, q_negative = _isnan(q), q < 0.0
    q = lax.select(q_is_nan | q_negative, pnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = pnp.floor(count)
    count_inv = lax.select(use_inversion, count, pnp.zeros_like(count))
    count_btrs = lax.select(use_inversion, pnp.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, pnp.full_like(q, 0.5), q)
    max_iters = dtypes.finfo(dtype).max
    samples = lax.select(use_inversion,
                         _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_negative | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, pnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & ~invalid, pnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf,
                      samples, count.astype(dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial(``n``, ``p``) counts over ``p``'s last axis (float by default): one
    binomial per category, of the trials left, at the category's share of the probability
    left. ``shape`` defaults to ``p``'s shape."""
    key = _check_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    inexact = dtypes.canonicalize(pnp.result_type(n, p))   # promote_dtypes_inexact
    inexact = inexact if dtypes.is_inexact(inexact) else dtypes.canonicalize(float)
    n, p = _asarray(n, inexact), _asarray(p, inexact)
    shape = tuple(p.shape) if shape is None else _shape(shape)
    n = pnp.broadcast_to(n, shape[:-1])
    p = pnp.moveaxis(pnp.broadcast_to(p, shape), -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / pnp.where(remaining == 0, 1, remaining)
    keys = split(key, ratios.shape[0])

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = binomial(k, remainder, pnp.clip(ratio, 0, 1), dtype=remainder.dtype)
        return remainder - count, count
    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    out = pnp.moveaxis(counts, 0, -1)
    return out.astype(dtypes.user_dtype(float if dtype is None else dtype))


add_examples(globals(), """
poisson:
    >>> pto.random.poisson(pto.random.key(0), 3.0, (4,))
    Array([0, 0, 4, 4], dtype=int32)
binomial:
    >>> pto.random.binomial(pto.random.key(0), 10, 0.3, (4,))
    Array([2., 2., 1., 2.], dtype=float32)
multinomial:
    >>> pto.random.multinomial(pto.random.key(0), 10, pnp.array([0.2, 0.3, 0.5]))
    Array([1., 1., 8.], dtype=float32)
""")
