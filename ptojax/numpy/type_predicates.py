"""Questions about values and dtypes, answered without computing anything: ``isscalar``,
``iterable``, ``can_cast`` (NumPy's casting rules, as JAX) and the array-API ``isdtype``
(with JAX's kinds: its ml_dtypes floats are "real floating", int1/int2/int4 "signed integer")."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ptojax.eval.array import Array
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def _ml_dtypes(*names):
    return [np.dtype(getattr(ml_dtypes, n)) for n in names if hasattr(ml_dtypes, n)]


_SIGNED = [*_ml_dtypes("int1", "int2", "int4"), *map(np.dtype, ("int8", "int16", "int32", "int64"))]
_UNSIGNED = [*_ml_dtypes("uint1", "uint2", "uint4"),
             *map(np.dtype, ("uint8", "uint16", "uint32", "uint64"))]
_REAL = [*_ml_dtypes("bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
                     "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
                     "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"),
         *map(np.dtype, ("float16", "float32", "float64"))]
_COMPLEX = [np.dtype("complex64"), np.dtype("complex128")]
_KINDS = {"bool": {np.dtype(bool)}, "signed integer": set(_SIGNED),
          "unsigned integer": set(_UNSIGNED), "integral": {*_SIGNED, *_UNSIGNED},
          "real floating": set(_REAL), "complex floating": set(_COMPLEX),
          "numeric": {*_SIGNED, *_UNSIGNED, *_REAL, *_COMPLEX}}


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind``: a kind name ("bool", "signed integer", "unsigned
    integer", "integral", "real floating", "complex floating", "numeric"), a dtype, or a
    tuple of those."""
    the_dtype = np.dtype(dtype)
    options = set()
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str) and k in _KINDS:
            options |= _KINDS[k]
            continue
        try:
            options.add(np.dtype(k))
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(f"isdtype: unrecognized kind={k!r}; expected one of "
                                 f"{list(_KINDS)}, or a dtype") from None
            raise TypeError(f"isdtype: kind must be a dtype, a kind name or a tuple of "
                            f"them, got kind={k!r}") from e
    return the_dtype in options


def isscalar(element):
    """Whether ``element`` is a scalar: a Python or NumPy scalar, or a 0-d array."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Array, Tracer)):
        return element.ndim == 0
    return False


def can_cast(from_, to, casting="safe"):
    """Whether a value of dtype ``from_`` casts to ``to`` under the ``casting`` rule ("no",
    "equiv", "safe", "same_kind", "unsafe"): NumPy's answer, as in JAX."""
    return np.can_cast(from_, to, casting)


def iterable(y):
    """Whether ``y`` can be iterated over (NumPy's ``iterable``; a 0-d array cannot)."""
    return np.iterable(y)


__all__ = ["can_cast", "isdtype", "isscalar", "iterable"]


_add_examples(globals(), """
isdtype:
    >>> pnp.isdtype(pnp.float32, "real floating"), pnp.isdtype(pnp.int8, ("bool", "integral"))
    (True, True)
isscalar:
    >>> pnp.isscalar(1.0), pnp.isscalar(pnp.array(1.0)), pnp.isscalar(pnp.ones(2))
    (True, True, False)
can_cast:
    >>> pnp.can_cast(pnp.int8, pnp.int32), pnp.can_cast(pnp.float32, pnp.int32)
    (True, False)
iterable:
    >>> pnp.iterable([1, 2]), pnp.iterable(2)
    (True, False)
""")
