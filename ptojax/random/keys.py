"""``pto.random``'s keys: making, splitting and folding keys, typed and raw, as ``jax.random``.

Two kinds of key, as in JAX:
- a **typed key** (``random.key``): a ``PRNGKeyArray`` of dtype ``key<fry>`` and shape ``()``
  (``split`` gives shape ``(n,)``), whose data are the key's uint32 words
  (``eval/key_array.py``); arithmetic on it is a TypeError;
- a **raw key** (``random.PRNGKey``, the legacy layout): a uint32 array of shape ``(2,)``.

Every sampler accepts either; ``split`` and ``fold_in`` return keys of the kind they were
given. ``key_data``/``wrap_key_data`` convert between the two. The words of a seed are
``[high 32 bits, low 32 bits]``; new keys come from the Threefry-2x32 hash of 64-bit counters
(``ops/random_bits.py``), bit for bit as JAX on the CPU.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray as _asarray
from ptojax.errors import DtypeError, IntegerOverflowError, PtoError, ShapeError, located
from ptojax.eval.array import Array
from ptojax.eval.key_array import KEY_WORDS, THREEFRY_KEY, PRNGKeyArray
from ptojax.ops.random_bits import threefry2x32_p
from ptojax.ir.symbolic import is_index_scalar
from ptojax.public import add_examples
from ptojax.source_info import user_frame

IMPLS = ("threefry2x32",)   # the generators ptojax has (JAX also has rbg, philox, ...)


# making keys ---------------------------------------------------------------------------------
def key(seed, *, impl=None):
    """A typed key (dtype ``key<fry>``, shape ``()``) from an integer seed; the seed may be
    traced. ``impl`` must be None or ``"threefry2x32"`` (the one generator ptojax has)."""
    _check_impl("key", impl)
    if isinstance(seed, PRNGKeyArray):
        raise DtypeError("key accepts a scalar seed, but was given a PRNG key", user_frame())
    return PRNGKeyArray(_seed_words("key", seed))


def PRNGKey(seed, *, impl=None):
    """A raw key from an integer seed: the uint32 array ``[high 32 bits, low 32 bits]`` of the
    seed (JAX's legacy layout). A 32-bit (or narrower) seed has high word 0 and its
    two's-complement low word; a 64-bit seed contributes both words. A Python int is int32
    when it fits (int64 in x64 mode), else int64 (beyond int64: an OverflowError, as JAX)."""
    _check_impl("PRNGKey", impl)
    if isinstance(seed, PRNGKeyArray):
        raise DtypeError("PRNGKey accepts a scalar seed, but was given a PRNG key",
                         user_frame())
    return _seed_words("PRNGKey", seed)


def _seed_words(name, seed):
    seed = _integer_scalar(name, seed, "the seed")
    low = lax.convert_element_type(seed, dtypes.uint32)
    if seed.dtype.itemsize == 8:
        high = lax.convert_element_type(lax.shift_right_logical(seed, 32), dtypes.uint32)
    else:
        high = _zero_word()
    return pnp.stack([high, low])


def _integer_scalar(name, value, what):
    """``value`` as an integer scalar array; a Python int is int32 when it fits (int64 in x64
    mode), else 64-bit (True and False are 1 and 0)."""
    if type(value) in (int, bool):   # a Python bool is an int, as JAX takes it
        value = np.asarray(int(value), _python_int_dtype(name, int(value)))
    value = _asarray(value)
    if not dtypes.is_integer(value.dtype):
        raise DtypeError(f"{name}: {what} must be an integer, got {value.aval}", user_frame())
    if value.ndim:
        raise ShapeError(f"{name}: {what} must be a scalar, got {value.aval}; use pto.vmap "
                         f"for a batch", user_frame())
    return value


def _python_int_dtype(name, value: int):
    """int32 (int64 in x64 mode) if ``value`` fits, else int64; a Python int beyond int64 is
    an OverflowError, as JAX (it converts the seed to a C long). A numpy uint64 seed is
    accepted."""
    for dtype in (dtypes.default_int(), dtypes.int64):
        info = np.iinfo(dtype)
        if info.min <= value <= info.max:
            return dtype
    raise IntegerOverflowError(f"{name}: the Python int {value} does not fit int64 (a seed "
                               f"must); pass a seed in [2**63, 2**64) as np.uint64(seed)",
                               user_frame())


# deriving keys -------------------------------------------------------------------------------
def split(key, num=2):
    """``num`` new keys (an int or a shape): typed keys of shape ``num`` from a typed key, a
    uint32 array of shape ``(*num, 2)`` from a raw key."""
    words = _check_key("split", key)
    bits1, bits2 = _hash(words, _counters(_shape(num)))
    return _like(key, pnp.stack([bits1, bits2], axis=-1))


def fold_in(key, data):
    """A new key (of ``key``'s kind) that depends on ``key`` and the integer ``data`` (e.g. a
    step number; of an integer array its low 32 bits count; a Python int must fit uint32, as
    in JAX)."""
    words = _check_key("fold_in", key)
    if type(data) is int and not 0 <= data < 2**32:
        raise IntegerOverflowError(f"fold_in: the Python int {data} does not fit uint32 (the "
                                   f"data word); pass it as an integer array to fold in its "
                                   f"low 32 bits", user_frame())
    data = _integer_scalar("fold_in", data, "data")
    word = lax.convert_element_type(data, dtypes.uint32)
    return _like(key, pnp.stack(_hash(words, (_zero_word(), word))))


def clone(key):
    """A copy of ``key`` (JAX needs it to reuse a key under its key-reuse checker; ptojax has
    none, so this returns the keys)."""
    if not isinstance(key, PRNGKeyArray):
        _check_words("clone", key)
    return key


def _like(key, words):
    """``words`` as a key of ``key``'s kind (typed or raw)."""
    return PRNGKeyArray(words) if isinstance(key, PRNGKeyArray) else words


# typed <-> raw -------------------------------------------------------------------------------
def key_data(keys):
    """The uint32 words of ``keys``, shape ``(*keys.shape, 2)``; a raw key (array) is checked
    and returned."""
    if isinstance(keys, PRNGKeyArray):
        return keys.data
    return _check_words("key_data", keys)


def wrap_key_data(key_bits_array, *, impl=None):
    """Typed keys of shape ``key_bits_array.shape[:-1]`` from their uint32 words.
    ``impl`` must be None or ``"threefry2x32"``, the one generator ptojax has."""
    _check_impl("wrap_key_data", impl)
    if isinstance(key_bits_array, PRNGKeyArray):
        raise DtypeError("wrap_key_data: expected uint32 key data, got a typed key array; "
                         "it is already wrapped", user_frame())
    return PRNGKeyArray(_check_words("wrap_key_data", key_bits_array))


def key_impl(keys):
    """The generator of ``keys`` (typed or raw): ``'threefry2x32'``, the one ptojax has."""
    if not isinstance(keys, PRNGKeyArray):
        _check_words("key_impl", keys)
    return IMPLS[0]


def key_dtype(impl_spec=None):
    """The dtype of typed keys of the generator ``impl_spec`` (None or ``"threefry2x32"``,
    the one ptojax has): ``key<fry>``, as ``pto.random.key(0).dtype``.

    Example:
        >>> pto.random.key_dtype(), pto.random.key_dtype() == pto.random.key(0).dtype
        (key<fry>, True)
    """
    _check_impl("key_dtype", impl_spec)
    return THREEFRY_KEY


# checks --------------------------------------------------------------------------------------
def _check_impl(name, impl):
    if impl is None or impl in IMPLS:
        return
    known = {"philox2x32", "philox4x32", "rbg", "unsafe_rbg", "threefry4x32"}
    if impl in known:
        raise PtoError(f"{name}: impl={impl!r} is not available; ptojax keys are "
                       f"threefry2x32 (pass impl=None)", user_frame())
    raise located(ValueError(f"{name}: unrecognized PRNG implementation {impl!r}; ptojax has "
                             f"'threefry2x32' (pass impl=None)"), user_frame())


def _check_words(name, keys):
    """``keys`` as raw key data: a uint32 array of shape ``(..., 2)`` (a TypeError else)."""
    keys = _asarray(keys)
    if keys.dtype != dtypes.uint32:
        raise DtypeError(f"{name}: invalid PRNG key data: expected dtype uint32, got "
                         f"{keys.aval}; make keys with pto.random.key or PRNGKey",
                         user_frame())
    if keys.ndim < 1 or keys.shape[-1] != KEY_WORDS:
        raise DtypeError(f"{name}: invalid PRNG key data: expected a shape ending with (2,), "
                         f"got {keys.aval}", user_frame())
    return keys


def _check_key(name, key):
    """The uint32 words (shape (2,)) of one key, typed or raw: a TypeError for data that is
    no key, a ValueError for a batch of keys (as JAX)."""
    words = key.data if isinstance(key, PRNGKeyArray) else _check_words(name, key)
    if tuple(words.shape) != (KEY_WORDS,):
        shape = tuple(key.shape)
        raise ShapeError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{shape} != (); map over a batch of keys with pto.vmap",
                         user_frame())
    return words


# the hash ------------------------------------------------------------------------------------
def _hash(key, counters):
    """Threefry-2x32 of the 64-bit counters ``(high, low)`` under ``key`` (uint32 words of
    shape (2,); or a batch of keys, shape (n, 2), with rank-0 counters: one block per key):
    two uint32 arrays."""
    k1 = lax.index_in_dim(key, 0, axis=-1, keepdims=False)
    k2 = lax.index_in_dim(key, 1, axis=-1, keepdims=False)
    return threefry2x32_p.bind(k1, k2, *counters)


def _zero_word():
    return Array(np.zeros((), dtypes.uint32))


def _counters(shape):
    """The flat index of every element of ``shape`` as 64-bit counters ``(high, low)``."""
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise ShapeError(f"random draws of {size} elements (2**32 or more) are not supported",
                         user_frame())
    return _zero_word(), lax.reshape(lax.iota(dtypes.uint32, size), shape)


def _shape(shape) -> tuple:
    if is_index_scalar(shape):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise ShapeError(f"a shape must be an int or a tuple of ints, got {shape!r}",
                         user_frame()) from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"negative dimensions are not allowed: {shape}", user_frame())
    return shape


add_examples(globals(), """
PRNGKey:
    >>> pto.random.PRNGKey(42)
    Array([ 0, 42], dtype=uint32)
key:
    >>> pto.random.key(42)
    Array((), dtype=key<fry>) overlaying:
    [ 0 42]
split:
    >>> pto.random.split(pto.random.key(0), 3).shape
    (3,)
    >>> pto.random.split(pto.random.PRNGKey(0))
    Array([[1797259609, 2579123966],
           [ 928981903, 3453687069]], dtype=uint32)
clone:
    >>> pto.random.clone(pto.random.key(7))
    Array((), dtype=key<fry>) overlaying:
    [0 7]
key_impl:
    >>> pto.random.key_impl(pto.random.key(0))
    'threefry2x32'
fold_in:
    >>> pto.random.key_data(pto.random.fold_in(pto.random.key(0), 7))
    Array([2716826189,  292468403], dtype=uint32)
key_data:
    >>> pto.random.key_data(pto.random.key(42))
    Array([ 0, 42], dtype=uint32)
wrap_key_data:
    >>> pto.random.wrap_key_data(pto.random.PRNGKey(1)).dtype
    key<fry>
""")
