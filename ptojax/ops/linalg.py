"""``dot_general``: contraction over paired dimensions with optional batch dimensions.

Output dimensions are (batch..., lhs free..., rhs free...), as in XLA. f16/bf16 operands are
multiplied with f32 accumulation, as the cube unit does.
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.errors import ShapeError
from ptojax.ir.types import TensorType
from ptojax.ops.checks import check_axes, require_same_dtype
from ptojax.trace import Primitive


def _free_dims(ndim, *used):
    taken = {d for group in used for d in group}
    return [d for d in range(ndim) if d not in taken]


def _dot_general_abstract(lhs, rhs, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    require_same_dtype("dot_general", (lhs, rhs))
    check_axes("dot_general", (*lc, *lb), lhs.ndim)
    check_axes("dot_general", (*rc, *rb), rhs.ndim)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"dot_general: contracting {dimension_numbers[0]} and batch "
                         f"{dimension_numbers[1]} dimensions must pair up")
    for a, b in (*zip(lc, rc), *zip(lb, rb)):
        if lhs.shape[a] != rhs.shape[b]:
            raise ShapeError(f"dot_general: dimension {a} of {lhs} (size {lhs.shape[a]}) "
                             f"does not match dimension {b} of {rhs} (size {rhs.shape[b]})")
    shape = ([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb)]
             + [rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)])
    out_dtype = dtypes.canonicalize(preferred_element_type or lhs.dtype)
    return TensorType(shape, out_dtype, lhs.weak_type and rhs.weak_type)


def _dot_general(lhs, rhs, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = np.dtype(preferred_element_type or lhs.dtype)
    compute = lhs.dtype
    if compute in (dtypes.float16, dtypes.bfloat16) or compute in dtypes.FLOAT8:
        compute = np.dtype(np.float32)
        lhs, rhs = lhs.astype(compute), rhs.astype(compute)
    elif dtypes.is_bool(compute):
        lhs, rhs = lhs.astype(np.int32), rhs.astype(np.int32)
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    if not lb and lhs.ndim == 2 and rhs.ndim == 2 and lc == (1,) and rc == (0,):
        out = lhs @ rhs
    else:
        batch = [lhs.shape[d] for d in lb]
        m = [lhs.shape[d] for d in lf]
        n = [rhs.shape[d] for d in rf]
        k = math.prod(lhs.shape[d] for d in lc)
        a = np.transpose(lhs, (*lb, *lf, *lc)).reshape(math.prod(batch), math.prod(m), k)
        b = np.transpose(rhs, (*rb, *rc, *rf)).reshape(math.prod(batch), k, math.prod(n))
        out = np.matmul(a, b).reshape(batch + m + n)
    return out if out.dtype == out_dtype else out.astype(out_dtype)


dot_general_p = Primitive("dot_general", _dot_general_abstract, _dot_general)
