"""Shared checks for primitive abstract evals: clear errors naming the op and the operands."""
from __future__ import annotations

import operator

from ptojax import dtypes
from ptojax.errors import AxisError, DtypeError, PtoError, ShapeError
from ptojax.ir.symbolic import DimExpr, is_index_scalar
from ptojax.source_info import user_frame


def fmt_types(types) -> str:
    return ", ".join(str(t) for t in types)


def check_axis(name: str, axis, ndim: int) -> int:
    """``axis`` in ``0..ndim-1`` (negative axes count from the end), or an AxisError."""
    if not is_index_scalar(axis) or type(axis) is DimExpr:
        raise AxisError(f"{name}: axis {axis!r} must be an integer")
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(f"{name}: axis {axis} is out of range for an array of rank {ndim}"
                        + (f" (valid: {-ndim}..{ndim - 1})" if ndim else ""))
    return int(axis) % ndim


def check_axes(name: str, axes, ndim: int) -> tuple:
    out = tuple(check_axis(name, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise AxisError(f"{name}: repeated axis in {tuple(axes)}")
    return out


def user_axis(name: str, axis, ndim: int) -> int:
    """``check_axis`` for an axis a user passed: the error names the user's line."""
    try:
        return check_axis(name, axis, ndim)
    except PtoError as e:
        raise e.with_source(user_frame()) from None


def user_axes(name: str, axes, ndim: int) -> tuple:
    """``check_axes`` for axes a user passed, in the order given."""
    try:
        return check_axes(name, tuple(axes), ndim)
    except PtoError as e:
        raise e.with_source(user_frame()) from None


def require_same_dtype(name: str, types) -> None:
    first = types[0].dtype
    if any(t.dtype != first for t in types[1:]):
        raise DtypeError(f"{name}: operands have different dtypes ({fmt_types(types)}); "
                         f"convert them to one dtype first (pnp functions promote for you)")


_KINDS = {  # kind -> (test, what the error says is required)
    "float": (dtypes.is_float, "a floating-point"),
    "inexact": (dtypes.is_inexact, "a floating-point or complex"),
    "int": (dtypes.is_integer, "an integer"),
    "int_or_bool": (lambda d: dtypes.is_integer(d) or dtypes.is_bool(d), "an integer or bool"),
    "real_num": (lambda d: dtypes.is_integer(d) or dtypes.is_float(d),
                 "an integer or floating-point"),
    "ordered": (lambda d: not dtypes.is_complex(d), "a real (non-complex)"),
    "num": (lambda d: not dtypes.is_bool(d), "a numeric (non-bool)"),
    "any": (lambda d: True, ""),
    "bool": (dtypes.is_bool, "a bool"),
}


def require_kind(name: str, t, kind: str) -> None:
    ok, what = _KINDS[kind]
    if not ok(t.dtype):
        hint = " (convert with .astype(pnp.float32))" if kind == "float" else ""
        raise DtypeError(f"{name} requires {what} operand, got {t}{hint}")


def broadcast_scalars(name: str, types) -> tuple:
    """The common shape of elementwise operands: equal shapes, or shape () broadcasting."""
    shape = None
    for t in types:
        if t.shape == ():
            continue
        if shape is None:
            shape = t.shape
        elif t.shape != shape:
            raise ShapeError(f"{name}: operand shapes differ ({fmt_types(types)}); "
                             f"elementwise primitives need equal shapes or scalars — "
                             f"broadcast first (pnp functions broadcast for you)")
    return () if shape is None else shape
