"""``lax.rng_bit_generator``: XLA's stateless bit generator, bit for bit as JAX on CPU.

The key is ``uint32[4]``, read as two 64-bit words ``(s0, s1)``. Both algorithms are
counter-based and written with the primitives' functions (uint32 arithmetic that wraps, a
carry for the 64-bit counter additions), so jit and vmap come for free:

- ``RNG_THREE_FRY``: Threefry-2x32 (``threefry2x32_p``, the cipher behind ``ptojax.random``)
  under the key ``s0`` of the counters ``s1 + i``; a 32-bit result takes both output words of
  a counter as two neighbours along the first even dimension (else the longest), as XLA's
  ``SplitShapeIntoHalves``; a 64-bit one joins them.
- ``RNG_PHILOX`` (and ``RNG_DEFAULT``, which is Philox on XLA's CPU backend): Philox-4x32 with
  10 rounds under the key ``s0`` of the 128-bit counters ``(s0, s1) + i``, whose four output
  words go to four consecutive elements.

The new key is ``s0`` and ``s1`` advanced by the counters used. Results narrower than 32 bits
keep the low bits of the 32-bit ones, as XLA does.

Under ``vmap`` each key gives its own bits and new key, as a loop over the keys would; JAX's
batching rule instead draws all the rows from the first key (and advances only that one).
"""
from __future__ import annotations

import enum
import math

import numpy as np

from ptojax import dtypes
from ptojax.errors import UnsupportedError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.arithmetic import add, mul, mulhi
from ptojax.ops.convert import convert_element_type
from ptojax.ops.logic import bitwise_or, bitwise_xor, lt, shift_left
from ptojax.ops.operand import as_operand
from ptojax.ops.random_bits import threefry2x32_p
from ptojax.ops.shape import reshape
from ptojax.ops.slicing import broadcasted_iota, concatenate, full, slice as slice_, slice_in_dim
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


class RandomAlgorithm(enum.IntEnum):
    """The algorithm of ``rng_bit_generator`` (JAX's ``lax.RandomAlgorithm``)."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_U32 = np.dtype(np.uint32)
_PHILOX_ROUND = (0xD2511F53, 0xCD9E8D57)   # the multipliers of Philox-4x32
_PHILOX_BUMP = (0x9E3779B9, 0xBB67AE85)    # the key increments (golden ratio, sqrt(3) - 1)
_PHILOX_ROUNDS = 10


def _u32(value):
    return full((), value, _U32)


def _add64(lo, hi, offset):
    """The 64-bit word ``(lo, hi) + offset`` (uint32 halves; ``offset`` a uint32 array or
    int), with the carry."""
    new_lo = add(lo, offset)
    return new_lo, add(hi, convert_element_type(lt(new_lo, lo), _U32))


def _word(key, i):
    return reshape(slice_in_dim(key, i, i + 1), ())


def _counters(count: int):
    return broadcasted_iota(_U32, (count,), 0)


# Threefry -----------------------------------------------------------------------------------
def _threefry_block(key, count: int):
    """The two output words of Threefry-2x32 for the counters ``s1 + i``, i < count."""
    k0, k1, lo, hi = (_word(key, i) for i in range(4))
    x_lo, x_hi = _add64(lo, hi, _counters(count))
    return threefry2x32_p.bind(k0, k1, x_lo, x_hi)


def _split_dim(shape) -> int:
    """The dimension XLA splits in halves: the first even one, else the first longest."""
    even = [i for i, d in enumerate(shape) if d % 2 == 0]
    return even[0] if even else max(range(len(shape)), key=lambda i: (shape[i], -i))


def _threefry32(key, shape):
    if not shape:
        y0, _ = _threefry_block(key, 1)
        return reshape(y0, ()), 1
    d = _split_dim(shape)
    half = (*shape[:d], -(-shape[d] // 2), 1, *shape[d + 1:])
    count = math.prod(half)
    y0, y1 = (reshape(y, half) for y in _threefry_block(key, count))
    pairs = concatenate([y0, y1], d + 1)
    whole = reshape(pairs, (*shape[:d], 2 * half[d], *shape[d + 1:]))
    if whole.shape[d] != shape[d]:
        whole = slice_(whole, (0,) * len(shape), shape)
    return whole, count


def _threefry64(key, shape):
    count = math.prod(shape)
    y0, y1 = _threefry_block(key, count)
    return reshape(_join64(y0, y1), shape), count


# Philox -------------------------------------------------------------------------------------
def _philox_blocks(key, count: int):
    """The four output words of Philox-4x32 for the 128-bit counters (s0, s1) + i."""
    k0, k1, lo, hi = (_word(key, i) for i in range(4))
    x0, x1 = _add64(lo, hi, _counters(count))
    carry = convert_element_type(lt(x1, hi), _U32)   # the low 64-bit word wrapped
    x2, x3 = _add64(k0, k1, carry)
    keys = (k0, k1)
    state = (x0, x1, x2, x3)
    for _ in range(_PHILOX_ROUNDS):
        a, b = _u32(_PHILOX_ROUND[0]), _u32(_PHILOX_ROUND[1])
        x0, x1, x2, x3 = state
        state = (bitwise_xor(bitwise_xor(mulhi(x2, b), x1), keys[0]), mul(x2, b),
                 bitwise_xor(bitwise_xor(mulhi(x0, a), x3), keys[1]), mul(x0, a))
        keys = (add(keys[0], _u32(_PHILOX_BUMP[0])), add(keys[1], _u32(_PHILOX_BUMP[1])))
    return state


def _interleave(words, count: int, size: int):
    """``words`` (each ``(count,)``) as one vector ``w0[0], w1[0], ..., w0[1], ...`` cut to
    ``size``."""
    columns = [reshape(w, (count, 1)) for w in words]
    flat = reshape(concatenate(columns, 1), (count * len(words),))
    return slice_(flat, (0,), (size,)) if count * len(words) != size else flat


def _philox32(key, shape):
    size = math.prod(shape)
    count = -(-size // 4)
    return reshape(_interleave(_philox_blocks(key, count), count, size), shape), count


def _philox64(key, shape):
    size = math.prod(shape)
    count = -(-size // 2)
    y0, y1, y2, y3 = _philox_blocks(key, count)
    return reshape(_interleave((_join64(y0, y1), _join64(y2, y3)), count, size), shape), count


def _join64(low, high):
    u64 = np.dtype(np.uint64)
    return bitwise_or(convert_element_type(low, u64),
                      shift_left(convert_element_type(high, u64), full((), 32, u64)))


_GENERATORS = {(RandomAlgorithm.RNG_THREE_FRY, 32): _threefry32,
               (RandomAlgorithm.RNG_THREE_FRY, 64): _threefry64,
               (RandomAlgorithm.RNG_PHILOX, 32): _philox32,
               (RandomAlgorithm.RNG_PHILOX, 64): _philox64}
_UNSIGNED = {np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """``(new_key, bits)``: unsigned random bits of ``shape`` and ``dtype`` from the
    ``uint32[4]`` ``key`` by XLA's ``algorithm`` (JAX's ``lax.rng_bit_generator``, the same
    bits as JAX on CPU; under vmap, one generator per key, unlike JAX's batching rule)."""
    del out_sharding   # one device
    check_arraylike("rng_bit_generator", key)
    key = as_operand("rng_bit_generator", key)
    shape = tuple(int(d) for d in shape)
    dt = dtypes.canonical_dtype(dtype)
    if dt not in _UNSIGNED:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dt}")
    if tuple(key.shape) != (4,) or np.dtype(key.dtype) != _U32:
        raise UnsupportedError(f"rng_bit_generator: the key must be uint32[4], got "
                               f"{dtypes.short_name(key.dtype)}{list(key.shape)}",
                               user_frame())
    algorithm = RandomAlgorithm(algorithm)
    if algorithm is RandomAlgorithm.RNG_DEFAULT:   # XLA's CPU default
        algorithm = RandomAlgorithm.RNG_PHILOX
    width = 64 if dt.itemsize == 8 else 32
    if math.prod(shape) == 0:
        return key, full(shape, 0, dt)
    bits, used = _GENERATORS[algorithm, width](key, shape)
    lo, hi = _add64(_word(key, 2), _word(key, 3), used)
    new_key = concatenate([slice_in_dim(key, 0, 2), reshape(lo, (1,)), reshape(hi, (1,))], 0)
    return new_key, convert_element_type(bits, dt)


_add_examples(globals(), """
RandomAlgorithm:
    >>> key = pnp.array([0, 42, 0, 0], pnp.uint32)
    >>> pto.lax.rng_bit_generator(key, (2,), algorithm=pto.lax.RandomAlgorithm.RNG_THREE_FRY)[1]
    Array([1832780943,  270669613], dtype=uint32)
rng_bit_generator:
    >>> new_key, bits = pto.lax.rng_bit_generator(pnp.array([0, 42, 0, 0], pnp.uint32), (3,))
    >>> bits
    Array([ 604202380, 3361068717,  852493487], dtype=uint32)
    >>> new_key
    Array([ 0, 42,  1,  0], dtype=uint32)
""")
