"""``lax.ragged_dot_general``: ``dot_general`` with one lhs dimension split into consecutive
groups of ``group_sizes`` elements, as JAX's three modes:

- the ragged dimension is a free lhs dimension: each group multiplies its own rhs slice along
  ``rhs_group_dimensions`` (``ragged_dot`` is the 2-D case); elements past the groups give 0;
- it is a contracting dimension: each group contracts over its own range only, and the result
  gets a leading group dimension;
- it is a batch dimension: the groups do not change the product (as JAX's CPU result).

Written like ``ragged_dot``: the lhs is broadcast along a new group axis with the elements
outside each group masked to zero, so autodiff and vmap come from ``dot_general`` and
``select``.
"""
from __future__ import annotations

import dataclasses

from ptojax import dtypes
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.arithmetic import sub
from ptojax.ops.broadcast import broadcast_in_dim, reduce_sum
from ptojax.ops.checks import user_axes
from ptojax.ops.convert import convert_element_type
from ptojax.ops.cumulative import cumsum
from ptojax.ops.linalg import dot_general
from ptojax.ops.logic import bitwise_and, ge, lt, select
from ptojax.ops.operand import as_operand
from ptojax.ops.shape import transpose
from ptojax.ops.slicing import broadcasted_iota, full
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


@dataclasses.dataclass(frozen=True, init=False)
class RaggedDotDimensionNumbers:
    """The dimensions of a ``ragged_dot_general``: ``dot_dimension_numbers`` (as
    ``dot_general``'s), the lhs ``lhs_ragged_dimensions`` (one) and the
    ``rhs_group_dimensions`` (one when the ragged dimension is a free one, else none)."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


def _group_mask(group_sizes, length: int):
    """``mask[..., g, i]``: element ``i`` of the ragged dimension is in group ``g`` (the
    leading dimensions of ``group_sizes``, if any, are the lhs batch dimensions)."""
    sizes = convert_element_type(group_sizes, dtypes.int32)
    nb = sizes.ndim - 1
    ends = cumsum(sizes, nb)
    starts = sub(ends, sizes)
    shape = (*sizes.shape, length)
    rows = broadcasted_iota(dtypes.int32, shape, nb + 1)
    keep = tuple(range(nb + 1))
    return bitwise_and(ge(rows, broadcast_in_dim(starts, shape, keep)),
                       lt(rows, broadcast_in_dim(ends, shape, keep)))


def _grouped_lhs(lhs, group_sizes, groups: int, ragged: int, batch):
    """``lhs`` along a new leading group axis, zero outside each group's range (per batch
    element when ``group_sizes`` has the lhs ``batch`` dimensions first)."""
    shape = (groups, *lhs.shape)
    mask = _group_mask(group_sizes, lhs.shape[ragged])
    # mask dims: (batch..., group, ragged) -> positions in ``shape``, in increasing order
    targets = [d + 1 for d in batch[:group_sizes.ndim - 1]] + [0, ragged + 1]
    order = sorted(range(len(targets)), key=targets.__getitem__)
    mask = broadcast_in_dim(transpose(mask, tuple(order)), shape,
                            tuple(targets[i] for i in order))
    return select(mask, broadcast_in_dim(lhs, shape, tuple(range(1, len(shape)))),
                  full(shape, 0, lhs.dtype))


def _check(lhs, rhs, group_sizes, dn):
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError(f"ragged_dot_general: ragged_dot_dimension_numbers must be a "
                        f"lax.RaggedDotDimensionNumbers, got {dn!r}")
    if len(dn.lhs_ragged_dimensions) != 1:
        raise ShapeError(f"ragged_dot_general: expected one lhs ragged dimension, got "
                         f"{dn.lhs_ragged_dimensions}", user_frame(3))
    if group_sizes.ndim < 1 or not dtypes.is_integer(group_sizes.dtype):
        raise TypeError(f"ragged_dot_general: group_sizes must be an integer array, got "
                        f"{group_sizes.dtype}{list(group_sizes.shape)}")
    batch = tuple(lhs.shape[d] for d in dn.dot_dimension_numbers[1][0])
    if group_sizes.ndim > 1 and tuple(group_sizes.shape[:-1]) != batch:
        raise TypeError(f"expected group_sizes to have shape {(*batch, group_sizes.shape[-1])}, "
                        f"got {tuple(group_sizes.shape)}.")


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """``dot_general`` with the lhs ragged dimension split into groups of ``group_sizes``
    (JAX's ``lax.ragged_dot_general``; ``group_sizes`` is ``(groups,)`` or has the lhs batch
    dimensions first; no ``group_offset``)."""
    del out_sharding   # one device
    check_arraylike("ragged_dot_general", lhs, rhs, group_sizes)
    lhs, rhs = as_operand("ragged_dot_general", lhs), as_operand("ragged_dot_general", rhs)
    group_sizes, dn = as_operand("ragged_dot_general", group_sizes), ragged_dot_dimension_numbers
    if group_offset is not None:
        raise UnsupportedError("ragged_dot_general: group_offset is not supported", user_frame())
    _check(lhs, rhs, group_sizes, dn)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    lc, lb = user_axes("ragged_dot_general", lc, lhs.ndim), user_axes("ragged_dot_general", lb, lhs.ndim)
    rc, rb = user_axes("ragged_dot_general", rc, rhs.ndim), user_axes("ragged_dot_general", rb, rhs.ndim)
    ragged = user_axes("ragged_dot_general", dn.lhs_ragged_dimensions, lhs.ndim)[0]
    group_dims = user_axes("ragged_dot_general", dn.rhs_group_dimensions, rhs.ndim)
    groups = group_sizes.shape[-1]
    plain = (((lc), (rc)), ((lb), (rb)))
    if ragged in lb or ragged in lc:
        if group_dims:
            raise ShapeError(f"ragged_dot_general: a ragged {'batch' if ragged in lb else 'contracting'} "
                             f"dimension takes no rhs group dimensions, got {group_dims}", user_frame())
        if ragged in lb:
            return dot_general(lhs, rhs, plain, precision, preferred_element_type)
        grouped = _grouped_lhs(lhs, group_sizes, groups, ragged, lb)
        shift = tuple(d + 1 for d in lc), tuple(d + 1 for d in lb)
        out = dot_general(grouped, rhs, ((shift[0], rc), (shift[1], rb)), precision,
                          preferred_element_type)
        nb = len(lb)   # the group axis follows the batch dims: move it to the front
        return transpose(out, (nb, *range(nb), *range(nb + 1, out.ndim)))
    if len(group_dims) != 1:
        raise ShapeError(f"ragged_dot_general: a ragged free dimension needs one rhs group "
                         f"dimension, got {group_dims}", user_frame())
    if rhs.shape[group_dims[0]] != groups:
        raise TypeError(f"expected rhs group dimension size to be {groups}, got "
                        f"{rhs.shape[group_dims[0]]}.")
    grouped = _grouped_lhs(lhs, group_sizes, groups, ragged, lb)
    out = dot_general(grouped, rhs, ((tuple(d + 1 for d in lc), rc),
                                     ((0, *(d + 1 for d in lb)), (group_dims[0], *rb))),
                      precision, preferred_element_type)
    return reduce_sum(out, (0,))


_add_examples(globals(), """
RaggedDotDimensionNumbers:
    >>> dn = pto.lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), [0], [0])
    >>> dn.rhs_group_dimensions
    (0,)
ragged_dot_general:
    >>> dn = pto.lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), ((), ())),
    ...                                        lhs_ragged_dimensions=[0], rhs_group_dimensions=[0])
    >>> lhs = pnp.arange(8.0).reshape(4, 2)
    >>> rhs = pnp.stack([pnp.eye(2), 2 * pnp.eye(2)])
    >>> pto.lax.ragged_dot_general(lhs, rhs, pnp.array([1, 2]), dn)
    Array([[ 0.,  1.],
           [ 4.,  6.],
           [ 8., 10.],
           [ 0.,  0.]], dtype=float32)
""")
