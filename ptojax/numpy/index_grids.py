"""Index-expression objects: ``mgrid``/``ogrid`` (dense and open grids written as slices),
``r_``/``c_`` (concatenation written as indexing, with NumPy's string directives), and
``s_``/``index_exp`` (NumPy's own, as in JAX).

A slice ``start:stop:step`` stands for ``arange(start, stop, step)``, or, with an imaginary
step ``Nj``, for ``linspace(start, stop, N)``; the bounds must be static.
"""
from __future__ import annotations

import numpy as np

from ptojax.errors import ConcretizationError
from ptojax.numpy._promote import promote_dtypes
from ptojax.numpy.creation import arange, array, linspace, meshgrid
from ptojax.numpy.manipulation import concatenate, expand_dims, stack, transpose
from ptojax.source_info import user_frame
from ptojax.trace import Tracer

s_ = np.s_
index_exp = np.index_exp


def _grid_1d(s: slice, op: str):
    """The values a slice stands for: ``arange``, or ``linspace`` for an imaginary step."""
    if any(type(v) is Tracer for v in (s.start, s.stop, s.step)):
        raise ConcretizationError(f"{op}: slice bounds must be static values", user_frame())
    start, step = s.start or 0, s.step or 1
    if np.iscomplex(step):
        return linspace(start, s.stop, int(abs(step)))
    return arange(start, s.stop, step)


class _Grid:
    """``grid[a:b, c:d, ...]``: the coordinates of a grid, axis by axis ('ij' indexing)."""

    def __init__(self, name: str, sparse: bool):
        self._name, self._sparse = name, sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_1d(key, self._name)
        axes = promote_dtypes(self._name, *[_grid_1d(k, self._name) for k in key]) \
            if key else []
        grids = meshgrid(*axes, indexing="ij", sparse=self._sparse)
        if self._sparse:
            return grids
        return stack(grids, 0) if grids else arange(0)

    def __repr__(self):
        return f"pnp.{self._name}"


mgrid = _Grid("mgrid", sparse=False)
mgrid.__doc__ = """Dense grid coordinates: ``pnp.mgrid[0:2, 0:3]`` is an array of shape
(2, 2, 3), the row and the column index of each position.

    >>> pnp.mgrid[0:2, 0:3][1]
    Array([[0, 1, 2],
           [0, 1, 2]], dtype=int32)
"""
ogrid = _Grid("ogrid", sparse=True)
ogrid.__doc__ = """Open grid coordinates: ``pnp.ogrid[0:2, 0:3]`` is a list of arrays of
shapes (2, 1) and (1, 3) that broadcast to the grid.

    >>> [g.shape for g in pnp.ogrid[0:2, 0:3]]
    [(2, 1), (1, 3)]
"""


def _directive(text: str, params: list) -> list:
    """[axis, ndmin, trans1d, matrix] after a string directive ("r", "c" or "a,n,t")."""
    if text == "r":
        return params[:3] + [0]
    if text == "c":
        return params[:3] + [1]
    parts = text.split(",")
    parts = parts + params[len(parts):] if len(parts) < 4 else parts[:3] + [params[3]]
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise ValueError(f"could not understand directive {text!r}") from None


class _Concatenator:
    """``r_[...]``/``c_[...]``: the items (arrays, scalars, slices) raised to ``ndmin``
    dimensions and concatenated along ``axis``."""

    def __init__(self, name, axis, ndmin, trans1d):
        self._name, self._params = name, [axis, ndmin, trans1d, -1]

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        params = list(self._params)
        if items and isinstance(items[0], str):
            params, items = _directive(items[0], params), items[1:]
        axis, ndmin, trans1d, matrix = params
        parts = []
        for item in items:
            if isinstance(item, str):
                raise ValueError(f"{self._name}: a string directive must come first")
            if isinstance(item, slice):
                value, item_ndim = _grid_1d(item, self._name), 0
            else:
                value = array(item)
                item_ndim = value.ndim
            value = array(value, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                order = tuple(range(ndmin))
                value = transpose(value, order[shift:] + order[:shift])
            parts.append(value)
        out = concatenate(parts, axis=axis)
        if matrix != -1 and out.ndim == 1:
            out = expand_dims(out, matrix)
        return out

    def __len__(self):
        return 0

    def __repr__(self):
        return f"pnp.{self._name}"


r_ = _Concatenator("r_", axis=0, ndmin=1, trans1d=-1)
r_.__doc__ = """Concatenation along the first axis written as indexing; slices are
``arange``/``linspace``; a leading string directive "axis,ndmin,trans1d" (or "r"/"c")
controls the layout, as ``numpy.r_``.

    >>> pnp.r_[0:3, 7, pnp.array([8, 9])]
    Array([0, 1, 2, 7, 8, 9], dtype=int32)
"""
c_ = _Concatenator("c_", axis=-1, ndmin=2, trans1d=0)
c_.__doc__ = """Concatenation along the last axis, 1-D items becoming columns, as
``numpy.c_``.

    >>> pnp.c_[pnp.array([1, 2]), pnp.array([3, 4])]
    Array([[1, 3],
           [2, 4]], dtype=int32)
"""

__all__ = ["c_", "index_exp", "mgrid", "ogrid", "r_", "s_"]
