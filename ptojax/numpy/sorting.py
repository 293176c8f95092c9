"""sort, argsort (stable; NaNs last) along an axis, or over the flattened array (axis=None);
sort_complex. Complex values sort by real part, then imaginary part."""
from __future__ import annotations

from ptojax import dtypes, lax
from ptojax.errors import ShapeError, UnsupportedError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, supported_dtype
from ptojax.source_info import user_frame


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
    """Indices (int32, or ``dtype``) that sort ``a``; equal elements keep their order, also
    descending."""
    a, axis = _operand("argsort", a, axis, order)
    index_dtype = supported_dtype(dtype, "argsort") if dtype is not None else dtypes.int32
    iota = lax.broadcasted_iota(index_dtype, a.shape, axis)
    if descending:  # stable descending order: sort the reversed array, map indices back
        _, idx = lax.sort((lax.rev(a, (axis,)), iota), dimension=axis, num_keys=1)
        return lax.rev(lax.sub(a.shape[axis] - 1, idx), (axis,))
    _, idx = lax.sort((a, iota), dimension=axis, num_keys=1)
    return idx


def lexsort(keys, axis=-1):
    """Indices (int32) that sort by several keys, the last one primary (stable)."""
    keys = [asarray(k, op="lexsort") for k in keys]
    if not keys:
        raise ShapeError("lexsort: at least one key is needed", user_frame())
    if any(tuple(k.shape) != tuple(keys[0].shape) for k in keys):
        raise ShapeError(f"lexsort: all keys must have one shape, got "
                         f"{', '.join(str(k.aval) for k in keys)}", user_frame())
    axis = normalize_axis("lexsort", axis, keys[0].ndim)
    iota = lax.broadcasted_iota(dtypes.int32, keys[0].shape, axis)
    return lax.sort((*reversed(keys), iota), dimension=axis, num_keys=len(keys))[-1]


def sort_complex(a):
    """``a`` sorted along its last axis, as complex values (integers and floats become
    complex64, or complex128 from 64-bit types, as in JAX)."""
    a = sort(a, axis=-1)
    return lax.convert_element_type(a, dtypes.complex_dtype(a.dtype))
