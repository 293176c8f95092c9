"""Reductions (sum/max/min/prod/and/or over axes), argmax/argmin and cumulative ops."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import AxisError
from ptojax.ir.types import TensorType
from ptojax.ops.checks import check_axes, check_axis, require_kind
from ptojax.trace import Primitive

REDUCTIONS: dict[str, Primitive] = {}


def _reduce_abstract(name, kind):
    def abstract_eval(x, axes):
        require_kind(name, x, kind)
        axes = check_axes(name, axes, x.ndim)
        return TensorType(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype,
                          x.weak_type)
    return abstract_eval


def _low_precision(x):
    return x.dtype in (dtypes.float16, dtypes.bfloat16) or x.dtype in dtypes.FLOAT8


def _sum(x, axes):
    if _low_precision(x):  # accumulate in f32, as the hardware does
        return np.sum(x, axis=axes, dtype=np.float32).astype(x.dtype)
    return np.sum(x, axis=axes, dtype=x.dtype)


def _prod(x, axes):
    if _low_precision(x):
        return np.prod(x, axis=axes, dtype=np.float32).astype(x.dtype)
    return np.prod(x, axis=axes, dtype=x.dtype)


def _identity(x, lowest: bool):
    if x.dtype == dtypes.bool_:
        return not lowest
    if dtypes.is_float(x.dtype):
        return -np.inf if lowest else np.inf
    info = np.iinfo(x.dtype)
    return info.min if lowest else info.max


def _max(x, axes):
    return np.maximum.reduce(x, axis=axes, initial=_identity(x, True))


def _min(x, axes):
    return np.minimum.reduce(x, axis=axes, initial=_identity(x, False))


def _reduction(name, impl, kind):
    prim = Primitive(name, _reduce_abstract(name, kind), impl)
    REDUCTIONS[name] = prim
    return prim


reduce_sum_p = _reduction("reduce_sum", _sum, "any")
reduce_prod_p = _reduction("reduce_prod", _prod, "any")
reduce_max_p = _reduction("reduce_max", _max, "any")
reduce_min_p = _reduction("reduce_min", _min, "any")
reduce_and_p = _reduction("reduce_and", lambda x, axes: np.all(x, axis=axes), "bool")
reduce_or_p = _reduction("reduce_or", lambda x, axes: np.any(x, axis=axes), "bool")


# arg-reductions ------------------------------------------------------------------------------
def _arg_abstract(name):
    def abstract_eval(x, axis, index_dtype):
        axis = check_axis(name, axis, x.ndim)
        if x.shape[axis] == 0:
            raise AxisError(f"{name}: axis {axis} has size 0; there is no extremum")
        index_dtype = dtypes.canonicalize(index_dtype)
        if not dtypes.is_integer(index_dtype):
            raise TypeError(f"{name}: index_dtype must be an integer dtype")
        return TensorType(tuple(d for i, d in enumerate(x.shape) if i != axis), index_dtype)
    return abstract_eval


argmax_p = Primitive("argmax", _arg_abstract("argmax"),
                     lambda x, axis, index_dtype: np.argmax(x, axis=axis).astype(index_dtype))
argmin_p = Primitive("argmin", _arg_abstract("argmin"),
                     lambda x, axis, index_dtype: np.argmin(x, axis=axis).astype(index_dtype))
REDUCTIONS.update(argmax=argmax_p, argmin=argmin_p)


# cumulative ops ------------------------------------------------------------------------------
CUMULATIVE: dict[str, Primitive] = {}


def _cumulative(name, accumulate, kind):
    def abstract_eval(x, axis, reverse=False):
        require_kind(name, x, kind)
        check_axis(name, axis, x.ndim)
        return x

    def impl(x, axis, reverse=False):
        axis = axis % x.ndim
        if reverse:
            x = np.flip(x, axis)
        if _low_precision(x) and accumulate in (np.add, np.multiply, np.logaddexp):
            out = accumulate.accumulate(x.astype(np.float32), axis=axis).astype(x.dtype)
        else:
            out = accumulate.accumulate(x, axis=axis, dtype=x.dtype)
        return np.flip(out, axis) if reverse else out

    prim = Primitive(name, abstract_eval, impl)
    CUMULATIVE[name] = prim
    return prim


cumsum_p = _cumulative("cumsum", np.add, "any")
cumprod_p = _cumulative("cumprod", np.multiply, "any")
cummax_p = _cumulative("cummax", np.maximum, "any")
cummin_p = _cumulative("cummin", np.minimum, "any")
cumlogsumexp_p = _cumulative("cumlogsumexp", np.logaddexp, "float")
