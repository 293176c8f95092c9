"""``power`` (``pow``) and ``float_power`` of ``ptojax.numpy``: JAX's forms, chosen by the
exponent. A concrete integer scalar exponent is ``integer_pow`` (the base keeps its dtype and
weak type, as JAX's eager call does); an integer base and exponent are raised by repeated
squaring; a float base takes ``lax.pow``."""
from __future__ import annotations

import operator

from ptojax import dtypes, lax
from ptojax.errors import DtypeError
from ptojax.numpy._promote import (dtype_and_weak as _dtype_and_weak,
                                   numeric_args as _numeric_args, promote_args)
from ptojax.public import add_examples as _add_examples
from ptojax.source_info import user_frame
from ptojax.trace import concrete_value as _concrete_value, is_concrete as _is_concrete


def power(x1, x2, /):
    exponent = _concrete_integer(x2)
    if exponent is not None:    # as JAX: integer_pow, so no promotion with the exponent
        (x1,) = _numeric_args("power", x1)
        if exponent < 0 and not dtypes.is_float(x1.dtype):
            raise DtypeError(f"power: an integer base {x1.aval} cannot be raised to the "
                             f"negative power {exponent}; convert the base to a float dtype "
                             f"first", user_frame())
        return lax.integer_pow(x1, exponent)
    exponent_dtype, exponent_weak = _dtype_and_weak(x2, "power")
    x1, x2 = _numeric_args("power", x1, x2)
    if dtypes.is_inexact(x1.dtype):
        if dtypes.is_integer(exponent_dtype) and not exponent_weak:
            # JAX raises to a strong integer exponent as it is: so the result is strong
            x1 = lax.convert_element_type(x1, x1.dtype)
        return lax.pow(x1, x2)
    return _integer_power(x1, x2)


pow = power


def _concrete_integer(x):
    """``x`` as a Python int when it is a concrete integer scalar (a Python int or bool, a
    numpy or ptojax 0-d integer known now, as JAX's ``core.is_concrete`` then
    ``operator.index``), else None."""
    if not _is_concrete(x):
        return None
    try:
        return operator.index(_concrete_value(x))
    except TypeError:
        return None


def float_power(x1, x2, /):
    x1, x2 = promote_args("float_power", x1, x2, kind="float")
    return lax.pow(x1, x2)


def _integer_power(base, exponent):
    """Integer ** integer by repeated squaring; a negative exponent gives the integer part of
    the exact result (±1 for a base of ±1, else 0)."""
    bits = exponent.dtype.itemsize * 8
    base_in = base
    acc = lax.convert_element_type(lax.eq(exponent, exponent), base.dtype)
    e = exponent
    for _ in range(bits):
        acc = lax.select(lax.ne(lax.bitwise_and(e, 1), 0), lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        e = lax.shift_right_logical(e, 1)
    if not dtypes.is_unsigned(exponent.dtype):
        # the loop saw the two's complement bits of a negative exponent: right parity, so
        # right for a base of ±1
        unit = lax.eq(lax.mul(base_in, base_in), 1)
        acc = lax.select(lax.bitwise_and(lax.lt(exponent, 0), lax.bitwise_not(unit)),
                         lax.mul(acc, 0), acc)
    return acc


_add_examples(globals(), """
float_power: ``x1 ** x2`` in the widest float available (float32 without x64), elementwise.
    >>> pnp.float_power(pnp.array([2, 3]), 2)
    Array([4., 9.], dtype=float32)
power: ``x1 ** x2``, elementwise with broadcasting (``pow``); integer powers of integers stay
    integers.
    >>> pnp.power(pnp.array([1, 2, 3]), 2)
    Array([1, 4, 9], dtype=int32)
    >>> pnp.power(2.0, pnp.array([-1.0, 0.5]))
    Array([0.5      , 1.4142135], dtype=float32)
""")
