"""Whole-array comparisons: ``isclose``, ``allclose``, ``array_equal``, ``array_equiv``."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ShapeError
from ptojax.numpy._promote import array_from, asarray, broadcast_shapes, convert, promote_args
from ptojax.numpy.math import equal, isfinite, isnan, logical_and, logical_or
from ptojax.numpy.reductions import all as _all
from ptojax.public import add_examples as _add_examples


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` elementwise, in the promoted inexact dtype (integers
    compare as float32, as JAX); equal infinities are close, NaNs only with ``equal_nan``."""
    a, b = promote_args("isclose", a, b, kind="float")
    tolerance_dtype = dtypes.real_dtype(a.dtype)   # |a - b| of complex values is real
    rtol, atol = convert(rtol, tolerance_dtype), convert(atol, tolerance_dtype)
    in_range = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = logical_or(lax.eq(a, b), logical_and(isfinite(b), in_range))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element pair is ``isclose``."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether both have one shape and equal elements (a bool array; False for different
    shapes)."""
    a1, a2 = array_from(a1, op="array_equal"), array_from(a2, op="array_equal")  # as JAX
    if tuple(a1.shape) != tuple(a2.shape):
        return asarray(np.bool_(False))
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return _all(eq)


def array_equiv(a1, a2):
    """Whether the two broadcast to equal arrays (False when they do not broadcast)."""
    a1, a2 = array_from(a1, op="array_equiv"), array_from(a2, op="array_equiv")  # as JAX
    try:
        broadcast_shapes("array_equiv", tuple(a1.shape), tuple(a2.shape))
    except ShapeError:
        return asarray(np.bool_(False))
    return _all(equal(a1, a2))


__all__ = ["isclose", "allclose", "array_equal", "array_equiv"]


_add_examples(globals(), """
allclose:
    >>> pnp.allclose(pnp.array([1.0, 2.0]), pnp.array([1.0, 2.0 + 1e-9]))
    Array(True, dtype=bool)
array_equal:
    >>> pnp.array_equal(pnp.array([1, 2]), pnp.array([1, 2]))
    Array(True, dtype=bool)
array_equiv:
    >>> pnp.array_equiv(pnp.array([1, 2]), pnp.array([[1, 2], [1, 2]]))
    Array(True, dtype=bool)
isclose:
    >>> pnp.isclose(pnp.array([1.0, 1.1]), 1.0)
    Array([ True, False], dtype=bool)
""")
