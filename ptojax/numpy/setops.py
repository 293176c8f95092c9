"""Set operations: ``isin``, ``unique`` (and the array-API ``unique_all``/``_counts``/
``_inverse``/``_values``), ``union1d``, ``intersect1d``, ``setdiff1d``, ``setxor1d``.

Every one sorts, marks the first of each run of equal values, and extracts the marked
entries. The number of results depends on the data, so as in JAX a static ``size=`` (and
``fill_value=``) makes them traceable; without it the inputs must be concrete, and under
jit/vmap/grad a ConcretizationError says to pass ``size``. Padding follows JAX: ``unique``
and ``union1d`` pad with the smallest result, ``intersect1d``/``setxor1d`` too (0 when there
is none), ``setdiff1d`` with 0; indices pad with the input's size.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ConcretizationError, located
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, convert, promote_dtypes
from ptojax.numpy import math as ew
from ptojax.numpy.creation import full, zeros
from ptojax.numpy.indexing import take
from ptojax.numpy.manipulation import concatenate, moveaxis, ravel, reshape
from ptojax.numpy.reductions import any as _any, cumsum, max as _max, min as _min, sum as _sum
from ptojax.numpy.searching import nonzero, searchsorted
from ptojax.numpy.sorting import argsort, lexsort
from ptojax.source_info import user_frame
from ptojax.eval.array import Array
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def _concrete(op, *xs):
    """A ConcretizationError when an input is traced and no ``size`` was given."""
    if any(type(x) is Tracer for x in xs):
        raise ConcretizationError(f"{op}: the number of results depends on the values of a "
                                  f"traced array; pass a static size= (and fill_value=) to "
                                  f"use {op} under jit/vmap/grad", user_frame())


def _static_size(op, size):
    if type(size) is Tracer:
        raise ConcretizationError(f"{op}: size must be a static int", user_frame())
    return operator.index(size)


def _index_iota(n):
    return lax.iota(dtypes.default_int(), n)


# isin -------------------------------------------------------------------------------------------
def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element of ``element`` occurs in ``test_elements`` (bool, ``element``'s
    shape); ``invert=True`` negates it. ``method`` ("auto", "compare_all",
    "binary_search", "sort") picks the algorithm; all give the same result."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"isin: method={method!r} is not implemented; options are "
                         f"'compare_all', 'binary_search', 'sort' and 'auto'")
    element = asarray(element, op="isin")
    a, b = (ravel(x) for x in promote_dtypes("isin", element, test_elements))
    if a.size == 0 or b.size == 0:
        found = full(a.shape, False, dtypes.bool_)
    elif method in ("auto", "compare_all"):
        pairs = ew.equal(lax.expand_dims(a, (1,)), lax.expand_dims(b, (0,)))
        found = _any(pairs, axis=1)
    else:
        table = lax.sort(b, dimension=0)
        at = lax.min(searchsorted(table, a), convert(b.size - 1, dtypes.int32))
        found = ew.equal(a, take(table, at))
    if invert:
        found = ew.logical_not(found)
    return reshape(found, tuple(element.shape))


# unique -----------------------------------------------------------------------------------------
def _sorted_runs(aux, equal_nan):
    """(``aux`` sorted along axis 0 — rows lexicographically —, the permutation that sorts
    it, a mask marking the first row of each run of equal rows)."""
    n = aux.shape[0]
    if dtypes.is_complex(aux.dtype):  # one NaN whatever its parts, as JAX
        aux = ew.where(ew.isnan(aux), convert(complex(np.nan, 0), aux.dtype), aux)
    columns = reshape(aux, (n, -1)) if aux.ndim != 1 else None
    if aux.ndim == 1:
        perm = argsort(aux, stable=True)
    elif columns.shape[1] == 0:
        perm = _index_iota(n)
    else:
        perm = lexsort([columns[:, j] for j in reversed(range(columns.shape[1]))])
    aux = take(aux, perm, axis=0)
    if n == 0:
        return aux, perm, zeros(0, dtypes.bool_)
    head, tail = lax.slice_in_dim(aux, 1, n, 1, 0), lax.slice_in_dim(aux, 0, n - 1, 1, 0)
    differs = ew.not_equal(head, tail)
    if equal_nan and dtypes.is_inexact(aux.dtype):
        differs = ew.logical_and(differs, ew.logical_not(
            ew.logical_and(ew.isnan(head), ew.isnan(tail))))
    if differs.ndim > 1:
        differs = _any(differs, axis=tuple(range(1, differs.ndim)))
    return aux, perm, concatenate([full((1,), True, dtypes.bool_), differs])


def _unique(op, arr, axis, return_index, return_inverse, return_counts, equal_nan, size,
            fill_value):
    """The unique slices of ``arr`` along ``axis`` (and the requested extras), as JAX."""
    n = arr.shape[axis]
    if n == 0 and size and fill_value is None:
        raise located(ValueError(f"{op}: for a zero-size input with a nonzero size, "
                                 f"fill_value must be given"), user_frame())
    aux, perm, first = _sorted_runs(moveaxis(arr, axis, 0), equal_nan)
    count = _sum(first, dtype=dtypes.default_int())
    if size is None:
        starts = np.flatnonzero(np.asarray(first)).astype(dtypes.default_int())
        found = len(starts)
        starts = asarray(starts)
    else:
        found = size
        starts = nonzero(first, size=size)[0] if n else zeros(size, dtypes.default_int())
    values = take(aux, starts, axis=0) if n else aux
    if size is not None and fill_value is not None:
        fill = convert(asarray(fill_value, op=op), values.dtype)
        if n:
            valid = ew.less(_index_iota(size), count)
            valid = lax.expand_dims(valid, tuple(range(1, values.ndim)))
            values = ew.where(valid, values, fill)
        else:
            values = full((size, *values.shape[1:]), fill, values.dtype)
    out = [moveaxis(values, 0, axis)]
    if return_index:
        out.append(take(perm, starts) if n else perm)
    if return_inverse:
        rank = ew.subtract(cumsum(first, dtype=dtypes.default_int()), 1)
        out.append(zeros(n, dtypes.default_int()).at[perm].set(rank) if n
                   else zeros(0, dtypes.default_int()))
    if return_counts:
        out.append(_counts(first, starts, found, n, size))
    return out, count


def _counts(first, starts, found, n, size):
    """How many sorted entries each run (starting at ``starts``) spans; with ``size``, the
    missing runs span none."""
    if n == 0:
        return zeros(0, dtypes.default_int())
    if size is not None:  # run starts, then n for the missing ones
        bounds = nonzero(first, size=size + 1)[0]
        tail = lax.slice_in_dim(bounds, 1, size + 1, 1, 0)
        bounds = concatenate([lax.slice_in_dim(bounds, 0, 1, 1, 0),
                              ew.where(ew.equal(tail, 0), convert(n, tail.dtype), tail)])
    else:
        bounds = concatenate([starts, full((1,), n, dtypes.default_int())])
    return ew.subtract(lax.slice_in_dim(bounds, 1, bounds.shape[0], 1, 0),
                       lax.slice_in_dim(bounds, 0, bounds.shape[0] - 1, 1, 0))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique values of ``ar`` (flattened, or the unique slices along ``axis``),
    and optionally the index of each one's first occurrence, the inverse indices that
    rebuild ``ar``, and the counts. ``size`` (static) fixes the number of results: extra
    entries are ``fill_value`` (default: the smallest value), missing ones dropped."""
    arr = asarray(ar, op="unique")
    if size is None:
        _concrete("unique", arr)
    else:
        size = _static_size("unique", size)
    shape = tuple(arr.shape)
    if axis is None:
        arr, axis_int = ravel(arr), 0
    else:
        axis_int = normalize_axis("unique", axis, arr.ndim)
    out, _ = _unique("unique", arr, axis_int, return_index, return_inverse, return_counts,
                     equal_nan, size, fill_value)
    if return_inverse and axis is None:
        k = 2 if return_index else 1
        out[k] = reshape(out[k], shape)
    return out[0] if len(out) == 1 else tuple(out)


class _UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class _UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class _UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def unique_all(x, /, *, size=None, fill_value=None):
    """``unique`` with every extra (NaNs are distinct): a named tuple ``(values, indices,
    inverse_indices, counts)``."""
    return _UniqueAllResult(*unique(x, True, True, True, equal_nan=False, size=size,
                                    fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
    """The unique values and how often each occurs (NaNs are distinct): ``(values,
    counts)``."""
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    """The unique values and the indices rebuilding ``x`` from them (NaNs are distinct):
    ``(values, inverse_indices)``."""
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                        fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values of ``x`` (NaNs are distinct)."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# set operations on flattened arrays ---------------------------------------------------------------
def _unique_padded(x, assume_unique):
    """(the sorted unique values of the 1-D ``x`` padded to its size with the smallest, how
    many there are)."""
    if assume_unique:
        return lax.sort(x, dimension=0), convert(x.shape[0], dtypes.default_int())
    (values,), count = _unique("unique", x, 0, False, False, False, True, x.shape[0], None)
    return values, count


def _extract(op, values, keep, size, fill_value):
    """The entries of ``values`` where ``keep`` holds: all of them (concrete ``keep``), or
    the first ``size`` padded with ``fill_value`` (default: the smallest result, 0 if there
    is none, NaN if a result is NaN — as JAX)."""
    n = values.shape[0]
    if size is None:
        rows = asarray(np.flatnonzero(np.asarray(keep)).astype(dtypes.default_int()))
        return take(values, rows), rows, None
    found = _sum(keep, dtype=dtypes.default_int())
    valid = ew.less(_index_iota(size), found)
    rows = nonzero(keep, size=size, fill_value=n)[0]
    if n:
        picked = take(values, rows, mode="fill", fill_value=0)
    else:
        picked = zeros(size, values.dtype)
    if fill_value is None:  # JAX's: the missing entries (0) raised to the max, then the min
        if size == 0:
            return picked, rows, valid
        picked = ew.where(valid, picked, _max(picked))
        fill = _min(picked)
    else:
        fill = convert(asarray(fill_value, op=op), values.dtype)
    return ew.where(valid, picked, fill), rows, valid


def _first_position(values, x):
    """Where each of ``values`` first occurs in the 1-D ``x`` (``x.size`` if nowhere)."""
    if x.size == 0 or values.size == 0:
        return full(values.shape, x.size, dtypes.default_int())
    hits = ew.equal(lax.expand_dims(values, (1,)), lax.expand_dims(x, (0,)))
    first = lax.argmax(hits, 1, dtypes.default_int())
    return ew.where(_any(hits, axis=1), first, convert(x.size, dtypes.default_int()))


def _flat_pair(op, ar1, ar2):
    return [ravel(x) for x in promote_dtypes(op, asarray(ar1, op=op), asarray(ar2, op=op))]


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values found in either array (flattened)."""
    a, b = asarray(ar1, op="union1d"), asarray(ar2, op="union1d")
    if size is None:
        _concrete("union1d", a, b)
    return unique(concatenate([a, b], axis=None), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ``ar1`` not in ``ar2`` (with ``assume_unique``, in
    ``ar1``'s order); ``size`` pads with ``fill_value`` (default 0)."""
    a = ravel(asarray(ar1, op="setdiff1d"))
    b = ravel(asarray(ar2, op="setdiff1d"))
    if size is None:
        _concrete("setdiff1d", a)
    else:
        size = _static_size("setdiff1d", size)
    fill = convert(asarray(0 if fill_value is None else fill_value, op="setdiff1d"), a.dtype)
    if a.size == 0:
        return full(size or 0, fill, a.dtype)
    if assume_unique:
        candidates, count = a, a.size
    else:
        candidates, count = _unique_padded(a, False)
    keep = isin(candidates, b, invert=True)
    if size is None:
        count = int(count)
        return _extract("setdiff1d", candidates[:count], np.asarray(keep)[:count], None,
                        None)[0]
    keep = ew.logical_and(keep, ew.less(_index_iota(a.size), count))
    return _extract("setdiff1d", candidates, keep, size, fill)[0]


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted unique values in both arrays (flattened); with ``return_indices``, also
    where each first occurs in ``ar1`` and in ``ar2``."""
    a, b = _flat_pair("intersect1d", ar1, ar2)
    if size is None:
        _concrete("intersect1d", a, b)
    else:
        size = _static_size("intersect1d", size)
    u1, count1 = _unique_padded(a, assume_unique)
    keep = ew.logical_and(ew.less(_index_iota(a.size), count1), isin(u1, b)) if a.size \
        else zeros(0, dtypes.bool_)
    values, _, valid = _extract("intersect1d", u1, np.asarray(keep) if size is None
                                   else keep, size, fill_value)
    if not return_indices:
        return values
    index1, index2 = _first_position(values, a), _first_position(values, b)
    if valid is not None:
        index1 = ew.where(valid, index1, convert(a.size, index1.dtype))
        index2 = ew.where(valid, index2, convert(b.size, index2.dtype))
    return values, index1, index2


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values in exactly one of the arrays (flattened)."""
    a, b = _flat_pair("setxor1d", ar1, ar2)
    if size is None:
        _concrete("setxor1d", a, b)
    else:
        size = _static_size("setxor1d", size)
    u1, count1 = _unique_padded(a, assume_unique) if a.size else (a, 0)
    u2, count2 = _unique_padded(b, assume_unique) if b.size else (b, 0)
    keep1 = ew.logical_and(ew.less(_index_iota(a.size), count1), isin(u1, b, invert=True))
    keep2 = ew.logical_and(ew.less(_index_iota(b.size), count2), isin(u2, a, invert=True))
    candidates = concatenate([u1, u2])
    keep = concatenate([keep1, keep2])
    # the kept values first, in sorted order
    order = lax.sort((ew.logical_not(keep), candidates, _index_iota(candidates.size)),
                     dimension=0, num_keys=2)[2] if candidates.size else _index_iota(0)
    candidates, keep = take(candidates, order), take(keep, order)
    if size is None:
        return _extract("setxor1d", candidates, np.asarray(keep), None, None)[0]
    return _extract("setxor1d", candidates, keep, size, fill_value)[0]


__all__ = ["intersect1d", "isin", "setdiff1d", "setxor1d", "union1d", "unique", "unique_all",
           "unique_counts", "unique_inverse", "unique_values"]


_add_examples(globals(), """
isin:
    >>> pnp.isin(pnp.array([1, 2, 3, 4]), pnp.array([[1, 5], [3, 7]]))
    Array([ True, False,  True, False], dtype=bool)
unique:
    >>> pnp.unique(pnp.array([3, 4, 1, 3, 1]))
    Array([1, 3, 4], dtype=int32)
    >>> pnp.unique(pnp.array([3, 4, 1, 3, 1]), size=5, fill_value=0)
    Array([1, 3, 4, 0, 0], dtype=int32)
unique_all:
    >>> pnp.unique_all(pnp.array([3, 1, 3])).counts
    Array([1, 2], dtype=int32)
unique_counts:
    >>> pnp.unique_counts(pnp.array([3, 1, 3])).counts
    Array([1, 2], dtype=int32)
unique_inverse:
    >>> pnp.unique_inverse(pnp.array([3, 1, 3])).inverse_indices
    Array([1, 0, 1], dtype=int32)
unique_values:
    >>> pnp.unique_values(pnp.array([3, 1, 3]))
    Array([1, 3], dtype=int32)
union1d:
    >>> pnp.union1d(pnp.array([3, 1]), pnp.array([2, 1]))
    Array([1, 2, 3], dtype=int32)
intersect1d:
    >>> pnp.intersect1d(pnp.array([1, 2, 3, 2]), pnp.array([2, 3, 5]))
    Array([2, 3], dtype=int32)
setdiff1d:
    >>> pnp.setdiff1d(pnp.array([4, 1, 2, 1]), pnp.array([2]))
    Array([1, 4], dtype=int32)
setxor1d:
    >>> pnp.setxor1d(pnp.array([1, 2, 3]), pnp.array([2, 3, 4]))
    Array([1, 4], dtype=int32)
""")
