"""NumPy-style type promotion and broadcasting, made explicit before anything is bound."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import DtypeError, NonArrayLeafError, ShapeError
from ptojax.ir.types import TensorType
from ptojax.runtime.array import Array
from ptojax.source_info import user_frame
from ptojax.trace import Tracer

_PY_SCALARS = (int, float, bool)


def is_array(x) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic))


def dtype_and_weak(x) -> tuple:
    t = type(x)
    if t is Array or t is Tracer:
        aval = x.aval
        return aval.dtype, aval.weak_type
    if t in _PY_SCALARS:
        return dtypes.python_scalar_dtype(x), True
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes.canonicalize(x.dtype), False
    if isinstance(x, (Array, Tracer)):
        return x.aval.dtype, x.aval.weak_type
    if isinstance(x, (list, tuple)):
        arr = asarray(x)
        return arr.dtype, False
    raise NonArrayLeafError(f"expected an array or a scalar, got {type(x).__name__} "
                            f"({x!r:.60})", user_frame(3))


def asarray(x, dtype=None):
    """``x`` as an Array or Tracer (lists/tuples of scalars and arrays are stacked)."""
    if dtype is not None:
        dtype = dtypes.canonicalize(dtype)
    t = type(x)
    if t is Array or t is Tracer:
        return x if dtype is None else lax.convert_element_type(x, dtype)
    if t in _PY_SCALARS:
        d = dtype or dtypes.python_scalar_dtype(x)
        return Array(np.asarray(x, d), weak_type=dtype is None)
    if isinstance(x, (np.ndarray, np.generic)):
        arr = np.asarray(x)
        dtypes.canonicalize(arr.dtype)
        return Array(arr.copy() if dtype is None else arr.astype(dtype))  # own the buffer
    if isinstance(x, (Array, Tracer)):
        return x if dtype is None else lax.convert_element_type(x, dtype)
    if isinstance(x, (list, tuple)):
        return _from_sequence(x, dtype)
    if hasattr(x, "__array__"):
        return asarray(np.asarray(x), dtype)
    raise NonArrayLeafError(f"cannot convert {type(x).__name__} ({x!r:.60}) to an array",
                            user_frame(3))


def _from_sequence(seq, dtype):
    from ptojax.tree_util import tree_leaves
    leaves = tree_leaves(list(seq))
    if any(type(v) is Tracer for v in leaves) or any(type(v) is Array for v in leaves):
        from ptojax.numpy.manipulation import stack
        if not seq:
            return Array(np.zeros((0,), dtype or dtypes.float32))
        return stack([asarray(v, dtype) for v in seq])
    arr = np.asarray(seq)
    if arr.dtype == object:
        raise NonArrayLeafError("cannot make an array from a ragged or mixed sequence",
                                user_frame(4))
    if dtype is None:
        if arr.dtype == np.float64 and all(isinstance(v, (int, float, bool)) for v in leaves):
            dtype = dtypes.float32  # Python floats default to float32
        elif arr.dtype == np.int64 and all(isinstance(v, (int, bool)) for v in leaves):
            dtype = dtypes.int32
        else:
            dtype = dtypes.canonicalize(arr.dtype)
    return Array(arr.astype(dtype))


def result_type(*args) -> tuple:
    return dtypes.promote(tuple(dtype_and_weak(a) for a in args))


def broadcast_shapes(name, *shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ShapeError(f"{name}: shapes {', '.join(map(str, shapes))} cannot be broadcast "
                         f"together", user_frame(4)) from None


def convert(x, dtype, weak=False):
    """``x`` as an array of ``dtype`` (Python scalars become weak 0-d Arrays)."""
    if type(x) in _PY_SCALARS:
        return Array(np.asarray(x, dtype), weak_type=weak)
    x = asarray(x)
    if x.dtype != dtype:
        return lax.convert_element_type(x, dtype, weak_type=weak and x.weak_type)
    return x


def broadcast_to_shape(x, shape):
    """``x`` broadcast NumPy-style to ``shape`` (one broadcast_in_dim)."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    lead = len(shape) - x.ndim
    if lead < 0 or any(d not in (1, shape[lead + i]) for i, d in enumerate(x.shape)):
        raise ShapeError(f"cannot broadcast {x.aval} to shape {shape}", user_frame(3))
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def to_inexact(dtype):
    """The float dtype integer/bool values turn into (64-bit integers keep 64 bits)."""
    if dtypes.is_float(dtype):
        return dtype
    return dtypes.float64 if dtype in (dtypes.int64, dtypes.uint64) else dtypes.float32


def promote_args(name, *args, kind=None):
    """Promote to a common dtype and broadcast to a common shape (rank-0 operands stay
    scalars, which elementwise primitives broadcast for free)."""
    if len(args) == 2 and type(args[0]) is Array and type(args[1]) is Array:
        ta, tb = args[0].aval, args[1].aval
        if (ta is tb or ta == tb) and (kind != "float" or ta.dtype in dtypes.FLOATS):
            return args  # already one dtype and one shape: nothing to do
    dtype, weak = result_type(*args)
    if kind == "float":
        dtype = to_inexact(dtype)
    out = [convert(a, dtype, weak) for a in args]
    shapes = [tuple(a.shape) for a in out]
    if all(s == shapes[0] for s in shapes):
        return out
    shape = broadcast_shapes(name, *shapes)
    return [a if a.ndim == 0 else broadcast_to_shape(a, shape) for a in out]


def check_dtype_kind(name, x, kind):
    dt = x.dtype
    if kind == "int_or_bool" and not (dtypes.is_integer(dt) or dtypes.is_bool(dt)):
        raise DtypeError(f"{name} requires integer or bool operands, got {x.aval}",
                         user_frame(3))


def aval_of(x) -> TensorType:
    return asarray(x).aval
