"""The array operand of a lax-level function, as ``jax.lax`` takes it: a list or tuple is
refused (``check_arraylike``); a Python scalar becomes a weakly typed 0-d Array of its default
dtype, so the function reads its shape and rank as an array's (``lax.broadcast(1.0, (3,))``
is a weak f32[3], as JAX's). numpy values keep their shape and are captured by bind."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.eval.array import Array
from ptojax.eval.leaves import check_arraylike


def as_operand(op: str, x):
    """``x`` as an operand of ``op`` whose shape can be read."""
    check_arraylike(op, x)
    if type(x) in dtypes.PYTHON_SCALARS:
        return Array(np.asarray(x, dtypes.python_scalar_dtype(x)),
                     weak_type=dtypes.python_scalar_is_weak(x))
    return x
