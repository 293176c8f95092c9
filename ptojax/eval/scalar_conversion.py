"""Which arrays Python's scalar conversions accept, decided as JAX decides it: from the shape
and dtype alone, before any value is needed, so an Array and a traced value (concrete or not)
get the same answer.

- ``int(x)``, ``float(x)``, ``complex(x)``: a 0-d array of any dtype (a shape-(1,) array is
  refused, as JAX refuses it; NumPy 2 refuses it too);
- ``bool(x)`` (``if``, ``while``, ``and``/``or``): an array of exactly one element, of any
  rank; an empty or many-element array is ambiguous (a ValueError, as NumPy's);
- ``operator.index(x)`` (``range(x)``, a list index, a slice bound): a 0-d array of an
  integer dtype; bool and floating arrays are refused.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import located
from ptojax.source_info import user_frame


def check_scalar_conversion(shape: tuple, to: str) -> None:
    """TypeError unless an array of ``shape`` can become a Python ``to`` (int/float/complex)."""
    if tuple(shape) != ():
        raise located(TypeError(
            f"only a 0-d (scalar) array converts to a Python {to}; got an array of shape "
            f"{tuple(shape)} (ndim={len(shape)}). Take one element first (x[0] or "
            f"x.reshape(())) or call x.item() on a one-element array"), user_frame())


def check_bool_conversion(shape: tuple) -> None:
    """ValueError unless an array of ``shape`` has exactly one element (its truth value)."""
    size = int(np.prod(shape, dtype=np.int64))
    if size != 1:
        which = "an empty array" if size == 0 else f"an array of {size} elements"
        raise located(ValueError(
            f"the truth value of {which} (shape {tuple(shape)}) is ambiguous: use "
            f"x.any() or x.all() in `if`/`while`/`and`/`or`, or x.size > 0 to test for "
            f"emptiness"), user_frame())


def check_index_conversion(shape: tuple, dtype) -> None:
    """TypeError unless an array of ``shape`` and ``dtype`` can be a Python index."""
    dtype = np.dtype(dtype)
    if tuple(shape) != () or not dtypes.is_integer(dtype) or dtype == np.bool_:
        raise located(TypeError(
            f"only a 0-d integer array converts to a Python index (range(), a list or tuple "
            f"index, a slice bound); got {dtype.name}{list(shape)}. Convert it first: int(x) "
            f"for a 0-d array, or x.astype(jnp.int32) for a bool or floating one"), user_frame())
