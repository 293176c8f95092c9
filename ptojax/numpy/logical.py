"""Logical and bitwise functions of ``ptojax.numpy``: logical_and/or/xor/not (nonzero is true),
bitwise and/or/xor/not on integers and bools, and the shifts."""
from __future__ import annotations

from ptojax import dtypes, lax
from ptojax.numpy._constants import lax_like
from ptojax.numpy._promote import check_dtype_kind, numeric_args, promote_args
from ptojax.ops import logic as lg
from ptojax.public import add_examples as _add_examples


def _logical(prim, name):
    def fn(*xs):   # as JAX's: promoted first, then each made a bool (x != 0)
        xs = promote_args(name, *xs)
        return prim.bind(*[x if x.dtype == dtypes.bool_ else lax.ne(x, lax_like(x, 0))
                           for x in xs])
    fn.__name__ = name
    return fn


logical_and = _logical(lg.and_p, "logical_and")
logical_or = _logical(lg.or_p, "logical_or")
logical_xor = _logical(lg.xor_p, "logical_xor")
logical_not = _logical(lg.not_p, "logical_not")


def _bitwise(prim, name):
    def fn(*xs):
        xs = promote_args(name, *xs)
        check_dtype_kind(name, xs[0], "int_or_bool")
        return prim.bind(*xs)
    fn.__name__ = name
    return fn


bitwise_and = _bitwise(lg.and_p, "bitwise_and")
bitwise_or = _bitwise(lg.or_p, "bitwise_or")
bitwise_xor = _bitwise(lg.xor_p, "bitwise_xor")
bitwise_not = invert = bitwise_invert = _bitwise(lg.not_p, "bitwise_not")


def _shift_args(name, x1, x2):
    x1, x2 = promote_args(name, x1, x2)
    check_dtype_kind(name, x1, "int_or_bool")
    return numeric_args(name, x1, x2)


def left_shift(x1, x2, /):
    return lax.shift_left(*_shift_args("left_shift", x1, x2))


def right_shift(x1, x2, /):
    x1, x2 = _shift_args("right_shift", x1, x2)
    if dtypes.is_unsigned(x1.dtype):
        return lax.shift_right_logical(x1, x2)
    # arithmetic shift: a negative value is the complement of a non-negative one, which a
    # logical shift handles
    flipped = lax.select(lax.lt(x1, 0), lax.bitwise_not(x1), x1)
    shifted = lax.shift_right_logical(flipped, x2)
    return lax.select(lax.lt(x1, 0), lax.bitwise_not(shifted), shifted)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


_add_examples(globals(), """
bitwise_and: Bitwise AND of integers or bools, elementwise with broadcasting.
    >>> pnp.bitwise_and(pnp.array([12, 10]), 6)
    Array([4, 2], dtype=int32)
bitwise_not: Bitwise NOT, elementwise (``invert``, ``bitwise_invert``): ``~x``; logical NOT for
    bools.
    >>> pnp.bitwise_not(pnp.array([0, 5, -1]))
    Array([-1, -6,  0], dtype=int32)
left_shift: ``x1`` shifted left by ``x2`` bits, elementwise (``bitwise_left_shift``).
    >>> pnp.left_shift(pnp.array([1, 3]), 2)
    Array([ 4, 12], dtype=int32)
bitwise_or: Bitwise OR of integers or bools, elementwise with broadcasting.
    >>> pnp.bitwise_or(pnp.array([12, 10]), 6)
    Array([14, 14], dtype=int32)
right_shift: ``x1`` shifted right by ``x2`` bits, elementwise (``bitwise_right_shift``);
    arithmetic shift for signed integers.
    >>> pnp.right_shift(pnp.array([16, -16]), 2)
    Array([ 4, -4], dtype=int32)
bitwise_xor: Bitwise exclusive OR of integers or bools, elementwise with broadcasting.
    >>> pnp.bitwise_xor(pnp.array([12, 10]), 6)
    Array([10, 12], dtype=int32)
logical_and: Truth of ``x1 and x2``, elementwise with broadcasting (nonzero is true).
    >>> pnp.logical_and(pnp.array([True, True, False]), pnp.array([True, False, False]))
    Array([ True, False, False], dtype=bool)
logical_not: Truth of ``not x``, elementwise (nonzero is true).
    >>> pnp.logical_not(pnp.array([0, 1, 2]))
    Array([ True, False, False], dtype=bool)
logical_or: Truth of ``x1 or x2``, elementwise with broadcasting (nonzero is true).
    >>> pnp.logical_or(pnp.array([True, True, False]), pnp.array([True, False, False]))
    Array([ True,  True, False], dtype=bool)
logical_xor: Truth of ``x1 != x2`` as booleans, elementwise with broadcasting.
    >>> pnp.logical_xor(pnp.array([True, True, False]), pnp.array([True, False, False]))
    Array([False,  True, False], dtype=bool)
""")
