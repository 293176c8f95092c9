"""The dtype names of ``ptojax.numpy`` (``pnp.float32``, ``pnp.int8``, ...) as JAX's scalar
types: calling one makes an array of that dtype (``pnp.float32(3)`` is a 0-d float32 Array,
not weak; ``pnp.int8([1, 2])`` an int8 vector; a traced value is converted), and each still
works wherever a dtype does (``dtype=pnp.float32``, ``x.astype(pnp.int8)``,
``np.dtype(pnp.bfloat16)``, ``x.dtype == pnp.float32``) through its ``dtype`` attribute."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.numpy._promote import array_from
from ptojax.public import add_examples as _add_examples


class _ScalarMeta(type):
    """The type of ``pnp.float32`` & co: a class whose instances are never made; calling it
    converts its argument."""
    dtype: np.dtype

    @property
    def __numpy_dtype__(cls) -> np.dtype:
        return cls.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other) -> bool:
        return not cls == other

    def __call__(cls, x):   # pnp.float64(x) without x64: float32, with JAX's warning
        return array_from(x, dtypes.user_dtype(cls.dtype, "asarray"), op=cls.__name__)

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, cls.dtype.type)


def _scalar_type(name: str, dtype: np.dtype) -> _ScalarMeta:
    cls = _ScalarMeta(name, (object,), {"dtype": dtype})
    cls.__module__ = "ptojax.numpy"
    cls.__doc__ = (f"The {name} scalar type: ``{name}(x)`` is ``x`` as a {name} array (0-d "
                   f"for a number), and ``{name}`` is accepted wherever a dtype is.")
    return cls


bool_ = _scalar_type("bool", dtypes.bool_)
int8 = _scalar_type("int8", dtypes.int8)
int16 = _scalar_type("int16", dtypes.int16)
int32 = _scalar_type("int32", dtypes.int32)
int64 = _scalar_type("int64", dtypes.int64)
uint8 = _scalar_type("uint8", dtypes.uint8)
uint16 = _scalar_type("uint16", dtypes.uint16)
uint32 = _scalar_type("uint32", dtypes.uint32)
uint64 = _scalar_type("uint64", dtypes.uint64)
float8_e4m3fn = _scalar_type("float8_e4m3fn", dtypes.float8_e4m3fn)
float8_e5m2 = _scalar_type("float8_e5m2", dtypes.float8_e5m2)
# the other narrow types of ml_dtypes, as JAX (promotion and supported operations: dtypes.py)
float8_e4m3 = _scalar_type("float8_e4m3", dtypes.float8_e4m3)
float8_e3m4 = _scalar_type("float8_e3m4", dtypes.float8_e3m4)
float8_e4m3fnuz = _scalar_type("float8_e4m3fnuz", dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = _scalar_type("float8_e5m2fnuz", dtypes.float8_e5m2fnuz)
float8_e4m3b11fnuz = _scalar_type("float8_e4m3b11fnuz", dtypes.float8_e4m3b11fnuz)
float8_e8m0fnu = _scalar_type("float8_e8m0fnu", dtypes.float8_e8m0fnu)
float4_e2m1fn = _scalar_type("float4_e2m1fn", dtypes.float4_e2m1fn)
float6_e2m3fn = _scalar_type("float6_e2m3fn", dtypes.float6_e2m3fn)
float6_e3m2fn = _scalar_type("float6_e3m2fn", dtypes.float6_e3m2fn)
int1 = _scalar_type("int1", dtypes.int1)
int2 = _scalar_type("int2", dtypes.int2)
int4 = _scalar_type("int4", dtypes.int4)
uint1 = _scalar_type("uint1", dtypes.uint1)
uint2 = _scalar_type("uint2", dtypes.uint2)
uint4 = _scalar_type("uint4", dtypes.uint4)
bfloat16 = _scalar_type("bfloat16", dtypes.bfloat16)
float16 = _scalar_type("float16", dtypes.float16)
float32 = _scalar_type("float32", dtypes.float32)
float64 = _scalar_type("float64", dtypes.float64)
complex64 = _scalar_type("complex64", dtypes.complex64)
complex128 = _scalar_type("complex128", dtypes.complex128)

NARROW_NAMES = ["float8_e4m3", "float8_e3m4", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "int1", "int2", "int4", "uint1", "uint2", "uint4"]

# NumPy's other names for the same types (JAX has them too)
bool = bool_  # noqa: A001
int_, uint, float_ = int64, uint64, float64
single, double = float32, float64
csingle, cdouble, complex_ = complex64, complex128, complex128

__all__ = ["bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float8_e4m3fn", "float8_e5m2", *NARROW_NAMES, "bfloat16", "float16", "float32",
           "float64", "complex64", "complex128", "int_", "uint", "float_", "single", "double",
           "csingle", "cdouble", "complex_"]


_add_examples(globals(), """
bool_:
    >>> pnp.bool_([0, 2])
    Array([False,  True], dtype=bool)
int8:
    >>> pnp.int8([1, 2.5])
    Array([1, 2], dtype=int8)
int16:
    >>> pnp.int16([1, 2.5])
    Array([1, 2], dtype=int16)
int32:
    >>> pnp.int32([1, 2.5])
    Array([1, 2], dtype=int32)
int64: ``int32`` arrays without x64 (as JAX), ``int64`` ones in x64 mode.
    >>> pnp.int64([1, 2.5])
    Array([1, 2], dtype=int32)
uint8:
    >>> pnp.uint8([1, 2.5])
    Array([1, 2], dtype=uint8)
uint16:
    >>> pnp.uint16([1, 2.5])
    Array([1, 2], dtype=uint16)
uint32:
    >>> pnp.uint32([1, 2.5])
    Array([1, 2], dtype=uint32)
uint64: ``uint32`` arrays without x64 (as JAX), ``uint64`` ones in x64 mode.
    >>> pnp.uint64([1, 2.5])
    Array([1, 2], dtype=uint32)
float8_e4m3fn:
    >>> pnp.float8_e4m3fn([1, 2.5])
    Array([1, 2.5], dtype=float8_e4m3fn)
float8_e5m2:
    >>> pnp.float8_e5m2([1, 2.5])
    Array([1, 2.5], dtype=float8_e5m2)
float8_e4m3: IEEE-style e4m3 (with inf; ``float8_e4m3fn`` has none).
    >>> pnp.float8_e4m3([1, 2.5])
    Array([1, 2.5], dtype=float8_e4m3)
float8_e3m4:
    >>> pnp.float8_e3m4([1, 2.5])
    Array([1, 2.5], dtype=float8_e3m4)
float8_e4m3fnuz:
    >>> pnp.float8_e4m3fnuz([1, 2.5])
    Array([1, 2.5], dtype=float8_e4m3fnuz)
float8_e5m2fnuz:
    >>> pnp.float8_e5m2fnuz([1, 2.5])
    Array([1, 2.5], dtype=float8_e5m2fnuz)
float8_e4m3b11fnuz:
    >>> pnp.float8_e4m3b11fnuz([1, 2.5])
    Array([1, 2.5], dtype=float8_e4m3b11fnuz)
float6_e2m3fn:
    >>> pnp.float6_e2m3fn([1, 2.6])
    Array([1, 2.5], dtype=float6_e2m3fn)
float6_e3m2fn:
    >>> pnp.float6_e3m2fn([1, 2.6])
    Array([1, 2.5], dtype=float6_e3m2fn)
int1:
    >>> pnp.int1([0, -1])
    Array([0, -1], dtype=int1)
int2:
    >>> pnp.int2([1, -2])
    Array([1, -2], dtype=int2)
uint1:
    >>> pnp.uint1([0, 1])
    Array([0, 1], dtype=uint1)
uint2:
    >>> pnp.uint2([1, 3])
    Array([1, 3], dtype=uint2)
uint4:
    >>> pnp.uint4([1, 15])
    Array([1, 15], dtype=uint4)
float8_e8m0fnu: a power-of-two scale type (no zero, no sign), for MX block scales.
    >>> pnp.float8_e8m0fnu([1, 4, 0.25])
    Array([1, 4, 0.25], dtype=float8_e8m0fnu)
float4_e2m1fn: values round to the nearest of 0, 0.5, 1, 1.5, 2, 3, 4, 6 (saturating).
    >>> pnp.float4_e2m1fn([1.3, 2.6, 100.0])
    Array([1.5, 3, 6], dtype=float4_e2m1fn)
int4: integers of -8..7 (a value out of range is JAX's OverflowError).
    >>> pnp.int4([7, -8, 3])
    Array([7, -8, 3], dtype=int4)
bfloat16:
    >>> pnp.bfloat16([1, 2.5])
    Array([1, 2.5], dtype=bfloat16)
float16:
    >>> pnp.float16([1, 2.5])
    Array([1. , 2.5], dtype=float16)
float32:
    >>> pnp.float32([1, 2.5])
    Array([1. , 2.5], dtype=float32)
float64: ``float32`` arrays without x64 (as JAX), ``float64`` ones in x64 mode.
    >>> pnp.float64([1, 2.5])
    Array([1. , 2.5], dtype=float32)
complex64:
    >>> pnp.complex64([1, 2.5])
    Array([1. +0.j, 2.5+0.j], dtype=complex64)
complex128: ``complex64`` arrays without x64 (as JAX), ``complex128`` ones in x64 mode.
    >>> pnp.complex128([1, 2.5])
    Array([1. +0.j, 2.5+0.j], dtype=complex64)
""")
