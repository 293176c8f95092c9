"""``pto.random``'s keys and basic samplers: reproducible pseudo-random numbers from explicit keys.

A key is typed (``random.key``: dtype ``key<fry>``) or raw (``random.PRNGKey``: a uint32
array of shape (2,)); ``keys.py`` makes, splits and checks both. Nothing is stateful: every sampler takes a key, and the same key gives the same numbers,
eagerly, under ``jit`` and under every transform. Use ``split``/``fold_in`` to derive new keys;
never reuse a key for two different draws.

Bits come from the counter-based Threefry-2x32 hash (``ops/random_bits.py``): element ``i``
of a draw is made from ``threefry2x32(key, (high word of i, low word of i))`` for its flat index
``i``, so every element is independent of the others and draws tile and shard like elementwise
ops. This is JAX's default scheme (``jax_threefry_partitionable=True``, the default since
JAX 0.5), and ptojax reproduces ``jax.random`` on the CPU bit for bit for ``key``, ``split``,
``fold_in``, ``bits``, ``randint``, ``permutation``, ``choice`` and ``bernoulli``, and for
``uniform`` on [0, 1) or any range whose width is a power of two. For other widths XLA fuses
``unit * width + minval`` into one rounding where ptojax rounds twice, so the last bit may
differ. ``normal``, ``truncated_normal`` and ``gumbel`` agree to a few ulps (their
``erf_inv``/``log`` are computed differently).

Default dtypes are float32/int32, as JAX without x64 (float64/int64 in x64 mode).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray as _asarray
from ptojax.eval.leaves import check_arraylike
from ptojax.errors import DtypeError, PtoError, SamplerDtypeError, ShapeError
from ptojax.ops.convert import convert_element_type as convert_exactly
from ptojax.eval.array import Array
from ptojax.random.keys import _check_key, _counters, _hash, _shape, split
from ptojax.source_info import user_frame
from ptojax.public import add_examples

_UINT = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}
_SQRT2 = math.sqrt(2.0)


# bits and uniform floats ---------------------------------------------------------------------
def bits(key, shape=(), dtype=None):
    """Uniformly random unsigned integers of ``dtype`` (uint8/16/32/64; by default uint32,
    uint64 in x64 mode)."""
    key = _check_key("bits", key)
    dtype = dtypes.default_uint() if dtype is None else dtypes.user_dtype(dtype)
    if not dtypes.is_unsigned(dtype):
        raise SamplerDtypeError(f"bits: dtype must be an unsigned integer dtype, got {dtype}",
                                user_frame())
    return _random_bits(key, dtype.itemsize * 8, _shape(shape))


def _random_bits(key, bit_width: int, shape):
    bits1, bits2 = _hash(key, _counters(shape))
    if bit_width == 64:
        high = convert_exactly(bits1, dtypes.uint64)
        low = convert_exactly(bits2, dtypes.uint64)
        return lax.bitwise_or(lax.shift_left(high, 32), low)
    return lax.convert_element_type(lax.bitwise_xor(bits1, bits2), _UINT[bit_width])


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Floats uniform in ``[minval, maxval)`` (bounds broadcast against ``shape``)."""
    key = _check_key("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    shape = _shape(shape)
    minval = _bound("uniform", minval, dtype, shape)
    maxval = _bound("uniform", maxval, dtype, shape)
    return _scale_unit(_unit_floats(key, shape, dtype), minval, maxval)


def _scale_unit(unit, minval, maxval):
    """Floats in [0, 1) mapped to ``[minval, maxval)`` as JAX does."""
    scaled = pnp.add(pnp.multiply(unit, pnp.subtract(maxval, minval)), minval)
    return pnp.maximum(minval, scaled)  # rounding must not push a value below minval


def _unit_floats(key, shape, dtype):
    """Floats in [0, 1): random mantissa bits times 2**-nmant, exact in ``dtype``."""
    info = dtypes.finfo(dtype)
    nbits, nmant = int(info.bits), int(info.nmant)
    rng_bits = nbits if nmant >= 8 else 8
    mantissa = lax.shift_right_logical(_random_bits(key, rng_bits, shape), rng_bits - nmant)
    return lax.mul(lax.convert_element_type(mantissa, dtype), 2.0 ** -nmant)


def _float_dtype(name, dtype, complex_ok=False):
    """``dtype`` (the default float when None) checked to be floating-point (or complex,
    ``complex_ok``)."""
    dtype = dtypes.user_dtype(float if dtype is None else dtype)
    if not (dtypes.is_float(dtype) or complex_ok and dtypes.is_complex(dtype)):
        kind = "a floating-point or complex" if complex_ok else "a floating-point"
        raise SamplerDtypeError(f"{name}: dtype must be {kind} dtype, got {dtype}",
                                user_frame())
    return dtype


def _bound(name, value, dtype, shape):
    """A distribution parameter as a ``dtype`` array that broadcasts to ``shape``."""
    value = _asarray(value, dtype)
    _check_broadcasts(name, value.shape, shape)
    return value


def _check_broadcasts(name, value_shape, shape):
    try:
        ok = np.broadcast_shapes(tuple(value_shape), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"{name}: a parameter of shape {tuple(value_shape)} does not "
                         f"broadcast to the requested shape {shape}", user_frame())


# continuous distributions --------------------------------------------------------------------
def normal(key, shape=(), dtype=None):
    """Standard normal samples: ``sqrt(2) * erf_inv(u)`` for ``u`` uniform in (-1, 1). A
    complex dtype gives ``(re + i im) / sqrt(2)`` with ``re``, ``im`` standard normal draws
    of its real dtype from the two halves of ``split(key)`` (JAX's formula: unit variance)."""
    key = _check_key("normal", key)
    dtype, shape = _float_dtype("normal", dtype, complex_ok=True), _shape(shape)
    if dtypes.is_complex(dtype):
        real_dtype = dtypes.real_dtype(dtype)
        re, im = (_normal_of_unit(_unit_floats(k, shape, real_dtype)) for k in _split2(key))
        return lax.div(lax.complex(re, im), _asarray(_SQRT2, dtype))
    return _normal_of_unit(_unit_floats(key, shape, dtype))


def _normal_of_unit(unit):
    """Normal samples from floats in [0, 1): mapped to (-1, 1), then ``sqrt(2) erf_inv``."""
    dtype = unit.dtype
    above_minus_one = _asarray(-(1.0 - 2.0 ** -(int(dtypes.finfo(dtype).nmant) + 1)), dtype)
    u = _scale_unit(unit, above_minus_one, _asarray(1.0, dtype))
    return lax.mul(lax.erf_inv(u), _SQRT2)


def _shape_or_broadcast(shape, *params) -> tuple:
    """``shape`` checked, or by default the broadcast shape of the distribution's parameters."""
    if shape is None:
        shape = np.broadcast_shapes(*(tuple(p.shape) for p in params))
    return _shape(shape)


def truncated_normal(key, lower, upper, shape=None, dtype=None):
    """Standard normal samples conditioned on ``lower < x < upper`` (inverse-CDF method).

    ``shape`` defaults to the broadcast shape of ``lower`` and ``upper``."""
    key = _check_key("truncated_normal", key)
    dtype = _float_dtype("truncated_normal", dtype)
    lower, upper = _asarray(lower, dtype), _asarray(upper, dtype)
    shape = _shape_or_broadcast(shape, lower, upper)
    cdf_lower = lax.erf(pnp.divide(lower, _SQRT2))
    cdf_upper = lax.erf(pnp.divide(upper, _SQRT2))
    u = uniform(key, shape, dtype, cdf_lower, cdf_upper)
    out = lax.mul(lax.erf_inv(u), _SQRT2)
    # rounding may land on a bound; keep samples strictly inside (lower, upper)
    inside_lower = pnp.nextafter(lax.stop_gradient(lower), np.inf)
    inside_upper = pnp.nextafter(lax.stop_gradient(upper), -np.inf)
    return pnp.clip(out, inside_lower, inside_upper)


def gumbel(key, shape=(), dtype=None):
    """Standard Gumbel samples: ``-log(-log(u))`` for ``u`` uniform in [tiny, 1)."""
    key = _check_key("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    u = uniform(key, shape, dtype, float(dtypes.finfo(dtype).tiny), 1.0)
    return pnp.negative(pnp.log(pnp.negative(pnp.log(u))))


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Samples of N(``mean``, ``cov``): ``mean + A z`` with ``A A^T = cov`` from ``method``
    (``"cholesky"``, ``"eigh"`` or ``"svd"``). The result has shape
    ``shape + mean.shape[-1:]``; ``shape`` defaults to the broadcast batch shape of
    ``mean.shape[:-1]`` and ``cov.shape[:-2]``."""
    key = _check_key("multivariate_normal", key)
    if method not in ("cholesky", "eigh", "svd"):
        raise PtoError(f"multivariate_normal: method must be 'cholesky', 'eigh' or 'svd', got "
                       f"{method!r}", user_frame())
    check_arraylike("multivariate_normal", mean, cov)
    if dtype is None:
        dtype = pnp.result_type(mean, cov)   # as JAX: the operands' dtype, floats only
        dtype = dtype if dtypes.is_float(dtype) else dtypes.default_float()
    dtype = _float_dtype("multivariate_normal", dtype)
    mean, cov = _asarray(mean, dtype), _asarray(cov, dtype)
    if mean.ndim < 1 or cov.ndim < 2 or cov.shape[-2:] != (mean.shape[-1],) * 2:
        raise ShapeError(f"multivariate_normal: mean must have shape (..., n) and cov "
                         f"(..., n, n), got {mean.aval} and {cov.aval}", user_frame())
    batch = np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    shape = batch if shape is None else _shape(shape)
    _check_broadcasts("multivariate_normal", batch, shape)
    factor = _covariance_factor(cov, method)
    z = normal(key, (*shape, mean.shape[-1]), dtype)
    return pnp.add(mean, pnp.einsum("...ij,...j->...i", factor, z))


def _covariance_factor(cov, method):
    if method == "cholesky":
        return pnp.linalg.cholesky(cov)
    if method == "eigh":
        w, v = pnp.linalg.eigh(cov)
        return pnp.multiply(v, pnp.expand_dims(pnp.sqrt(w), -2))
    u, s, _ = pnp.linalg.svd(cov)
    return pnp.multiply(u, pnp.expand_dims(pnp.sqrt(s), -2))


# discrete distributions ----------------------------------------------------------------------
def bernoulli(key, p=0.5, shape=None):
    """Booleans that are True with probability ``p`` (a float, or floats broadcasting to
    ``shape``; ``shape`` defaults to ``p``'s shape)."""
    key = _check_key("bernoulli", key)
    p = _asarray(p)
    if not dtypes.is_float(p.dtype):
        raise DtypeError(f"bernoulli: p must be floating-point, got {p.aval}", user_frame())
    shape = tuple(p.shape) if shape is None else _shape(shape)
    _check_broadcasts("bernoulli", p.shape, shape)
    return pnp.less(uniform(key, shape, p.dtype), p)


def categorical(key, logits, axis=-1, shape=None):
    """Category indices drawn with probabilities ``softmax(logits)`` along ``axis``
    (Gumbel-max). ``shape`` defaults to ``logits``' shape without ``axis``; a longer
    ``shape`` draws several samples per batch entry."""
    key = _check_key("categorical", key)
    logits = _asarray(logits)
    axis = operator.index(axis)
    if not -logits.ndim <= axis < logits.ndim:
        raise ShapeError(f"categorical: axis {axis} is out of range for logits of shape "
                         f"{tuple(logits.shape)}", user_frame())
    axis %= logits.ndim
    batch = tuple(d for i, d in enumerate(logits.shape) if i != axis)
    shape = batch if shape is None else _shape(shape)
    _check_broadcasts("categorical", batch, shape)
    prefix = len(shape) - len(batch)
    noise_shape = list(shape[prefix:])
    noise_shape.insert(axis, logits.shape[axis])
    noise = gumbel(key, (*shape[:prefix], *noise_shape), logits.dtype)
    scores = pnp.add(noise, lax.expand_dims(logits, tuple(range(prefix))))
    return pnp.argmax(scores, axis=prefix + axis)


def randint(key, shape, minval, maxval, dtype=None):
    """Integers uniform in ``[minval, maxval)`` (bounds broadcast against ``shape``; a
    ``maxval`` beyond the dtype's range includes its maximum). Values come from twice the
    dtype's bits reduced modulo the span, so the bias for spans that are not powers of two
    is negligible."""
    key = _check_key("randint", key)
    dtype = dtypes.user_dtype(int if dtype is None else dtype)
    if not dtypes.is_integer(dtype):
        raise DtypeError(f"randint: dtype must be an integer dtype, got {dtype}", user_frame())
    shape = _shape(shape)
    info = np.iinfo(dtype)
    if info.bits >= 32:
        return _randint(key, shape, minval, maxval, dtype)
    # narrow dtypes sample at 32 bits, so the modulo bias stays negligible
    minval = pnp.clip(_int_bound(minval).astype(dtypes.int32), int(info.min), int(info.max))
    maxval = pnp.clip(_int_bound(maxval).astype(dtypes.int32), int(info.min),
                      int(info.max) + 1)
    return _randint(key, shape, minval, maxval, dtypes.int32).astype(dtype)


def _randint(key, shape, minval, maxval, dtype):
    minval, maxval = _int_bound(minval), _int_bound(maxval)
    _check_broadcasts("randint", minval.shape, shape)
    _check_broadcasts("randint", maxval.shape, shape)
    nbits = np.iinfo(dtype).bits
    top = _saturate(Array(np.asarray(np.iinfo(dtype).max, dtype)), maxval.dtype)
    maxval_beyond_dtype = pnp.greater(maxval, top)
    minval, maxval = _saturate(minval, dtype), _saturate(maxval, dtype)

    unsigned = _UINT[nbits]
    span = lax.convert_element_type(pnp.subtract(maxval, minval), unsigned)
    span = pnp.where(pnp.less_equal(maxval, minval), 1, span)  # empty range: return minval
    # a maxval beyond the dtype includes the dtype's maximum: one more value (a span of
    # 2**nbits wraps to 0, and remainders by 0 leave the bits as they are)
    span = pnp.where(pnp.logical_and(maxval_beyond_dtype, pnp.greater(maxval, minval)),
                     pnp.add(span, 1), span)

    # (high * 2**nbits + low) mod span, without overflow
    high_key, low_key = _split2(key)
    high = _random_bits(high_key, nbits, shape)
    low = _random_bits(low_key, nbits, shape)
    multiplier = _mod(Array(np.asarray(2 ** (nbits // 2), unsigned)), span)
    multiplier = _mod(pnp.multiply(multiplier, multiplier), span)
    offset = _mod(pnp.add(pnp.multiply(_mod(high, span), multiplier), _mod(low, span)), span)
    return pnp.add(minval, lax.convert_element_type(offset, dtype))


def _int_bound(value):
    value = _asarray(value)
    return value if dtypes.is_integer(value.dtype) else value.astype(dtypes.int32)


def _saturate(x, dtype):
    """Integer ``x`` converted to integer ``dtype``, clipped to its range instead of wrapping."""
    src, dst = np.iinfo(x.dtype), np.iinfo(dtype)
    lo, hi = max(int(src.min), int(dst.min)), min(int(src.max), int(dst.max))
    return pnp.clip(x, Array(np.asarray(lo, x.dtype)), Array(np.asarray(hi, x.dtype))) \
        .astype(dtype)


def _mod(x, span):
    """``x mod span`` for unsigned integers, with ``x mod 0 = x``."""
    zero = pnp.equal(span, 0)
    return pnp.where(zero, x, pnp.fmod(x, pnp.where(zero, 1, span)))


def _split2(key):
    keys = split(key)
    return lax.index_in_dim(keys, 0, keepdims=False), lax.index_in_dim(keys, 1, keepdims=False)


# permutations and choice ---------------------------------------------------------------------
def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``range(x)`` (an int ``x``) or of ``x`` along ``axis``;
    ``independent=True`` shuffles every slice along ``axis`` separately."""
    key = _check_key("permutation", key)
    if pnp.ndim(x) == 0:
        return _shuffle(key, pnp.arange(operator.index(x)), 0)
    x = _asarray(x)
    axis = operator.index(axis) % x.ndim
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    order = _shuffle(key, pnp.arange(x.shape[axis]), 0)
    return pnp.take(x, order, axis)


def _shuffle(key, x, axis):
    """Sort by fresh random 32-bit keys, enough rounds that ties are improbable."""
    rounds = math.ceil(3 * math.log(max(1, x.size)) / math.log(2 ** 32 - 1))
    for _ in range(rounds):
        key, subkey = _split2(key)
        sort_keys = _random_bits(subkey, 32, tuple(x.shape))
        _, x = lax.sort((sort_keys, x), dimension=axis, num_keys=1)
    return x


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """Samples of ``range(a)`` (an int ``a``) or of ``a``'s entries along ``axis``, with or
    without replacement, uniformly or with probabilities ``p``."""
    key = _check_key("choice", key)
    shape = _shape(shape)
    arr = _asarray(a)
    n = operator.index(a) if arr.ndim == 0 else arr.shape[operator.index(axis) % arr.ndim]
    draws = math.prod(shape)
    if draws and n <= 0:
        raise ShapeError("choice: cannot draw from an empty population", user_frame())
    if not replace and draws > n:
        raise ShapeError(f"choice: cannot take {draws} samples from a population of {n} "
                         f"without replacement", user_frame())
    if p is None:
        index = _uniform_choice(key, n, shape, replace)
    else:
        index = _weighted_choice(key, n, shape, replace, p)
    return index if arr.ndim == 0 else pnp.take(arr, index, axis)


def _uniform_choice(key, n, shape, replace):
    if replace:
        return randint(key, shape, 0, n)
    return lax.reshape(permutation(key, n)[:math.prod(shape)], shape)


def _weighted_choice(key, n, shape, replace, p):
    p = _asarray(p)
    p = p if dtypes.is_float(p.dtype) else p.astype(dtypes.float32)
    if tuple(p.shape) != (n,):
        raise ShapeError(f"choice: p must have shape ({n},) to match the population, got "
                         f"{tuple(p.shape)}", user_frame())
    if replace:  # inverse CDF: the first index whose cumulative weight exceeds r
        cdf = pnp.cumsum(p)
        r = pnp.multiply(cdf[-1], pnp.subtract(1, uniform(key, shape, cdf.dtype)))
        below = pnp.less(cdf, pnp.expand_dims(r, -1))
        return pnp.sum(below, axis=-1, dtype=dtypes.default_int())
    # Gumbel top-k: the k largest of log(p) + Gumbel noise are a sample without replacement
    scores = pnp.add(gumbel(key, (n,), p.dtype), pnp.log(p))
    top = pnp.argsort(scores, descending=True)[:math.prod(shape)]
    return lax.reshape(top, shape)


add_examples(globals(), """
bernoulli:
    >>> pto.random.bernoulli(pto.random.key(0), 0.5, (4,))
    Array([False, False,  True,  True], dtype=bool)
bits:
    >>> pto.random.bits(pto.random.key(0), (2,))
    Array([4070199207, 4202968722], dtype=uint32)
categorical:
    >>> pto.random.categorical(pto.random.key(0), pnp.log(pnp.array([0.1, 0.2, 0.7])), shape=(5,))
    Array([1, 2, 2, 1, 2], dtype=int32)
choice:
    >>> pto.random.choice(pto.random.key(0), 5, (3,), replace=False)
    Array([0, 1, 4], dtype=int32)
multivariate_normal:
    >>> pto.random.multivariate_normal(pto.random.key(0), pnp.zeros(2), pnp.eye(2), (2,))
    Array([[ 1.622642  ,  2.0252647 ],
           [-0.43359435, -0.07861736]], dtype=float32)
gumbel:
    >>> pto.random.gumbel(pto.random.key(0), (3,))
    Array([ 2.9233725 ,  3.8326178 , -0.09689324], dtype=float32)
normal:
    >>> pto.random.normal(pto.random.key(0), (3,))
    Array([ 1.622642  ,  2.0252647 , -0.43359435], dtype=float32)
permutation:
    >>> pto.random.permutation(pto.random.key(0), 5)
    Array([0, 1, 4, 3, 2], dtype=int32)
randint:
    >>> pto.random.randint(pto.random.key(0), (4,), 0, 10)
    Array([9, 0, 2, 3], dtype=int32)
truncated_normal:
    >>> pto.random.truncated_normal(pto.random.key(0), -1.0, 1.0, (3,))
    Array([ 0.8618594 ,  0.9412884 , -0.29104838], dtype=float32)
uniform:
    >>> pto.random.uniform(pto.random.key(0), (3,))
    Array([0.947667  , 0.9785799 , 0.33229148], dtype=float32)
""")
