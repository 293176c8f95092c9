"""``lax.scaled_dot``: ``(lhs * lhs_scale) @ (rhs * rhs_scale)`` (a ``dot_general``) where each
scale element covers a block ("subchannel") of consecutive elements along the contracting
dimensions, as the block-scaled (MX) formats use. As JAX's decomposition: the scales are
repeated over their blocks, operands and scales are rounded to bfloat16 and multiplied, and
the ``dot_general`` returns ``preferred_element_type`` (bfloat16 by default). Written with the
primitives' functions, so jit, vmap and (unlike JAX) grad come from them.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.arithmetic import mul
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.convert import convert_element_type
from ptojax.ops.linalg import dot_general
from ptojax.ops.operand import as_operand
from ptojax.ops.shape import reshape
from ptojax.ops.slicing import full
from ptojax.public import add_examples as _add_examples

_BF16 = dtypes.bfloat16


def _check_scale(side, operand, scale, contracting):
    for i, size in enumerate(operand.shape):
        if i in contracting:
            if size % scale.shape[i]:
                raise TypeError(f"{side} contracting dim {i} of size {size} must be divisible "
                                f"by its scale's dim size {scale.shape[i]}.")
            if size // scale.shape[i] < 2:
                raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's dim "
                                f"size ({size // scale.shape[i]}) must be at least 2.")
        elif scale.shape[i] != size:
            raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size "
                            f"{scale.shape[i]}.")


def _check(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    ranks = {lhs.ndim, rhs.ndim, lhs_scale.ndim, rhs_scale.ndim}
    if len(ranks) != 1:
        raise TypeError(f"All input tensors must have the same rank. Got lhs rank: {lhs.ndim} "
                        f"rhs rank: {rhs.ndim} lhs_scale rank: {lhs_scale.ndim} rhs_scale "
                        f"rank: {rhs_scale.ndim}.")
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise TypeError(f"LHS and RHS must have as many batch and contracting dimensions, got "
                        f"{dimension_numbers}")
    for i, j in zip(lb, rb):
        if len({lhs.shape[i], rhs.shape[j], lhs_scale.shape[i], rhs_scale.shape[j]}) != 1:
            raise TypeError(f"All input tensors must have the same batch dimension size for "
                            f"batch dims ({i}, {j}).")
    for i, j in zip(lc, rc):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(f"LHS contracting dim {i} of size {lhs.shape[i]} does not match RHS "
                            f"contracting dim {j} of size {rhs.shape[j]}.")
    _check_scale("LHS", lhs, lhs_scale, lc)
    _check_scale("RHS", rhs, rhs_scale, rc)


def _repeat_blocks(scale, shape, contracting):
    """``scale`` with each element repeated over its block along the contracting dims."""
    for i in contracting:
        if scale.shape[i] != shape[i]:
            block = shape[i] // scale.shape[i]
            wide = (*scale.shape[:i + 1], block, *scale.shape[i + 1:])
            kept = tuple(d if d <= i else d + 1 for d in range(scale.ndim))
            scale = reshape(broadcast_in_dim(scale, wide, kept),
                            (*scale.shape[:i], shape[i], *scale.shape[i + 1:]))
    return scale


def _scaled(operand, scale, contracting):
    scale = _repeat_blocks(convert_element_type(scale, _BF16), operand.shape, contracting)
    return mul(convert_element_type(operand, _BF16), scale)


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """``dot_general(lhs * lhs_scale, rhs * rhs_scale)`` with block scales along the
    contracting dimensions, in bfloat16 (JAX's ``lax.scaled_dot``; differentiable here)."""
    check_arraylike("scaled_dot", lhs, rhs)
    lhs, rhs = as_operand("scaled_dot", lhs), as_operand("scaled_dot", rhs)
    if dimension_numbers is None:
        if lhs.ndim < 2:
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        n = lhs.ndim
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in dims) for dims in (lc, rc, lb, rb))
    dimension_numbers = ((lc, rc), (lb, rb))
    if lhs_scale is None:
        lhs_scale = full(tuple(1 if i in lc else d for i, d in enumerate(lhs.shape)), 1, _BF16)
    if rhs_scale is None:
        rhs_scale = full(tuple(1 if i in rc else d for i, d in enumerate(rhs.shape)), 1, _BF16)
    lhs_scale, rhs_scale = as_operand("scaled_dot", lhs_scale), as_operand("scaled_dot", rhs_scale)
    _check(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers)
    out = np.dtype(_BF16) if preferred_element_type is None else \
        dtypes.user_dtype(preferred_element_type, "scaled_dot")
    return dot_general(_scaled(lhs, lhs_scale, lc), _scaled(rhs, rhs_scale, rc),
                       dimension_numbers, preferred_element_type=out)


_add_examples(globals(), """
scaled_dot:
    >>> lhs, rhs = pnp.ones((2, 4)), pnp.ones((4, 3))
    >>> scale = pnp.array([[1.0, 2.0], [0.5, 0.5]])    # one per block of 2 along K
    >>> pto.lax.scaled_dot(lhs, rhs, lhs_scale=scale, rhs_scale=pnp.ones((2, 3)))
    Array([[6, 6, 6],
           [2, 2, 2]], dtype=bfloat16)
""")
