"""``lax.scatter_apply``: ``func`` applied to the elements of ``operand`` that a scatter with
these indices would update, once per update that lands on an element (as XLA's scatter with
``func`` as its combiner: an element hit twice gets ``func(func(x))``).

Written with the primitives' functions: ``scatter_add`` counts the updates that land on each
element, and a ``while_loop`` applies ``func`` (vmapped over the elements, so it sees scalars
as in JAX) to the elements whose count exceeds the round. jit and vmap come from those;
JAX has no derivative for it, and reverse-mode here stops at the ``while_loop`` as well.
"""
from __future__ import annotations

from ptojax import dtypes
from ptojax.batching.api import vmap
from ptojax.control_flow.loops import while_loop
from ptojax.errors import DtypeError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.arithmetic import add
from ptojax.ops.logic import gt, lt, select
from ptojax.ops.operand import as_operand
from ptojax.ops.reductions import reduce_max
from ptojax.ops.shape import reshape
from ptojax.ops.slicing import full
from ptojax.ops.windowed_indexing import scatter_add
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
    """``func`` applied to the elements of ``operand`` a scatter of ``update_shape`` updates
    at ``scatter_indices`` would touch (JAX's ``lax.scatter_apply``), once per update."""
    check_arraylike("scatter_apply", operand, scatter_indices)
    operand = as_operand("scatter_apply", operand)
    shape = tuple(operand.shape)
    counts = scatter_add(full(shape, 0, dtypes.int32), scatter_indices,
                         full(tuple(update_shape), 1, dtypes.int32), dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode)
    size = 1
    for d in shape:
        size *= d

    def apply(x):
        out = reshape(vmap(func)(reshape(x, (size,))), shape)
        if out.dtype != x.dtype:
            raise DtypeError(f"scatter_apply: func must keep the operand's dtype "
                             f"{dtypes.short_name(x.dtype)}, it returned "
                             f"{dtypes.short_name(out.dtype)}", user_frame(4))
        return out

    def more(state):
        return lt(state[0], reduce_max(counts, tuple(range(len(shape)))))

    def round_(state):
        k, x = state
        return add(k, 1), select(gt(counts, k), apply(x), x)

    if size == 0:
        return operand
    return while_loop(more, round_, (full((), 0, dtypes.int32), operand))[1]


_add_examples(globals(), """
scatter_apply:
    >>> dn = pto.lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                                      scatter_dims_to_operand_dims=(0,))
    >>> pto.lax.scatter_apply(pnp.arange(5.0), pnp.array([[1], [3], [1]]), lambda v: 2 * v + 1,
    ...                       dn, update_shape=(3,))
    Array([0., 7., 2., 7., 4.], dtype=float32)
""")
