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
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]
__dir__ = dir_function(__all__)
