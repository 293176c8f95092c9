"""Static type annotations, as ``jax.typing``: ``ArrayLike`` (anything ``ptojax.numpy``
converts to an array implicitly) and ``DTypeLike`` (anything naming a dtype).

    def f(x: ArrayLike, dtype: DTypeLike | None = None) -> pto.Array: ...
"""
from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from ptojax.eval.array import Array
from ptojax.public import dir_function


class SupportsDType(Protocol):
    """An object with a ``dtype`` attribute (a ``ShapeDtypeStruct``, an array)."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
ArrayLike.__doc__ = """A value ptojax.numpy converts to an array implicitly: an Array, a numpy
array or scalar, a Python bool/int/float/complex.

Example:
  >>> isinstance(pnp.ones(2), pto.typing.ArrayLike), isinstance([1], pto.typing.ArrayLike)
  (True, False)
"""
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
DTypeLike.__doc__ = """A value naming a dtype: a string, a scalar type, a numpy dtype, an object
with a ``dtype``.

Example:
  >>> isinstance("float32", pto.typing.DTypeLike.__args__[0])
  True
"""

__all__ = ["ArrayLike", "DTypeLike"]
__dir__ = dir_function(__all__)
