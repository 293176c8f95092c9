"""sort, argsort (stable; NaNs last) along an axis, or over the flattened array (axis=None);
partition and argpartition (as JAX: built on ``lax.top_k``); sort_complex. Complex values
sort by real part, then imaginary part."""
from __future__ import annotations

from ptojax import dtypes, lax
from ptojax.errors import IndexingError, ShapeError, UnsupportedError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, supported_dtype
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def _operand(op, a, axis, order):
    if order is not None:
        raise UnsupportedError(f"{op}: order= (sorting by record fields) is not supported",
                               user_frame())
    a = asarray(a, op=op)
    if axis is None:
        return lax.reshape(a, (a.size,)), 0
    return a, normalize_axis(op, axis, a.ndim)


def sort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    a, axis = _operand("sort", a, axis, order)
    out = lax.sort(a, dimension=axis)
    return lax.rev(out, (axis,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """Indices (int32, int64 in x64 mode, or ``dtype``) that sort ``a``; equal elements keep their order, also
    descending."""
    a, axis = _operand("argsort", a, axis, order)
    index_dtype = supported_dtype(dtype, "argsort") if dtype is not None \
        else dtypes.default_int()
    iota = lax.broadcasted_iota(index_dtype, a.shape, axis)
    if descending:  # stable descending order: sort the reversed array, map indices back
        _, idx = lax.sort((lax.rev(a, (axis,)), iota), dimension=axis, num_keys=1)
        return lax.rev(lax.sub(a.shape[axis] - 1, idx), (axis,))
    _, idx = lax.sort((a, iota), dimension=axis, num_keys=1)
    return idx


def _partition_operand(op, a, kth, axis):
    """``a`` with ``axis`` moved last, and ``kth`` in 0..n-1 (negative counts from the end)."""
    a = asarray(a, op=op)
    if a.ndim == 0:
        raise UnsupportedError(f"{op}: a 0-d array has nothing to partition", user_frame())
    axis = normalize_axis(op, axis, a.ndim)
    n = a.shape[axis]
    if isinstance(kth, bool) or not isinstance(kth, int) or not -n <= kth < n:
        raise IndexingError(f"{op}: kth={kth!r} is out of bounds for axis {axis} of size {n}",
                            user_frame())
    return lax.transpose(a, _to_last(a.ndim, axis)), kth % n, axis


def _to_last(ndim, axis):
    return tuple(d for d in range(ndim) if d != axis) + (axis,)


def _from_last(x, ndim, axis):
    perm = _to_last(ndim, axis)
    return lax.transpose(x, tuple(perm.index(d) for d in range(ndim)))


def _descending_complement(a):
    """A key whose descending order is ``a``'s ascending order: ``-a``, or for unsigned
    integers ``-(a + 1)`` (which wraps, keeping 0 the largest key)."""
    if dtypes.is_unsigned(a.dtype):
        return lax.neg(lax.add(a, 1))
    return lax.neg(a)


def partition(a, kth, axis=-1):
    """``a`` with its ``kth`` smallest value at position ``kth`` along ``axis``, the smaller
    ones before it and the larger ones after (in JAX's arrangement: the smallest ``kth + 1``
    in descending order of their negation, then the rest in descending order)."""
    x, kth, axis = _partition_operand("partition", a, kth, axis)
    n = x.shape[-1]
    low = lax.neg(lax.top_k(_descending_complement(x), kth + 1)[0])
    if dtypes.is_unsigned(x.dtype):
        low = lax.sub(low, 1)
    high = lax.top_k(x, n - kth - 1)[0]
    return _from_last(lax.concatenate([low, high], x.ndim - 1), x.ndim, axis)


def argpartition(a, kth, axis=-1):
    """Indices (int32) that partition ``a`` as ``partition`` does: the ``kth + 1`` smallest
    first, then the others in increasing index order."""
    x, kth, axis = _partition_operand("argpartition", a, kth, axis)
    n = x.shape[-1]
    low = lax.top_k(_descending_complement(x), kth + 1)[1]
    # the others: every index not among ``low``, in increasing order (ties keep index order)
    picks = lax.broadcasted_iota(dtypes.int32, (*low.shape, n), x.ndim)
    chosen = lax.reduce_or(lax.eq(picks, lax.expand_dims(low, (x.ndim,))), (x.ndim - 1,))
    high = lax.top_k(lax.convert_element_type(lax.bitwise_not(chosen), dtypes.int32),
                     n - kth - 1)[1]
    return _from_last(lax.concatenate([low, high], x.ndim - 1), x.ndim, axis)


def lexsort(keys, axis=-1):
    """Indices (int32; int64 in x64 mode) that sort by several keys, the last one primary
    (stable)."""
    keys = [asarray(k, op="lexsort") for k in keys]
    if not keys:
        raise ShapeError("lexsort: at least one key is needed", user_frame())
    if any(tuple(k.shape) != tuple(keys[0].shape) for k in keys):
        raise ShapeError(f"lexsort: all keys must have one shape, got "
                         f"{', '.join(str(k.aval) for k in keys)}", user_frame())
    if keys[0].ndim == 0:   # scalar keys: one element, at index 0 (as NumPy and JAX)
        return lax.full((), 0, dtypes.default_int())
    axis = normalize_axis("lexsort", axis, keys[0].ndim)
    iota = lax.broadcasted_iota(dtypes.default_int(), keys[0].shape, axis)
    return lax.sort((*reversed(keys), iota), dimension=axis, num_keys=len(keys))[-1]


def sort_complex(a):
    """``a`` sorted along its last axis, as complex values (integers and floats become
    complex64, or complex128 from 64-bit types, as in JAX)."""
    a = sort(a, axis=-1)
    return lax.convert_element_type(a, dtypes.complex_dtype(a.dtype))


_add_examples(globals(), """
sort: ``a`` sorted along ``axis`` (the last by default; flattened if None), NaNs last;
    ``descending`` reverses, ``stable`` keeps ties in order.
    >>> pnp.sort(pnp.array([3, 1, 2]))
    Array([1, 2, 3], dtype=int32)
    >>> pnp.sort(pnp.array([[3, 1], [0, 2]]), axis=0)
    Array([[0, 1],
           [3, 2]], dtype=int32)
argsort:
    >>> pnp.argsort(pnp.array([3.0, 1.0, 2.0]))
    Array([1, 2, 0], dtype=int32)
lexsort:
    >>> pnp.lexsort((pnp.array([2, 1, 3]), pnp.array([1, 1, 0])))
    Array([2, 1, 0], dtype=int32)
sort_complex:
    >>> pnp.sort_complex(pnp.array([2 + 1j, 1 + 3j, 1 + 2j]))
    Array([1.+2.j, 1.+3.j, 2.+1.j], dtype=complex64)
partition:
    >>> pnp.partition(pnp.array([7, 2, 9, 1, 5]), 2)
    Array([1, 2, 5, 9, 7], dtype=int32)
argpartition:
    >>> pnp.argpartition(pnp.array([7, 2, 9, 1, 5]), 2)[:2]
    Array([3, 1], dtype=int32)
""")
