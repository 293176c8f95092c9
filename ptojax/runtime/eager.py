"""Eager execution of a primitive on concrete values: its numpy impl, type-checked by its
abstract eval (cached per signature, so the check costs one dict lookup)."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import LeakedTracerError, NonArrayLeafError, PtoError
from ptojax.ir.core import Literal
from ptojax.ir.types import TensorType
from ptojax.runtime.array import Array
from ptojax.source_info import user_frame

_out_types_cache: dict = {}


def _value_and_type(x):
    t = type(x)
    if t is Array:
        return x._value, x.aval
    if t is np.ndarray or isinstance(x, np.generic):
        return x, TensorType(x.shape, dtypes.canonicalize(x.dtype))
    if t is Literal:
        return x.value, x.type
    if t in (float, int, bool):
        dt = dtypes.python_scalar_dtype(x)
        return np.asarray(x, dt), TensorType((), dt, True)
    if isinstance(x, Array):
        return x._value, x.aval
    if type(x).__name__ == "Tracer":
        raise LeakedTracerError(
            f"a traced value {x.aval} is used outside of any trace: it leaked out of the "
            f"function that was traced (through a global, closure or side effect). Return it "
            f"from the function instead.", user_frame(3))
    raise NonArrayLeafError(f"a value of type {type(x).__name__} cannot be used as an array "
                            f"({x!r:.60}); pass arrays or Python scalars", user_frame(3))


def apply_eager(prim, args, params):
    values, types = [], []
    for a in args:
        v, t = _value_and_type(a)
        values.append(v)
        types.append(t)
    out_types = _out_types(prim, types, params)
    try:
        out = prim.impl(*values, **params)
    except PtoError as e:
        raise e.with_source(user_frame(3)) from None
    if prim.multiple_results:
        return [_wrap(o, t) for o, t in zip(out, out_types)]
    return _wrap(out, out_types[0])


def _out_types(prim, types, params):
    try:
        key = (prim, *types, *params.items())
        cached = _out_types_cache.get(key)
    except TypeError:  # an unhashable param: no caching
        key, cached = None, None
    if cached is None:
        try:
            cached = prim.out_types(types, params)
        except PtoError as e:
            raise e.with_source(user_frame(4)) from None
        if key is not None:
            if len(_out_types_cache) > 20000:
                _out_types_cache.clear()
            _out_types_cache[key] = cached
    return cached


def _wrap(value, out_type):
    value = np.asarray(value)
    if value.dtype != out_type.dtype:
        value = value.astype(out_type.dtype)
    return Array(value, out_type.weak_type)
