"""Shared pieces of autodiff: symbolic zeros, the linear-input marker, tangent arithmetic."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.ir.core import Literal
from ptojax.ir.types import TensorType
from ptojax.eval.array import Array


class Zero:
    """A symbolic zero tangent/cotangent of type ``aval``: never materialized unless needed."""
    __slots__ = ("aval",)

    def __init__(self, aval: TensorType):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval})"


class UndefinedPrimal:
    """Marks a linear input of an equation being transposed (its value is not known)."""
    __slots__ = ("aval",)

    def __init__(self, aval: TensorType):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_zero(t) -> bool:
    return type(t) is Zero


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


def differentiable(aval) -> bool:
    return dtypes.is_float(aval.dtype)


def zeros(aval) -> "Array":
    """A concrete (or, under a trace, staged) array of zeros of ``aval``'s shape and dtype."""
    return lax.broadcast_in_dim(Array(np.zeros((), aval.dtype)), aval.shape, ())


def zeros_like(x):
    """Zeros shaped and typed like the value ``x`` (a broadcast scalar: no arithmetic, so
    no NaN from ``x * 0`` when ``x`` is infinite)."""
    return zeros(x.aval.strip_weak())


def as_value(x):
    """``x`` usable as an array by rules and user code: a ``Literal`` becomes an ``Array``."""
    if type(x) is Literal:
        return Array(x.value, x.type.weak_type)
    return x


def instantiate(t, aval=None):
    return zeros(t.aval if aval is None else aval) if type(t) is Zero else t


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return lax.add(a, b)


def fit_shape(t, shape):
    """A rank-0 tangent broadcast to ``shape`` (elementwise ops broadcast rank-0 operands)."""
    if type(t) is Zero or tuple(t.shape) == tuple(shape):
        return t
    return lax.broadcast_in_dim(t, shape, ())


def unbroadcast(ct, aval):
    """The cotangent of a rank-0 operand that was broadcast: sum over everything."""
    if type(ct) is Zero or tuple(ct.shape) == tuple(aval.shape):
        return ct
    return lax.reduce_sum(ct, tuple(range(ct.ndim)))


def tangent_aval(aval) -> TensorType:
    """The tangent type of a primal: itself for floats, float0 for integers and bools."""
    if differentiable(aval):
        return aval.strip_weak()
    return TensorType(aval.shape, dtypes.float0)
