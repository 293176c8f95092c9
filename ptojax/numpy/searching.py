"""Finding elements: ``nonzero``, ``flatnonzero``, ``argwhere``, one-argument ``where``,
``extract``, ``compress``, ``bincount``, ``searchsorted``, ``digitize``.

Results whose length depends on the data take a static ``size=`` (and ``fill_value=``) to be
traceable, as in JAX; without it the input must be concrete (eager), else a
ConcretizationError says to pass ``size``.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ConcretizationError, DtypeError, ShapeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, convert, promote_dtypes
from ptojax.eval.leaves import check_arraylike
from ptojax.numpy import math as ew
from ptojax.numpy.creation import zeros
from ptojax.numpy.indexing import getitem, take
from ptojax.numpy.manipulation import moveaxis, ravel
from ptojax.numpy.reductions import cumsum, sum as _sum
from ptojax.numpy.sorting import argsort
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def _concrete(name, x, what):
    """The numpy value of ``x``, or a ConcretizationError saying to pass ``size=``."""
    if type(x) is Tracer:
        raise ConcretizationError(f"{name}: the number of {what} depends on the values of a "
                                  f"traced array; pass a static size= (and fill_value=) to "
                                  f"use {name} under jit/vmap/grad", user_frame())
    return np.asarray(x)


def _mask(a):
    return a if a.dtype == dtypes.bool_ else lax.ne(a, 0)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one int32 (int64 in x64 mode) array per dimension. With ``size``,
    exactly that many (padded with ``fill_value``, default 0, or truncated)."""
    a = asarray(a, op="nonzero")
    if a.ndim == 0:
        raise ShapeError("nonzero: a 0-d array has no indices; use "
                         "pnp.nonzero(pnp.atleast_1d(x))", user_frame())
    mask = ravel(_mask(a))
    if size is None:
        size = int(np.count_nonzero(_concrete("nonzero", mask, "nonzero elements")))
    size = operator.index(size)
    if a.size == 0 or size == 0:
        return tuple(zeros(size, dtypes.default_int()) for _ in a.shape)
    # slot k holds the first position whose running count reaches k + 1
    running = cumsum(mask, dtype=dtypes.default_int())
    flat = cumsum(bincount(running, length=size))
    strides = [math.prod(a.shape[d + 1:]) for d in range(a.ndim)]
    out = tuple(ew.remainder(ew.floor_divide(flat, stride), n)
                for stride, n in zip(strides, a.shape))
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * a.ndim
        if len(fills) != a.ndim or any(np.ndim(v) != 0 for v in fills):
            raise ShapeError(f"nonzero: fill_value must be a scalar or a tuple of {a.ndim} "
                             f"scalars, got {fill_value!r}", user_frame())
        index = dtypes.default_int()
        missing = ew.greater_equal(lax.iota(index, size), _sum(mask, dtype=index))
        out = tuple(ew.where(missing, convert(v, index), o) for v, o in zip(fills, out))
    return out


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of the flattened array."""
    return nonzero(ravel(asarray(a, op="flatnonzero")), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements as rows of an ``(n, ndim)`` int32 array."""
    a = asarray(a, op="argwhere")
    if a.ndim == 0:
        count = size if size is not None else int(_concrete("argwhere", _mask(a),
                                                            "nonzero elements"))
        return zeros((count, 0), dtypes.default_int())
    columns = nonzero(a, size=size, fill_value=fill_value)
    return lax.concatenate([lax.expand_dims(c, (1,)) for c in columns], 1)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``x`` where ``condition`` holds, else ``y``; with only ``condition``, its nonzero
    indices (``nonzero``)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    if size is not None or fill_value is not None:
        raise ValueError("where: size and fill_value only apply to the one-argument form")
    return ew.where(condition, x, y)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` where the 1-D ``condition`` is true (with ``size``:
    that many, the missing ones filled with ``fill_value``)."""
    if out is not None:
        raise ValueError("compress: the out= argument is not supported")
    check_arraylike("compress", fill_value)
    condition = ew.not_equal(asarray(condition, op="compress"), 0)
    arr = asarray(a, op="compress")
    if condition.ndim != 1:
        raise ShapeError(f"compress: condition must be 1-D, got {condition.aval}",
                         user_frame())
    if axis is None:
        arr, axis = ravel(arr), 0
    else:
        arr = moveaxis(arr, normalize_axis("compress", axis, arr.ndim), 0)
    n = min(condition.shape[0], arr.shape[0])
    extra = lax.slice_in_dim(condition, n, condition.shape[0], 1, 0)
    condition = lax.slice_in_dim(condition, 0, n, 1, 0)
    arr = lax.slice_in_dim(arr, 0, n, 1, 0)
    if size is None:
        if np.any(_concrete("compress", extra, "selected elements")):
            raise ShapeError("compress: condition selects entries beyond the array's length",
                             user_frame())
        result = getitem(arr, _concrete("compress", condition, "selected elements"))
    else:
        size = operator.index(size)
        if not 0 <= size <= arr.shape[0]:
            raise ShapeError(f"compress: size must be in 0..{arr.shape[0]}, got {size}",
                             user_frame())
        mask = lax.broadcast_in_dim(condition, tuple(arr.shape), (0,))
        arr = ew.where(mask, arr, convert(fill_value, arr.dtype))
        order = argsort(condition, stable=True, descending=True)
        result = take(arr, lax.slice_in_dim(order, 0, size, 1, 0), axis=0)
    return moveaxis(result, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of ``arr`` where ``condition`` is nonzero (both flattened)."""
    check_arraylike("extract", fill_value)
    return compress(ravel(asarray(condition, op="extract")), ravel(asarray(arr, op="extract")),
                    size=size, fill_value=fill_value)


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed ``weights``) of each non-negative integer in the 1-D ``x``
    (negative values count as 0); ``length`` (static) fixes the result's length."""
    x = asarray(x, op="bincount")
    if x.dtype == dtypes.bool_:
        x = lax.convert_element_type(x, dtypes.int32)
    if not dtypes.is_integer(x.dtype):
        raise DtypeError(f"bincount: x must be integers, got {x.aval}", user_frame())
    if x.ndim != 1:
        raise ShapeError(f"bincount: x must be 1-D, got {x.aval}", user_frame())
    minlength = operator.index(minlength)
    if length is None:
        values = _concrete("bincount", x, "bins")
        length = max(minlength, int(max(0, values.max())) + 1 if values.size else 0)
    length = operator.index(length)
    if weights is None:
        weights = lax.broadcast_in_dim(np.asarray(1, dtypes.default_int()), tuple(x.shape),
                                       ())
    else:
        weights = asarray(weights, op="bincount")
        if tuple(weights.shape) != tuple(x.shape):
            raise ShapeError(f"bincount: weights {weights.aval} must have the shape of x "
                             f"{x.aval}", user_frame())
    index = lax.max(x, convert(0, x.dtype))
    return zeros(length, weights.dtype).at[index].add(weights)


# searchsorted ----------------------------------------------------------------------------------
def _sort_less(a, b):
    """``a < b`` in sort order: NaN after every number, -0.0 equal to 0.0; complex values by
    real part, then imaginary part (JAX's lexicographic order)."""
    if dtypes.is_complex(a.dtype):
        real_a, real_b = lax.real(a), lax.real(b)
        same_real = lax.bitwise_not(lax.bitwise_or(_sort_less(real_a, real_b),
                                                   _sort_less(real_b, real_a)))
        return lax.bitwise_or(_sort_less(real_a, real_b),
                              lax.bitwise_and(same_real, _sort_less(lax.imag(a), lax.imag(b))))
    if not dtypes.is_float(a.dtype):
        return lax.lt(a, b)
    return lax.bitwise_or(lax.lt(a, b), lax.bitwise_and(ew.isnan(b),
                                                        lax.bitwise_not(ew.isnan(a))))


def _searchsorted_binary(a, v, side):
    """Binary search, ``ceil(log2(n + 1))`` gather steps over all queries at once."""
    n = a.shape[0]
    low = lax.broadcast_in_dim(np.int32(0), tuple(v.shape), ())
    high = lax.broadcast_in_dim(np.int32(n), tuple(v.shape), ())
    for _ in range(int(np.ceil(np.log2(n + 1)))):
        mid = lax.add(low, lax.div(lax.sub(high, low), 2))
        pivot = take(a, mid, mode="clip")
        # left: go left while v <= a[mid]; right: while v < a[mid]
        go_left = lax.bitwise_not(_sort_less(pivot, v)) if side == "left" else \
            _sort_less(v, pivot)
        low, high = lax.select(go_left, low, mid), lax.select(go_left, mid, high)
    return high


def _searchsorted_compare_all(a, v, side):
    """How many elements of ``a`` sort before ``v`` (left) or not after it (right)."""
    aa = lax.broadcast_in_dim(a, tuple(v.shape) + (a.shape[0],), (v.ndim,))
    vv = lax.broadcast_in_dim(v, tuple(v.shape) + (a.shape[0],), tuple(range(v.ndim)))
    before = _sort_less(aa, vv) if side == "left" else lax.bitwise_not(_sort_less(vv, aa))
    return _sum(before, -1, dtype=dtypes.int32)


_SEARCH_METHODS = {"scan": _searchsorted_binary, "scan_unrolled": _searchsorted_binary,
                   "sort": _searchsorted_binary, "compare_all": _searchsorted_compare_all}


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Where each ``v`` would be inserted into the sorted 1-D ``a`` to keep it sorted
    (int32). ``method`` picks the algorithm (all give the same result): a binary search
    ("scan", "scan_unrolled", "sort") or counting comparisons ("compare_all")."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"searchsorted: method must be one of {', '.join(_SEARCH_METHODS)}, "
                         f"got {method!r}")
    a, v = promote_dtypes("searchsorted", a, v)
    if a.ndim != 1:
        raise ShapeError(f"searchsorted: a must be 1-D, got {a.aval}", user_frame())
    if sorter is not None:
        a = take(a, sorter)
    if a.shape[0] == 0:
        return zeros(tuple(v.shape), dtypes.int32)
    return _SEARCH_METHODS[method](a, v, side)


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin each ``x`` falls in (bins increasing or decreasing)."""
    x, bins = asarray(x, op="digitize"), asarray(bins, op="digitize")
    if bins.ndim != 1:
        raise ShapeError(f"digitize: bins must be 1-D, got {bins.aval}", user_frame())
    if bins.shape[0] == 0:
        return zeros(tuple(x.shape), dtypes.int32)
    side = "left" if right else "right"
    kwargs = {} if method is None else {"method": method}
    n = bins.shape[0]
    increasing = ew.greater_equal(lax.index_in_dim(bins, n - 1, 0, False),
                                  lax.index_in_dim(bins, 0, 0, False))
    up = searchsorted(bins, x, side=side, **kwargs)
    down = ew.subtract(n, searchsorted(lax.rev(bins, (0,)), x, side=side, **kwargs))
    return ew.where(increasing, up, down)


__all__ = ["argwhere", "bincount", "compress", "digitize", "extract", "flatnonzero",
           "nonzero", "searchsorted", "where"]


_add_examples(globals(), """
argwhere:
    >>> pnp.argwhere(pnp.array([[0, 1], [2, 0]]))
    Array([[0, 1],
           [1, 0]], dtype=int32)
bincount:
    >>> pnp.bincount(pnp.array([0, 1, 1, 3]))
    Array([1, 2, 0, 1], dtype=int32)
compress:
    >>> pnp.compress(pnp.array([True, False, True]), pnp.array([1, 2, 3]))
    Array([1, 3], dtype=int32)
digitize:
    >>> pnp.digitize(pnp.array([0.5, 1.5, 2.5]), pnp.array([1.0, 2.0]))
    Array([0, 1, 2], dtype=int32)
extract:
    >>> pnp.extract(pnp.array([1, 0, 1]), pnp.array([4, 5, 6]))
    Array([4, 6], dtype=int32)
flatnonzero:
    >>> pnp.flatnonzero(pnp.array([[0, 1], [2, 0]]))
    Array([1, 2], dtype=int32)
nonzero:
    >>> pnp.nonzero(pnp.array([[0, 1], [2, 0]]))
    (Array([0, 1], dtype=int32), Array([1, 0], dtype=int32))
searchsorted:
    >>> pnp.searchsorted(pnp.array([1, 3, 5]), pnp.array([0, 3, 6]))
    Array([0, 1, 3], dtype=int32)
""")


_add_examples(globals(), """
where:
    >>> pnp.where(pnp.array([True, False, True]), pnp.array([1, 2, 3]), 0)
    Array([1, 0, 3], dtype=int32)
    >>> pnp.where(pnp.array([0, 3, 0, 5]))
    (Array([1, 3], dtype=int32),)
""")
