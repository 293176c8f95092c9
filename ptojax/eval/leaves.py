"""Leaves of the pytrees users pass: the type each is traced as, and its value.

A leaf is an ``Array``, a ``Tracer``, a numpy array or scalar, a Python scalar (weakly typed,
as in JAX) or a ``ShapeDtypeStruct`` (an abstract argument, for tracing without data).
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import (DtypeError, IntegerOverflowError, NonArrayLeafError, is_masked_array,
                           masked_array_error, non_array_error)
from ptojax.eval.array import Array
from ptojax.ir.types import ShapedArray, TensorType
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.pytree import keystr
from ptojax.public import add_examples as _add_examples


class ShapeDtypeStruct:
    """An abstract argument: ``make_ir``/``lower`` trace with it without any data."""
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type: bool = False):
        self.shape = tuple(shape)
        self.dtype = dtypes.canonicalize(dtype)
        self.weak_type = weak_type

    @property
    def aval(self):
        return TensorType(self.shape, self.dtype, self.weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def _key(self):
        return self.shape, self.dtype, self.weak_type

    def __eq__(self, other):
        return type(other) is ShapeDtypeStruct and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype}{weak})"


def check_arraylike(op: str, *values) -> None:
    """Refuse a list or tuple among ``values``, the arguments ``op`` takes as arrays (JAX's
    ``check_arraylike``): only functions made to take sequences convert them."""
    for x in values:
        if isinstance(x, (list, tuple)):
            raise non_array_error(x, op, user_frame())


def leaf_type(x, path=()) -> TensorType:
    """The TensorType a concrete (or abstract) leaf is traced as."""
    t = type(x)
    if t is Array or t is Tracer or t is ShapeDtypeStruct:
        return x.aval
    try:
        if t is np.ndarray or isinstance(x, np.generic):   # 32-bit without x64, as JAX
            return TensorType(x.shape, dtypes.canonical_dtype(x.dtype))
        if t in dtypes.PYTHON_SCALARS:
            return TensorType((), dtypes.python_scalar_dtype(x), dtypes.python_scalar_is_weak(x))
    except (DtypeError, IntegerOverflowError) as e:
        where = f"{describe_path(path)}: " if path else ""
        raise type(e)(where + e.message, user_frame(3)) from None
    if isinstance(x, (Array, Tracer)):
        return x.aval
    if is_masked_array(x):
        raise masked_array_error(f"argument {keystr(path) or ''}", user_frame(3))
    if isinstance(x, np.ndarray):   # a subclass (np.matrix, np.memmap): as its base array
        return leaf_type(np.asarray(x), path)
    raise NonArrayLeafError(
        f"argument {keystr(path) or ''} is a {type(x).__name__} ({x!r:.60}), not an array; "
        f"pass arrays/scalars, or mark it static with static_argnums/static_argnames",
        user_frame(3))


# jit traces a Python float argument as this float64 carrier of its full value and gives the
# function a weak float32 narrowed from it (jit.py); promotion converts from the carrier.
PYTHON_FLOAT_CARRIER = TensorType((), dtypes.float64, True)


def typeof(x):
    """The abstract type of ``x`` (shape, dtype, weak type), as JAX's ``jax.typeof``: what a
    trace sees of it, a ``ShapedArray`` (``pto.core.ShapedArray``, shown as JAX shows it);
    of a typed key, its key shape and ``key<fry>``."""
    if dtypes.is_extended(getattr(x, "dtype", None)):
        return TensorType(tuple(x.shape), x.dtype)
    return ShapedArray.of(leaf_type(x))


def argument_type(x, path=()) -> TensorType:
    """The type ``jit`` traces a leaf as: ``leaf_type``, but a Python float is carried at
    float64 (``PYTHON_FLOAT_CARRIER``)."""
    return PYTHON_FLOAT_CARRIER if type(x) is float else leaf_type(x, path)


def leaf_value(x):
    """The value ``jit`` passes for a leaf (of ``argument_type``)."""
    t = type(x)
    if t is Array:
        return x._value
    if t is np.ndarray:
        return dtypes.canonical_value(x)
    return np.asarray(x, argument_type(x).dtype)


def describe_path(path) -> str:
    """How an error names the argument at ``path`` of ``(args, kwargs)``."""
    if len(path) < 2 or not hasattr(path[0], "idx"):
        return f"argument {keystr(path)}"
    if path[0].idx == 0:
        return f"positional argument {path[1].idx}{keystr(path[2:])}"
    if len(path) >= 2:
        return f"keyword argument {path[1].key!r}{keystr(path[2:])}"
    return "an argument"


_add_examples(globals(), """
ShapeDtypeStruct:
    >>> pto.ShapeDtypeStruct((2, 3), pnp.float32)
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
typeof:
    >>> pto.typeof(pnp.ones((2, 3)))
    ShapedArray(float32[2,3])
    >>> pto.typeof(1.0).weak_type
    True
""")
