"""Index helpers: ``indices``, ``ix_``, ``diag_indices(_from)``, ``tril_indices(_from)``,
``triu_indices(_from)``, ``unravel_index``, ``ravel_multi_index``, ``fill_diagonal``,
``diagflat``. Index results are int32 (int64 in x64 mode; DESIGN.md, "Numerics decisions");
the triangle and diagonal indices depend only on static sizes, so they are constants."""
from __future__ import annotations

import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ConcretizationError, DtypeError, IndexingError, ShapeError
from ptojax.eval.array import Array
from ptojax.numpy._promote import asarray, convert, result_type, supported_dtype
from ptojax.eval.leaves import check_arraylike
from ptojax.numpy import math as ew
from ptojax.numpy.creation import ones, zeros
from ptojax.numpy.manipulation import ravel, tile
from ptojax.numpy.reductions import any as _any
from ptojax.numpy.searching import nonzero
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def _static_int(name, what, v) -> int:
    if isinstance(v, Tracer):
        raise ConcretizationError(f"{name}: {what} must be a static int (it sets a shape)",
                                  user_frame())
    return operator.index(v)


def indices(dimensions, dtype=None, sparse=False):
    """The index of each position of a grid of shape ``dimensions``: one array per axis,
    stacked (or, ``sparse=True``, a tuple of broadcastable arrays)."""
    dtype = supported_dtype(dtype, "indices") if dtype is not None \
        else dtypes.default_int()
    dims = tuple(_static_int("indices", "dimensions", d) for d in dimensions)
    out = []
    for i, n in enumerate(dims):
        shape = (1,) * i + (n,) + (1,) * (len(dims) - i - 1) if sparse else dims
        out.append(lax.broadcast_in_dim(lax.iota(dtype, n), shape, (i,)))
    if sparse:
        return tuple(out)
    if not out:
        return zeros((0,), dtype)
    return lax.concatenate([lax.expand_dims(o, (0,)) for o in out], 0)


def ix_(*args):
    """An open mesh: the i-th 1-D argument shaped to vary along axis i only."""
    out = []
    for i, a in enumerate(args):
        a = asarray(a, op="ix_")
        if a.ndim != 1:
            raise ShapeError(f"ix_: arguments must be 1-D, got {a.aval}", user_frame())
        if a.dtype == dtypes.bool_:
            raise DtypeError("ix_: boolean arguments are not supported; use "
                             "pnp.nonzero(mask)[0]", user_frame())
        shape = [1] * len(args)
        shape[i] = a.shape[0]
        if a.size == 0:
            a = convert(a, dtypes.int32)
        out.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))
    return tuple(out)


def _constant(values):
    return Array(np.asarray(values, dtypes.default_int()))


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``ndim``-dimensional array of side ``n``."""
    n, ndim = _static_int("diag_indices", "n", n), _static_int("diag_indices", "ndim", ndim)
    if n < 0 or ndim < 0:
        raise ShapeError(f"diag_indices: n and ndim must be non-negative, got {n} and {ndim}",
                         user_frame())
    return (lax.iota(dtypes.default_int(), n),) * ndim


def diag_indices_from(arr):
    arr = asarray(arr, op="diag_indices_from")
    if arr.ndim < 2 or len(set(arr.shape)) != 1:
        raise ShapeError(f"diag_indices_from: the array must be at least 2-D with equal "
                         f"sides, got {arr.aval}", user_frame())
    return diag_indices(arr.shape[0], arr.ndim)


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (diagonal ``k``) of an n x m array."""
    n, k = _static_int("tril_indices", "n", n), _static_int("tril_indices", "k", k)
    m = n if m is None else _static_int("tril_indices", "m", m)
    return tuple(_constant(i) for i in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (diagonal ``k``) of an n x m array."""
    n, k = _static_int("triu_indices", "n", n), _static_int("triu_indices", "k", k)
    m = n if m is None else _static_int("triu_indices", "m", m)
    return tuple(_constant(i) for i in np.triu_indices(n, k, m))


def _matrix_shape(name, arr):
    check_arraylike(name, arr)
    shape = tuple(arr.shape) if hasattr(arr, "shape") else tuple(np.shape(arr))
    if len(shape) != 2:
        raise ShapeError(f"{name}: the input must be 2-D, got shape {shape}", user_frame())
    return shape


def tril_indices_from(arr, k=0):
    n, m = _matrix_shape("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0):
    n, m = _matrix_shape("triu_indices_from", arr)
    return triu_indices(n, k, m)


def unravel_index(indices, shape):
    """The coordinates in an array of ``shape`` of flat ``indices`` (out-of-range indices
    clamp to the first or last position, as JAX). The sizes keep their own types, as JAX's:
    ``np.int8`` sizes give int8 coordinates of weak indices."""
    idx = asarray(indices, op="unravel_index")
    if not dtypes.is_integer(idx.dtype):
        raise DtypeError(f"unravel_index: indices must be integers, got {idx.aval}",
                         user_frame())
    sizes = list(shape) if np.ndim(shape) else [shape]
    if any(np.ndim(s) != 0 for s in sizes):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    for s in sizes:
        if not dtypes.is_integer(asarray(s, op="unravel_index").dtype):
            raise TypeError(f"unravel_index: the sizes in shape must be integers, got {s!r}")
    out = [None] * len(sizes)
    rest = idx
    for i in reversed(range(len(sizes))):
        rest, out[i] = ew.divmod(rest, sizes[i])
    beyond = ew.greater(rest, 0)
    below = ew.less(rest, -1) if not dtypes.is_unsigned(idx.dtype) else None
    result = []
    for s, coordinate in zip(sizes, out):
        if below is not None:
            coordinate = ew.where(below, 0, coordinate)
        result.append(ew.where(beyond, s - 1, coordinate))
    return tuple(result)


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """The flat index of each coordinate tuple in an array of shape ``dims``; ``mode``:
    "raise" (concrete indices only), "wrap", "clip" or "ignore"."""
    if len(multi_index) != len(dims):
        raise ShapeError(f"ravel_multi_index: {len(multi_index)} index arrays for "
                         f"{len(dims)} dimensions", user_frame())
    dims = tuple(_static_int("ravel_multi_index", "dims", d) for d in dims)
    index = [asarray(i, op="ravel_multi_index") for i in multi_index]
    if any(not dtypes.is_integer(i.dtype) for i in index):
        raise DtypeError("ravel_multi_index: indices must be integers", user_frame())
    dtype = supported_dtype(dtype, "ravel_multi_index") if dtype is not None else \
        result_type(1, *index)[0]
    if mode == "raise":
        for i, d in zip(index, dims):
            if type(i) is Tracer:
                raise ConcretizationError("ravel_multi_index: mode='raise' needs concrete "
                                          "indices; use mode='wrap' or 'clip' under jit",
                                          user_frame())
            if bool(_any(ew.logical_or(ew.less(i, 0), ew.greater_equal(i, d)))):
                raise IndexingError(f"ravel_multi_index: an index is out of range for a "
                                    f"dimension of size {d}", user_frame())
    elif mode == "clip":
        index = [ew.clip(i, 0, d - 1) for i, d in zip(index, dims)]
    elif mode == "wrap":
        index = [ew.remainder(i, d) for i, d in zip(index, dims)]
    elif mode != "ignore":
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap', 'clip' or "
                         f"'ignore', got {mode!r}")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    axes = range(len(dims)) if order == "F" else reversed(range(len(dims)))
    result, stride = convert(0, dtype), 1
    for d in axes:
        result = ew.add(result, ew.multiply(convert(index[d], dtype), stride))
        stride *= dims[d]
    return result


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``a`` with its main diagonal set to ``val`` (repeated as needed). ptojax arrays are
    immutable: pass ``inplace=False``."""
    if inplace:
        raise ValueError("fill_diagonal: ptojax arrays are immutable; pass inplace=False and "
                         "use the returned array")
    if wrap:
        raise ValueError("fill_diagonal: wrap=True is not supported")
    a, val = asarray(a, op="fill_diagonal"), asarray(val, op="fill_diagonal")
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise ShapeError(f"fill_diagonal: the array must be 2-D, or have equal sides, got "
                         f"{a.aval}", user_frame())
    n = min(a.shape)
    if val.ndim:
        flat = ravel(val)
        val = lax.slice_in_dim(tile(flat, -(-n // max(flat.size, 1))), 0, n, 1, 0) \
            if flat.size else flat
    return a.at[diag_indices(n, a.ndim)].set(val)


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on diagonal ``k``."""
    flat = ravel(asarray(v, op="diagflat"))
    k = _static_int("diagflat", "k", k)
    size = flat.size + abs(k)
    rows = np.arange(flat.size) + max(0, -k)
    out = zeros((size, size), flat.dtype)
    return out.at[rows, rows + k].set(flat)


def mask_indices(n, mask_func, k=0, *, size=None):
    """The (row, column) indices of the nonzero entries of ``mask_func(ones((n, n)), k)``,
    e.g. ``mask_func=pnp.triu``; ``size`` (static) fixes their number, for jit."""
    n = _static_int("mask_indices", "n", n)
    return nonzero(mask_func(ones((n, n)), k), size=size)


__all__ = ["diag_indices", "diag_indices_from", "diagflat", "fill_diagonal", "indices",
           "ix_", "mask_indices", "ravel_multi_index", "tril_indices", "tril_indices_from", "triu_indices",
           "triu_indices_from", "unravel_index"]


_add_examples(globals(), """
diag_indices_from: The indices of the main diagonal of the square array ``arr``.
    >>> pnp.diag_indices_from(pnp.zeros((2, 2)))
    (Array([0, 1], dtype=int32), Array([0, 1], dtype=int32))
tril_indices_from: The indices of the lower triangle (at and below diagonal ``k``) of ``arr``.
    >>> pnp.tril_indices_from(pnp.zeros((2, 2)))
    (Array([0, 1, 1], dtype=int32), Array([0, 0, 1], dtype=int32))
triu_indices_from: The indices of the upper triangle (at and above diagonal ``k``) of ``arr``.
    >>> pnp.triu_indices_from(pnp.zeros((2, 2)))
    (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
diag_indices:
    >>> pnp.diag_indices(3)
    (Array([0, 1, 2], dtype=int32), Array([0, 1, 2], dtype=int32))
diagflat:
    >>> pnp.diagflat(pnp.array([1, 2]), k=1)
    Array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]], dtype=int32)
fill_diagonal:
    >>> pnp.fill_diagonal(pnp.zeros((2, 2), dtype=pnp.int32), 5, inplace=False)
    Array([[5, 0],
           [0, 5]], dtype=int32)
indices:
    >>> pnp.indices((2, 3))[1]
    Array([[0, 1, 2],
           [0, 1, 2]], dtype=int32)
ix_:
    >>> [x.shape for x in pnp.ix_(pnp.array([0, 1]), pnp.array([2, 0, 1]))]
    [(2, 1), (1, 3)]
mask_indices:
    >>> pnp.mask_indices(2, pnp.triu)
    (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
ravel_multi_index:
    >>> pnp.ravel_multi_index((pnp.array([0, 1]), pnp.array([2, 0])), (2, 3))
    Array([2, 3], dtype=int32)
tril_indices:
    >>> pnp.tril_indices(2)
    (Array([0, 1, 1], dtype=int32), Array([0, 0, 1], dtype=int32))
triu_indices:
    >>> pnp.triu_indices(2)
    (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
unravel_index:
    >>> pnp.unravel_index(pnp.array([2, 3]), (2, 3))
    (Array([0, 1], dtype=int32), Array([2, 0], dtype=int32))
""")
