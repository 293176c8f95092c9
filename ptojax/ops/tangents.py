"""Symbolic tangents: what autodiff rules receive and return besides arrays.

A ``Zero`` is a tangent or cotangent known to be zero, never materialized unless a rule needs
it (``instantiate`` in ``ops/broadcast.py``). ``UndefinedPrimal`` marks the linear input of
an equation being transposed.
"""
from __future__ import annotations

from ptojax import dtypes
from ptojax.eval.array import Array
from ptojax.ir.core import Literal
from ptojax.ir.types import TensorType


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
    return dtypes.is_inexact(aval.dtype)


def tangent_aval(aval) -> TensorType:
    """The tangent type of a primal: itself for floats and complex values, float0 for
    integers and bools."""
    if differentiable(aval):
        return aval.strip_weak()
    return TensorType(aval.shape, dtypes.float0)


def as_value(x):
    """``x`` usable as an array by rules and user code: a ``Literal`` becomes an ``Array``."""
    if type(x) is Literal:
        return Array(x.value, x.type.weak_type)
    return x


# jvp rules that need no arithmetic ------------------------------------------------------------
def zero_jvp(prim):
    """A piecewise-constant (or integer-valued) primitive: its tangent is zero."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [Zero(o.aval) for o in out]
        return out, Zero(out.aval)
    rule.zero_derivative = True  # read by tracing: such outputs carry no derivative
    return rule


def linear_in_first_jvp(prim):
    """Linear in operand 0, the others being indices or shapes: the tangent is the primitive
    applied to operand 0's tangent (a unary linear primitive is the one-operand case)."""
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if is_zero(tangents[0]):
            return out, Zero(out.aval)
        return out, prim.bind(tangents[0], *primals[1:], **params)
    return rule
