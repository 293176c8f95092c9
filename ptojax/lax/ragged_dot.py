"""``lax.ragged_dot``: a matrix product whose lhs rows come in consecutive groups, each
multiplied by its own rhs matrix (the grouped matmul of mixture-of-experts layers).

Written as one batched ``dot_general`` over the groups with every row outside a group masked
to zero, summed over the groups: each output row gets exactly its own group's product (the
other terms are exact zeros), and autodiff and vmap come from ``dot_general`` and ``select``.
It costs ``groups`` times a plain matmul; rows past the last group are zero, as in JAX.
"""
from __future__ import annotations

from ptojax import dtypes
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.broadcast import broadcast_in_dim, reduce_sum
from ptojax.ops.convert import convert_element_type
from ptojax.ops.cumulative import cumsum
from ptojax.ops.arithmetic import sub
from ptojax.ops.linalg import dot_general
from ptojax.ops.logic import bitwise_and, ge, lt, select
from ptojax.ops.slicing import broadcasted_iota, full
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def _check(lhs, rhs, group_sizes):
    if lhs.ndim != 2 or rhs.ndim != 3:
        raise ShapeError(f"ragged_dot: lhs must be (m, k) and rhs (groups, k, n), got "
                         f"{tuple(lhs.shape)} and {tuple(rhs.shape)}", user_frame(3))
    if group_sizes.ndim != 1 or not dtypes.is_integer(group_sizes.dtype):
        raise TypeError(f"ragged_dot: group_sizes must be a 1-D integer array, got "
                        f"{group_sizes.dtype}{list(group_sizes.shape)}")
    if rhs.shape[0] != group_sizes.shape[0]:
        raise TypeError(f"expected rhs group dimension size to be {group_sizes.shape[0]}, "
                        f"got {rhs.shape[0]}.")
    if lhs.shape[1] != rhs.shape[1]:
        raise TypeError(f"ragged_dot: contracting dimensions differ: lhs {tuple(lhs.shape)}, "
                        f"rhs {tuple(rhs.shape)}")


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None):
    """``out[i] = lhs[i] @ rhs[g]`` for the rows ``i`` of group ``g`` (the groups are
    consecutive runs of ``group_sizes[g]`` rows), as JAX's ``lax.ragged_dot``: lhs
    ``(m, k)``, rhs ``(groups, k, n)``, int ``group_sizes`` ``(groups,)`` -> ``(m, n)``."""
    check_arraylike("ragged_dot", lhs, rhs, group_sizes)
    if group_offset is not None:
        raise UnsupportedError("ragged_dot: group_offset is not supported", user_frame())
    _check(lhs, rhs, group_sizes)
    groups, (m, k) = rhs.shape[0], lhs.shape
    sizes = convert_element_type(group_sizes, dtypes.int32)
    ends = cumsum(sizes, 0)
    starts = sub(ends, sizes)
    rows = broadcasted_iota(dtypes.int32, (groups, m), 1)
    inside = bitwise_and(ge(rows, broadcast_in_dim(starts, (groups, m), (0,))),
                         lt(rows, broadcast_in_dim(ends, (groups, m), (0,))))
    grouped = broadcast_in_dim(lhs, (groups, m, k), (1, 2))
    masked = select(broadcast_in_dim(inside, (groups, m, k), (0, 1)), grouped,
                    full((groups, m, k), 0, lhs.dtype))
    products = dot_general(masked, rhs, (((2,), (1,)), ((0,), (0,))), precision,
                           preferred_element_type)
    return reduce_sum(products, (0,))


_add_examples(globals(), """
ragged_dot:
    >>> lhs = pnp.arange(8.0).reshape(4, 2)
    >>> rhs = pnp.stack([pnp.eye(2), 2 * pnp.eye(2)])
    >>> pto.lax.ragged_dot(lhs, rhs, pnp.array([1, 2]))
    Array([[ 0.,  1.],
           [ 4.,  6.],
           [ 8., 10.],
           [ 0.,  0.]], dtype=float32)
""")
