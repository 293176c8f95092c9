"""``jax_debug_nans`` / ``jax_debug_infs``: with them on, an operation whose floating-point
result holds a NaN (an infinity) raises ``FloatingPointError`` naming the operation, as JAX.

Eager operations are checked as they run (``eager.apply_eager``); a ``jit`` call checks its
outputs and, on a hit, runs the function again op by op to name the operation (``jit.py``).
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import PtoError
from ptojax.scoped_options import DEBUG_INFS, DEBUG_NANS


class InvalidValueError(PtoError, FloatingPointError):
    """A NaN or infinity produced while ``jax_debug_nans`` / ``jax_debug_infs`` is on."""


def invalid_kind(values) -> str | None:
    """``"nan"`` or ``"inf"`` if one of the floating-point ``values`` (numpy arrays or
    Arrays) holds what this thread's options look for, else None."""
    nans, infs = DEBUG_NANS.get(), DEBUG_INFS.get()
    if not (nans or infs):
        return None
    for v in values:
        dtype = getattr(v, "dtype", None)
        if dtype is None or not dtypes.is_inexact(dtype):
            continue
        a = np.asarray(v)
        if dtype not in (np.float32, np.float64, np.complex64, np.complex128, np.float16):
            a = a.astype(np.complex64 if dtypes.is_complex(dtype) else np.float32)
        if nans and np.isnan(a).any():
            return "nan"
        if infs and np.isinf(a).any():
            return "inf"
    return None


def invalid_value_error(kind: str, where: str, source=None) -> InvalidValueError:
    return InvalidValueError(f"invalid value ({kind}) encountered in {where}", source)


def check_outputs(name: str, values, source=None) -> None:
    """Raise ``InvalidValueError`` if an output of operation ``name`` is a NaN/inf looked for."""
    kind = invalid_kind(values)
    if kind is not None:
        raise invalid_value_error(kind, name, source)
