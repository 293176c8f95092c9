"""Classifying floats elementwise: isnan, isinf, isfinite, isposinf, isneginf, signbit (all
False for integers where NumPy says so; complex values test either part)."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.numpy._constants import strong_like
from ptojax.numpy._promote import promote_args
from ptojax.public import add_examples as _add_examples


def _either_part(test, x):
    """``test`` of real ``x``; of complex ``x``, whether either part passes it."""
    if dtypes.is_complex(x.dtype):
        return lax.bitwise_or(test(lax.real(x)), test(lax.imag(x)))
    return test(x)


def isnan(x, /):
    """``x != x``, for integers too (so weak of a weak ``x``, as JAX's)."""
    (x,) = promote_args("isnan", x)
    return _either_part(lambda v: lax.ne(v, v), x)


def isinf(x, /):
    (x,) = promote_args("isinf", x)
    if not dtypes.is_inexact(x.dtype):
        return _full_bool(x, False)
    return _either_part(lambda v: lax.eq(lax.abs(v), strong_like(v, float("inf"))), x)


def isfinite(x, /):
    (x,) = promote_args("isfinite", x)
    if not dtypes.is_inexact(x.dtype):
        return _full_bool(x, True)
    if dtypes.is_complex(x.dtype):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def _infinity_test(name, sign):
    def fn(x, /):
        (x,) = promote_args(name, x)
        if not dtypes.is_float(x.dtype):
            return _full_bool(x, False)
        return lax.eq(x, strong_like(x, sign * float("inf")))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Whether each element is {'+' if sign > 0 else '-'}inf (False for integers)."
    return fn


isposinf = _infinity_test("isposinf", 1)
isneginf = _infinity_test("isneginf", -1)


def _full_bool(x, value):
    return lax.broadcast_in_dim(np.bool_(value), x.shape, ())


def signbit(x, /):
    (x,) = promote_args("signbit", x)
    if dtypes.is_unsigned(x.dtype) or x.dtype == dtypes.bool_:
        return _full_bool(x, False)
    zero = strong_like(x, 0)   # strong: so is the result, as JAX's
    if not dtypes.is_float(x.dtype):
        return lax.lt(x, zero)
    # -0.0 and -nan have the sign bit set: test 1/x < 0 for zeros, x < 0 otherwise
    one = lax.div(strong_like(x, 1), x)
    return lax.select(lax.eq(x, zero), lax.lt(one, zero), lax.lt(x, zero))


_add_examples(globals(), """
isfinite: Whether each element is finite (not inf or NaN); True for integers.
    >>> pnp.isfinite(pnp.array([1.0, pnp.inf, pnp.nan]))
    Array([ True, False, False], dtype=bool)
isinf: Whether each element is +inf or -inf.
    >>> pnp.isinf(pnp.array([1.0, -pnp.inf, pnp.nan]))
    Array([False,  True, False], dtype=bool)
isnan: Whether each element is NaN.
    >>> pnp.isnan(pnp.array([1.0, pnp.inf, pnp.nan]))
    Array([False, False,  True], dtype=bool)
isneginf:
    >>> pnp.isneginf(pnp.array([1.0, -pnp.inf, pnp.inf]))
    Array([False,  True, False], dtype=bool)
isposinf:
    >>> pnp.isposinf(pnp.array([1.0, -pnp.inf, pnp.inf]))
    Array([False, False,  True], dtype=bool)
signbit: Whether the sign bit is set, elementwise (True for -0.0).
    >>> pnp.signbit(pnp.array([-1.0, -0.0, 0.0, 2.0]))
    Array([ True,  True, False, False], dtype=bool)
""")
