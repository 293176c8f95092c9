"""Axis arguments of ``ptojax.numpy`` functions: normalized into ``0..ndim-1``, or an
AxisError naming the function, the axis, the rank and the user's line."""
from __future__ import annotations

import operator

from ptojax.errors import AxisError
from ptojax.ir.symbolic import DimExpr, is_index_scalar
from ptojax.source_info import user_frame


def normalize_axis(op: str, axis, ndim: int, what: str = "axis") -> int:
    """One axis (negative counts from the end)."""
    if not is_index_scalar(axis) or type(axis) is DimExpr:
        raise AxisError(f"{op}: {what} must be an int, got {axis!r}", user_frame())
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise AxisError(f"{op}: {what} {axis} is out of bounds for an array of rank {ndim}"
                        + (f" (valid: {-ndim}..{ndim - 1})" if ndim else ""), user_frame())
    return int(axis) % ndim


def normalize_axes(op: str, axis, ndim: int) -> tuple:
    """``axis`` as sorted, distinct axes: None means all of them, else an int or a sequence."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(op, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise AxisError(f"{op}: repeated axis in {axis}", user_frame())
    return tuple(sorted(out))


def single_axis(op: str, axis, ndim: int) -> int:
    """An axis argument that must be one int (not a tuple)."""
    if isinstance(axis, (tuple, list)):
        raise AxisError(f"{op}: axis must be a single int, got {axis!r}", user_frame())
    return normalize_axis(op, axis, ndim)
