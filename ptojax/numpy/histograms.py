"""Histograms: ``histogram_bin_edges``, ``histogram``, ``histogram2d``, ``histogramdd``.

Bin edges are ``bins + 1`` evenly spaced values over ``range`` (default: the data's min and
max, widened by 0.5 each way when they are equal) or the given edges. A value falls in bin
``i`` when ``edges[i] <= v < edges[i + 1]``; the last bin also takes ``v == edges[-1]``;
values outside are not counted. The number of bins is static, so all of it traces.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ptojax import lax
from ptojax.errors import ConcretizationError, ShapeError, UnsupportedError
from ptojax.numpy._promote import array_from, asarray, convert, promote_inexact, to_inexact
from ptojax.numpy import math as ew
from ptojax.numpy.creation import linspace, zeros
from ptojax.numpy.differences import diff
from ptojax.numpy.index_tricks import ix_, ravel_multi_index
from ptojax.numpy.manipulation import reshape, stack, transpose
from ptojax.numpy.reductions import max as _max, min as _min, sum as _sum
from ptojax.numpy.searching import bincount, searchsorted
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of the bins ``histogram`` uses: ``bins`` (a 1-D array) as given, or
    ``bins + 1`` evenly spaced edges over ``range``."""
    if isinstance(bins, str):
        raise UnsupportedError("histogram_bin_edges: string values for bins are not "
                               "supported; pass a number of bins or the edges",
                               user_frame())
    arr = asarray(a, op="histogram_bin_edges")
    dtype = to_inexact(arr.dtype)
    if np.ndim(bins) == 1:
        return asarray(bins, dtype=dtype, op="histogram_bin_edges")
    if type(bins) is Tracer:
        raise ConcretizationError("histogram_bin_edges: the number of bins must be a static "
                                  "int (it sets the result's shape)", user_frame())
    count = operator.index(bins)
    if range is None:
        range = [_min(arr), _max(arr)]
    lo_hi = array_from(range, dtype=dtype, op="histogram_bin_edges")   # a pair
    if tuple(lo_hi.shape) != (2,):
        raise ShapeError(f"histogram_bin_edges: range must be None or a pair of scalars, "
                         f"got shape {tuple(lo_hi.shape)}", user_frame())
    lo, hi = lo_hi[0], lo_hi[1]
    flat = ew.equal(lo, hi)
    lo = ew.where(flat, ew.subtract(lo, convert(0.5, dtype)), lo)
    hi = ew.where(flat, ew.add(hi, convert(0.5, dtype)), hi)
    return linspace(lo, hi, count + 1, dtype=dtype)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(the count — or summed ``weights`` — of the values of ``a`` in each bin, the bin
    edges). ``density=True`` normalizes to a probability density."""
    if weights is None:
        (a,) = promote_inexact("histogram", a)
        weights = lax.full_like(a, 1)
    else:
        a, weights = asarray(a, op="histogram"), asarray(weights, op="histogram")
        if tuple(a.shape) != tuple(weights.shape):
            raise ShapeError(f"histogram: weights {weights.aval} must have the shape of a "
                             f"{a.aval}", user_frame())
        a, weights = promote_inexact("histogram", a, weights)
    edges = histogram_bin_edges(a, bins, range, weights)
    n = edges.shape[0]
    index = searchsorted(edges, a, side="right")
    index = ew.where(ew.equal(a, edges[-1]), convert(n - 1, index.dtype), index)
    counts = zeros(n, weights.dtype).at[index].add(weights)[1:]
    if density:
        counts = ew.divide(ew.divide(counts, diff(edges)), _sum(counts))
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """The 2-D histogram of the points ``(x[i], y[i])``: (counts, x edges, y edges);
    ``bins`` is a count, a pair of counts or edge arrays, or edges shared by both."""
    x, y = asarray(x, op="histogram2d"), asarray(y, op="histogram2d")
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):
        bins = [array_from(bins, op="histogram2d")] * 2   # one edge list, as JAX
    counts, edges = histogramdd(transpose(stack([x, y])), bins, range, weights, density)
    return counts, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """The histogram of ``N`` points in ``D`` dimensions (``sample`` of shape ``(N, D)``):
    (counts of shape ``(bins_1, ..., bins_D)``, the list of each dimension's edges)."""
    if weights is None:
        (sample,) = promote_inexact("histogramdd", sample)
    else:
        sample, weights = (asarray(v, op="histogramdd") for v in (sample, weights))
        if tuple(weights.shape) != tuple(sample.shape)[:1]:
            raise ShapeError(f"histogramdd: weights {weights.aval} must hold one weight per "
                             f"sample of {sample.aval}", user_frame())
        sample, weights = promote_inexact("histogramdd", sample, weights)
    if sample.ndim != 2:
        raise ShapeError(f"histogramdd: sample must be 2-D (N points, D dimensions), got "
                         f"{sample.aval}", user_frame())
    dims = sample.shape[1]
    if range is not None and (len(range) != dims or any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ShapeError(f"histogramdd: for a sample of shape {tuple(sample.shape)}, range "
                         f"must be a sequence of {dims} pairs or Nones, got {range!r}",
                         user_frame())
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = [bins] * dims
    if len(per_dim) != dims:
        raise ShapeError(f"histogramdd: bins must give one entry per dimension ({dims}), got "
                         f"{len(per_dim)}", user_frame())
    indices, edges = [], []
    for d in builtins.range(dims):
        column = sample[:, d]
        e = histogram_bin_edges(column, per_dim[d], None if range is None else range[d])
        index = searchsorted(e, column, side="right")
        indices.append(ew.where(ew.equal(column, e[-1]), ew.subtract(index, 1), index))
        edges.append(e)
    shape = tuple(e.shape[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(indices), shape, mode="clip")
    counts = reshape(bincount(flat, weights, length=math.prod(shape)), shape)
    counts = counts[(slice(1, -1),) * dims]
    if density:
        counts = convert(counts, sample.dtype)
        counts = ew.divide(counts, _sum(counts))
        for width in ix_(*[diff(e) for e in edges]):
            counts = ew.divide(counts, width)
    return counts, edges


__all__ = ["histogram", "histogram2d", "histogram_bin_edges", "histogramdd"]


_add_examples(globals(), """
histogram_bin_edges:
    >>> pnp.histogram_bin_edges(pnp.array([1.0, 2.0, 5.0]), bins=4)
    Array([1., 2., 3., 4., 5.], dtype=float32)
histogram:
    >>> counts, edges = pnp.histogram(pnp.array([1.0, 2.0, 2.5, 5.0]), bins=4)
    >>> counts
    Array([1., 2., 0., 1.], dtype=float32)
histogram2d:
    >>> counts, xe, ye = pnp.histogram2d(pnp.array([0.0, 1.0, 1.0]), pnp.array([0.0, 0.0, 1.0]),
    ...                                  bins=2)
    >>> counts
    Array([[1, 0],
           [1, 1]], dtype=int32)
histogramdd:
    >>> counts, edges = pnp.histogramdd(pnp.array([[0.0, 0.0], [1.0, 1.0]]), bins=2)
    >>> counts
    Array([[1, 0],
           [0, 1]], dtype=int32)
""")
