"""NumPy's in-place writers as functions returning the updated array: ``put``,
``put_along_axis``, ``place``. ptojax arrays are immutable, so each requires
``inplace=False`` (a ValueError otherwise, as in JAX)."""
from __future__ import annotations

from ptojax import dtypes
from ptojax.errors import ShapeError, UnsupportedError, located
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, broadcast_to_shape, convert
from ptojax.numpy import math as ew
from ptojax.numpy.index_tricks import indices as _indices, unravel_index
from ptojax.numpy.manipulation import ravel, reshape, tile
from ptojax.numpy.searching import nonzero
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def _immutable(op):
    return located(ValueError(f"{op}: ptojax arrays are immutable, so they cannot be modified "
                              f"in place; pass inplace=False and use the returned array"),
                   user_frame())


def _tile_to_size(flat, size):
    """The 1-D ``flat`` repeated (and cut) to ``size`` entries."""
    if flat.shape[0] < size:
        flat = tile(flat, -(-size // flat.shape[0]))
    return flat[:size] if flat.shape[0] > size else flat


def put(a, ind, v, mode=None, *, inplace=True):
    """``a`` with the flat positions ``ind`` set to ``v`` (repeated as needed). ``mode``:
    None (out-of-range positions dropped), "clip" or "wrap"."""
    if inplace:
        raise _immutable("put")
    arr = asarray(a, op="put")
    ind = ravel(asarray(ind, op="put"))
    v = ravel(asarray(v, op="put"))
    if not arr.size or not ind.size or not v.size:
        return arr
    v = _tile_to_size(v, ind.shape[0])
    if mode is None:
        write = "drop"
    elif mode == "clip":
        ind, write = ew.clip(ind, 0, arr.size - 1), "promise_in_bounds"
    elif mode == "wrap":
        ind, write = ew.remainder(ind, arr.size), "promise_in_bounds"
    elif mode == "raise":
        raise UnsupportedError("put: mode='raise' is not supported (as in JAX); use 'clip' "
                               "or 'wrap'", user_frame())
    else:
        raise located(ValueError(f"put: mode must be 'wrap' or 'clip', got {mode!r}"),
                      user_frame())
    return arr.at[unravel_index(ind, arr.shape)].set(v, mode=write)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse of
    ``take_along_axis``); ``axis=None`` works on the flattened array."""
    if inplace:
        raise _immutable("put_along_axis")
    arr = asarray(arr, op="put_along_axis")
    indices = asarray(indices, op="put_along_axis")
    values = asarray(values, op="put_along_axis")
    shape = tuple(arr.shape)
    if axis is None:
        arr, axis = ravel(arr), 0
    if arr.ndim != indices.ndim:
        raise ShapeError(f"put_along_axis: arr and indices must have the same rank, got "
                         f"{arr.aval} and {indices.aval}", user_frame())
    axis = normalize_axis("put_along_axis", axis, arr.ndim)
    values = broadcast_to_shape(values, tuple(indices.shape), "put_along_axis")
    index = list(_indices(arr.shape, sparse=True))
    index[axis] = indices
    out = arr.at[tuple(index)].set(values, mode=mode)
    return reshape(out, shape)


def place(arr, mask, vals, *, inplace=True):
    """``arr`` with the positions where ``mask`` holds set to ``vals`` in order (repeated
    as needed)."""
    data = asarray(arr, op="place")
    mask = asarray(mask, op="place")
    vals = ravel(asarray(vals, op="place"))
    if inplace:
        raise _immutable("place")
    if data.size != mask.size:
        raise ShapeError(f"place: arr and mask must have the same size, got {data.aval} and "
                         f"{mask.aval}", user_frame())
    if not vals.size:
        raise located(ValueError("place: cannot place values from an empty array"),
                      user_frame())
    if not data.size:
        return data
    flat_mask = ravel(mask)
    if flat_mask.dtype != dtypes.bool_:
        flat_mask = ew.not_equal(flat_mask, convert(0, flat_mask.dtype))
    where = nonzero(flat_mask, size=mask.size, fill_value=mask.size)[0]
    vals = _tile_to_size(vals, where.shape[0])
    return reshape(ravel(data).at[where].set(vals, mode="drop"), tuple(data.shape))


__all__ = ["place", "put", "put_along_axis"]


_add_examples(globals(), """
put:
    >>> pnp.put(pnp.zeros(5, dtype=pnp.int32), pnp.array([0, 3]), pnp.array([7, 8]),
    ...         inplace=False)
    Array([7, 0, 0, 8, 0], dtype=int32)
put_along_axis:
    >>> pnp.put_along_axis(pnp.zeros((2, 3), dtype=pnp.int32), pnp.array([[2], [0]]), 9,
    ...                    axis=1, inplace=False)
    Array([[0, 0, 9],
           [9, 0, 0]], dtype=int32)
place:
    >>> pnp.place(pnp.zeros(4, dtype=pnp.int32), pnp.array([True, False, True, True]),
    ...           pnp.array([1, 2]), inplace=False)
    Array([1, 0, 2, 1], dtype=int32)
""")
