"""``lax.ragged_all_to_all``: every device along a named axis sends ragged row slices of its
``operand`` to the others and writes the slices it receives into its ``output``.

With ``K`` offsets and an axis of size ``n``, slice ``i`` (rows ``input_offsets[i]`` up to
``+ send_sizes[i]``) goes to device ``i // (K // n)``, which writes it at the row the sender
gives in ``output_offsets[i]``, for as many rows as the receiver's ``recv_sizes`` entry of
that slice says (the receiver's entry ``s * (K // n) + k`` is the ``k``-th slice from device
``s``).

Written with ``all_gather`` (every device sees the senders' operands and offsets) and, per
incoming slice, a masked row gather into the output, so it runs wherever the other
collectives run (``vmap(axis_name=)``, ``pmap``, ``shard_map``) and differentiates through
them. It moves ``n`` times the data a real ragged all-to-all moves. JAX's CPU backend does
not implement this collective (it raises at run time), so the semantics are JAX's documented
ones, tested against a direct NumPy transcription of them.
"""
from __future__ import annotations

from ptojax import dtypes
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.arithmetic import add, mul, sub
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.convert import convert_element_type
from ptojax.ops.logic import bitwise_and, ge, lt, select
from ptojax.ops.operand import as_operand
from ptojax.ops.shape import reshape
from ptojax.ops.slicing import broadcasted_iota, index_in_dim
from ptojax.ops.dynamic_slicing import dynamic_index_in_dim
from ptojax.ops.windowed_indexing import GatherDimensionNumbers, gather
from ptojax.shard.collectives import all_gather, axis_index, axis_size
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples

_I32 = dtypes.int32


def _check(operand, output, offsets, n: int):
    if operand.ndim < 1 or output.ndim != operand.ndim or \
            tuple(operand.shape[1:]) != tuple(output.shape[1:]):
        raise ShapeError(f"ragged_all_to_all: operand and output must have the same shape "
                         f"after their first dimension, got {tuple(operand.shape)} and "
                         f"{tuple(output.shape)}", user_frame(3))
    if operand.dtype != output.dtype:
        raise TypeError(f"ragged_all_to_all: operand and output must have the same dtype, got "
                        f"{operand.dtype} and {output.dtype}")
    shapes = {tuple(o.shape) for o in offsets}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1:
        raise ShapeError(f"ragged_all_to_all: the offsets and sizes must be 1-D arrays of one "
                         f"length, got shapes {[tuple(o.shape) for o in offsets]}", user_frame(3))
    if any(not dtypes.is_integer(o.dtype) for o in offsets):
        raise TypeError("ragged_all_to_all: the offsets and sizes must be integer arrays")
    if next(iter(shapes))[0] % n:
        raise ShapeError(f"ragged_all_to_all: the number of slices {next(iter(shapes))[0]} "
                         f"must be divisible by the axis size {n}", user_frame(3))


def _rows(source, starts):
    """``source[starts[p]]`` for every row ``p`` (indices clipped into range)."""
    dn = GatherDimensionNumbers(offset_dims=tuple(range(1, source.ndim)),
                                collapsed_slice_dims=(0,), start_index_map=(0,))
    return gather(source, reshape(starts, (starts.shape[0], 1)), dn,
                  (1, *source.shape[1:]), mode="clip")


def _scalar(x, i):
    """``x[i]`` for a 1-D ``x`` and a static or traced index, as an int32 scalar."""
    picked = index_in_dim(x, i, 0, False) if isinstance(i, int) else \
        dynamic_index_in_dim(x, i, 0, False)
    return convert_element_type(picked, _I32)


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
    """``output`` with the ragged row slices other devices send it written in (JAX's
    ``lax.ragged_all_to_all``; no ``axis_index_groups``)."""
    if axis_index_groups is not None:
        raise UnsupportedError("ragged_all_to_all: axis_index_groups is not supported",
                               user_frame())
    check_arraylike("ragged_all_to_all", operand, output, input_offsets, send_sizes,
                    output_offsets, recv_sizes)
    operand, output = as_operand("ragged_all_to_all", operand), \
        as_operand("ragged_all_to_all", output)
    offsets = [as_operand("ragged_all_to_all", o)
               for o in (input_offsets, send_sizes, output_offsets, recv_sizes)]
    n = axis_size(axis_name)
    _check(operand, output, offsets, n)
    input_offsets, _, output_offsets, recv_sizes = offsets
    per_device = input_offsets.shape[0] // n
    operands = all_gather(operand, axis_name)            # (n, N, ...)
    starts_in = all_gather(input_offsets, axis_name)     # (n, K)
    starts_out = all_gather(output_offsets, axis_name)   # (n, K)
    me = convert_element_type(axis_index(axis_name), _I32)
    rows = broadcasted_iota(_I32, (output.shape[0],), 0)
    result = output
    for s in range(n):
        source = index_in_dim(operands, s, 0, False)
        for k in range(per_device):
            slot = add(mul(me, per_device), k)    # the sender's slice index for me
            start = _scalar(index_in_dim(starts_out, s, 0, False), slot)
            size = _scalar(recv_sizes, s * per_device + k)
            begin = _scalar(index_in_dim(starts_in, s, 0, False), slot)
            inside = bitwise_and(ge(rows, start), lt(rows, add(start, size)))
            taken = _rows(source, add(sub(rows, start), begin))
            mask = broadcast_in_dim(inside, result.shape, (0,))
            result = select(mask, taken, result)
    return result


_add_examples(globals(), """
ragged_all_to_all:
    >>> operand = pnp.array([[1.0, 2.0, 2.0], [3.0, 4.0, 0.0]])   # one row per device
    >>> output = pnp.zeros((2, 4))
    >>> f = lambda *a: pto.lax.ragged_all_to_all(*a, axis_name="i")
    >>> pto.vmap(f, axis_name="i")(operand, output, pnp.array([[0, 1], [0, 1]]),
    ...     pnp.array([[1, 2], [1, 1]]), pnp.array([[0, 0], [1, 2]]), pnp.array([[1, 1], [2, 1]]))
    Array([[1., 3., 0., 0.],
           [2., 2., 4., 0.]], dtype=float32)
""")
