"""Eager execution of a primitive on concrete values: its numpy impl, type-checked by its
abstract eval (cached per signature, so the check costs one dict lookup)."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import (LeakedTracerError, PtoError, is_masked_array, located,
                           masked_array_error, non_array_error)
from ptojax.ir.core import IR, ClosedIR, Literal
from ptojax.ir.symbolic import DimExpr, has_symbols
from ptojax.ir.types import TensorType
from ptojax.eval.array import Array
from ptojax.eval import transfers
from ptojax.eval.ieee import quietly
from ptojax.eval.nonfinite import check_outputs
from ptojax.scoped_options import DEBUG_INFS as _INFS, DEBUG_NANS as _NANS
from ptojax.source_info import user_frame

_out_types_cache: dict = {}


def clear_eager_caches():
    """Forget the cached result types of eager operations (``jax.clear_caches``)."""
    _out_types_cache.clear()


def _value_and_type(x, prim):
    t = type(x)
    if t is Array:
        return x._value, x.aval
    if t is np.ndarray or isinstance(x, np.generic):   # 32-bit without x64, as JAX
        if transfers.guarded():   # jax_transfer_guard: a host value becomes an operand
            transfers.implicit_host_value(x)
        x = dtypes.canonical_value(x)
        return x, TensorType(x.shape, dtypes.canonicalize(x.dtype))
    if t is Literal:
        return x.value, x.type
    if t in dtypes.PYTHON_SCALARS:
        if transfers.guarded():
            transfers.implicit_host_value(x)
        dt = dtypes.python_scalar_dtype(x)
        return np.asarray(x, dt), TensorType((), dt, dtypes.python_scalar_is_weak(x))
    if isinstance(x, Array):
        return x._value, x.aval
    if hasattr(x, "_trace"):  # a Tracer whose trace has ended
        raise leaked_tracer_error(x)
    if is_masked_array(x):
        raise masked_array_error(prim.name, user_frame(3))
    if isinstance(x, np.ndarray):   # a subclass (np.matrix, np.memmap): as its base array
        return _value_and_type(np.asarray(x), prim)
    raise non_array_error(x, prim.name, user_frame(3))


def leaked_tracer_error(tracer) -> LeakedTracerError:
    return LeakedTracerError(
        f"a traced value {tracer.aval} from the trace of `{tracer._trace.name}` is used after "
        f"that trace ended (it leaked out, e.g. through a global, a closure or a side "
        f"effect). Return it from the function instead, or pass it in as an argument.",
        user_frame(4))


@quietly
def apply_eager(prim, args, params):
    values, types = [], []
    for a in args:
        if type(a) is Array:
            values.append(a._value)
            types.append(a._aval or a.aval)
        else:
            v, t = _value_and_type(a, prim)
            values.append(v)
            types.append(t)
    try:
        key = _cache_key(prim, types, params)
        out_types = _out_types_cache.get(key)
    except TypeError:  # an unhashable param: no caching
        key = out_types = None
    if out_types is None:
        out_types = _infer(prim, types, params, key)
    try:
        out = prim.impl(*values, **params)
    except PtoError as e:
        raise e.with_source(user_frame(3)) from None
    except Exception as e:  # numpy's own errors (a MemoryError, ...): name the user's line
        raise located(e, user_frame(3), f"{prim.name}")
    if prim.multiple_results:
        outs = [_wrap(o, t) for o, t in zip(out, out_types)]
        if _NANS.active or _INFS.active:   # jax_debug_nans / jax_debug_infs
            check_outputs(prim.name, outs, user_frame(3))
        return outs
    t = out_types[0]
    if type(out) is not np.ndarray or out.dtype != t.dtype:
        out = np.asarray(out, t.dtype)
    if _NANS.active or _INFS.active:
        check_outputs(prim.name, (out,), user_frame(3))
    return Array(out, t.weak_type)


def traced_out_types(prim, types, params) -> list:
    """``prim``'s result types for operand ``types`` and ``params`` (a ``Params``) while
    tracing, from the cache eager runs fill too (abstract evals are pure functions of their
    operand types and params). Equations holding sub-IRs or functions (bodies, rules) are
    not cached: a key would keep them, and their consts, alive; nor are symbolic dimensions
    (equal symbols may carry other bounds)."""
    try:
        key = _cache_key(prim, types, params)
        out_types = _out_types_cache.get(key)
    except TypeError:  # an unhashable param
        return prim.out_types(types, params)
    if out_types is None:
        out_types = prim.out_types(types, params)
        if not prim.call_like and _plain(params) and not any(
                has_symbols(getattr(t, "shape", ())) for t in (*types, *out_types)):
            _remember(key, out_types)
    return out_types


def _cache_key(prim, types, params) -> tuple:
    """The result-type cache's key (looking it up raises TypeError for an unhashable param)."""
    return (prim, *types, *params.items()) if params else (prim, *types)


def _remember(key, out_types) -> None:
    if len(_out_types_cache) > 20000:
        _out_types_cache.clear()
    _out_types_cache[key] = out_types


def _plain(params) -> bool:
    """No param holds an IR, a function or a symbolic dimension (tuples looked into)."""
    def plain(v):
        if isinstance(v, tuple):
            return all(plain(x) for x in v)
        return not isinstance(v, (IR, ClosedIR, DimExpr)) and not callable(v)
    return all(plain(v) for v in params.values())


def _infer(prim, types, params, key):
    try:
        out_types = prim.out_types(types, params)
    except PtoError as e:
        raise e.with_source(user_frame(4)) from None
    except Exception as e:
        raise located(e, user_frame(4), f"{prim.name}")
    if key is not None:
        _remember(key, out_types)
    return out_types


def _wrap(value, out_type):
    if type(value) is not np.ndarray or value.dtype != out_type.dtype:
        value = np.asarray(value, out_type.dtype)
    return Array(value, out_type.weak_type)
