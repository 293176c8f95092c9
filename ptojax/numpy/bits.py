"""Bits and integers: ``bitwise_count``, ``gcd``, ``lcm``, ``packbits``, ``unpackbits``."""
from __future__ import annotations

from ptojax import dtypes, lax
from ptojax.control_flow import while_loop
from ptojax.errors import DtypeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, check_dtype_kind, promote_args
from ptojax.numpy.math import absolute, floor_divide, multiply, where
from ptojax.numpy.manipulation import moveaxis, ravel, reshape
from ptojax.numpy.reductions import sum as _sum
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def _integer_args(name, *xs):
    xs = promote_args(name, *xs)
    if not dtypes.is_integer(xs[0].dtype):
        raise DtypeError(f"{name} requires integer operands, got "
                         f"{', '.join(str(x.aval) for x in xs)}", user_frame())
    return xs


_SWAR = ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F))


_UNSIGNED = {1: dtypes.uint8, 2: dtypes.uint16, 4: dtypes.uint32, 8: dtypes.uint64}


def bitwise_count(x, /):
    """The number of 1 bits in ``|x|``, as uint8 (NumPy's definition)."""
    (x,) = promote_args("bitwise_count", x)
    check_dtype_kind("bitwise_count", x, "int_or_bool")
    if dtypes.is_bool(x.dtype):
        return lax.convert_element_type(x, dtypes.uint8)
    wide = dtypes.uint64 if x.dtype.itemsize == 8 else dtypes.uint32
    v = lax.convert_element_type(_unsigned_magnitude(x), wide)
    bits = wide.itemsize * 8
    for shift, mask in _SWAR:  # pairs, nibbles, bytes: each field counts its own bits
        mask = mask | (mask << 32) if bits == 64 else mask
        v = lax.add(lax.bitwise_and(v, mask), lax.bitwise_and(lax.shift_right_logical(
            v, shift), mask))
    total = v
    for shift in (8, 16, 32)[:bits.bit_length() - 4]:  # sum the bytes
        total = lax.add(total, lax.shift_right_logical(total, shift))
    return lax.convert_element_type(lax.bitwise_and(total, 0xFF), dtypes.uint8)


def gcd(x1, x2, /):
    """Greatest common divisor of ``|x1|`` and ``|x2|`` (Euclid's algorithm in a while loop,
    run until every element is done, as JAX). It runs on the unsigned magnitudes, so the
    most negative integer (whose absolute value wraps) still terminates."""
    x1, x2 = _integer_args("gcd", x1, x2)
    dtype = x1.dtype
    a, b = (_unsigned_magnitude(x) for x in (x1, x2))

    def step(carry):
        a, b = carry
        nonzero = lax.ne(b, 0)
        a, b = lax.select(nonzero, b, a), lax.select(nonzero, lax.rem(a, lax.max(b, 1)), b)
        return lax.max(a, b), lax.min(a, b)

    a, b = lax.max(a, b), lax.min(a, b)
    out, _ = while_loop(lambda c: lax.reduce_or(lax.ne(c[1], 0), tuple(range(c[1].ndim))),
                        step, (a, b))
    return lax.convert_element_type(out, dtype, weak_type=_weak_scalars(x1, x2))


def _weak_scalars(*xs) -> bool:
    """Whether ``xs`` are all weak 0-d arrays: JAX's gcd is weak only then (its constants are
    weak only beside weak 0-d operands)."""
    return all(x.ndim == 0 and x.weak_type for x in xs)


def _unsigned_magnitude(x):
    """``|x|`` in the unsigned integer of the same width (exact for every value)."""
    unsigned = _UNSIGNED[x.dtype.itemsize]
    return lax.convert_element_type(absolute(x), unsigned)


def lcm(x1, x2, /):
    """Least common multiple of ``|x1|`` and ``|x2|`` (0 when either is 0)."""
    x1, x2 = _integer_args("lcm", x1, x2)
    x1, x2 = absolute(x1), absolute(x2)
    d = gcd(x1, x2)
    safe = where(lax.eq(d, 0), 1, d)
    return where(lax.eq(d, 0), 0, multiply(x1, floor_divide(x2, safe)))


def _bitorder(name, bitorder):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{name}: bitorder must be 'big' or 'little', got {bitorder!r}")
    return bitorder


def _bit_weights(bitorder, dtype):
    """1 << k for the 8 bit positions of a byte, in ``bitorder``."""
    shifts = lax.iota(dtype, 8)
    return lax.sub(7, shifts) if bitorder == "big" else shifts


def packbits(a, axis=None, bitorder="big"):
    """Nonzero elements as 1 bits, eight to a uint8 along ``axis`` (the last byte padded
    with zeros); ``axis=None`` packs the flattened array."""
    a = asarray(a, op="packbits")
    check_dtype_kind("packbits", a, "int_or_bool")
    _bitorder("packbits", bitorder)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis("packbits", axis, a.ndim)
    bits = moveaxis(lax.convert_element_type(lax.ne(a, 0) if a.dtype != dtypes.bool_ else a,
                                             dtypes.uint8), axis, -1)
    n = bits.shape[-1]
    padding = -n % 8
    if padding:
        bits = lax.pad(bits, lax.convert_element_type(0, dtypes.uint8),
                       [(0, 0, 0)] * (bits.ndim - 1) + [(0, padding, 0)])
    bits = reshape(bits, tuple(bits.shape[:-1]) + ((n + padding) // 8, 8))
    weights = lax.broadcast_in_dim(_bit_weights(bitorder, dtypes.uint8), bits.shape,
                                   (bits.ndim - 1,))
    packed = _sum(lax.shift_left(bits, weights), -1, dtype=dtypes.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array as 0/1 uint8 values, eight per element along ``axis``;
    ``count`` keeps that many (negative: drops that many from the end; beyond the data:
    zero-padded)."""
    a = asarray(a, op="unpackbits")
    if a.dtype != dtypes.uint8:
        raise DtypeError(f"unpackbits requires a uint8 array, got {a.aval}", user_frame())
    _bitorder("unpackbits", bitorder)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis("unpackbits", axis, a.ndim)
    x = moveaxis(a, axis, -1)
    expanded = lax.broadcast_in_dim(x, tuple(x.shape) + (8,), tuple(range(x.ndim)))
    shifts = lax.broadcast_in_dim(_bit_weights(bitorder, dtypes.uint8), expanded.shape,
                                  (expanded.ndim - 1,))
    bits = lax.bitwise_and(lax.shift_right_logical(expanded, shifts), 1)
    n = x.shape[-1] * 8
    bits = reshape(bits, tuple(x.shape[:-1]) + (n,))
    if count is not None:
        keep = count if count >= 0 else max(n + count, 0)
        if keep <= n:
            bits = lax.slice_in_dim(bits, 0, keep, 1, bits.ndim - 1)
        else:
            bits = lax.pad(bits, lax.convert_element_type(0, dtypes.uint8),
                           [(0, 0, 0)] * (bits.ndim - 1) + [(0, keep - n, 0)])
    return moveaxis(bits, -1, axis)


__all__ = ["bitwise_count", "gcd", "lcm", "packbits", "unpackbits"]


_add_examples(globals(), """
bitwise_count:
    >>> pnp.bitwise_count(pnp.array([0, 7, 255]))
    Array([0, 3, 8], dtype=uint8)
gcd:
    >>> pnp.gcd(pnp.array([12, 18]), 8)
    Array([4, 2], dtype=int32)
lcm:
    >>> pnp.lcm(pnp.array([4, 6]), 10)
    Array([20, 30], dtype=int32)
packbits:
    >>> pnp.packbits(pnp.array([1, 0, 1, 1, 0, 0, 0, 1], dtype=pnp.uint8))
    Array([177], dtype=uint8)
unpackbits:
    >>> pnp.unpackbits(pnp.array([177], dtype=pnp.uint8))
    Array([1, 0, 1, 1, 0, 0, 0, 1], dtype=uint8)
""")
