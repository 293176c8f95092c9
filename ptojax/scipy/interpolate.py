"""``pto.scipy.interpolate``: JAX's ``jax.scipy.interpolate``, ``RegularGridInterpolator``:
linear or nearest-neighbour interpolation on a rectangular grid with strictly increasing
axes.

A registered pytree (leaves: the grid axes, the values and ``fill_value``; static: the
method and ``bounds_error``), so an interpolator passes through ``jit``, ``vmap`` and
``grad``. Each query point finds its cell per axis (``searchsorted``, clipped to the grid's
cells, so points outside extrapolate from the edge cell) and its distance into it; linear
interpolation sums the ``2**n`` corners' values times the products of the distances, nearest
takes the closer corner (ties go to the lower one). Points outside the grid become
``fill_value`` (NaN by default; None keeps the extrapolated values). ``bounds_error=True``
raises NotImplementedError, as JAX's (a check on values cannot run under ``jit``).
"""
from __future__ import annotations

import itertools

import numpy as np

from ptojax import dtypes
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray
from ptojax.public import add_examples, dir_function
from ptojax.tree_util import register_pytree_node_class

_METHODS = ("linear", "nearest")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"method {method!r} is not defined")


def _query_points(xi, ndim):
    """``xi`` (one (..., ndim) array, or a tuple of per-axis coordinate arrays) as one
    (..., ndim) array."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        arrays = [asarray(a, op="RegularGridInterpolator") for a in xi]
        arrays = pnp.broadcast_arrays(*arrays)
        return pnp.stack([a.astype(dtypes.default_float()) for a in arrays], axis=-1)
    xi = asarray(xi, op="RegularGridInterpolator")
    return pnp.reshape(xi, (-1, ndim)) if xi.ndim == 1 else xi


@register_pytree_node_class
class RegularGridInterpolator:
    """Interpolation of ``values`` on the grid ``points`` (one strictly increasing 1-d array
    per leading axis of ``values``), by ``method`` ``"linear"`` or ``"nearest"``; points
    outside the grid give ``fill_value`` (None: extrapolate)."""

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        _check_method(method)
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        values = asarray(values, op="RegularGridInterpolator")
        if len(points) > values.ndim:
            raise ValueError(f"there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions")
        if not pnp.issubdtype(values.dtype, pnp.inexact):
            values = values.astype(pnp.result_type(values.dtype, pnp.float32))
        if fill_value is not None:
            fill_value = asarray(fill_value, op="RegularGridInterpolator")
            if not np.can_cast(np.dtype(fill_value.dtype), np.dtype(values.dtype),
                               casting="same_kind"):
                raise ValueError("fill_value must be either 'None' or of a type compatible "
                                 "with values")
        self.method, self.bounds_error, self.fill_value = method, bounds_error, fill_value
        self.grid = tuple(asarray(p, op="RegularGridInterpolator") for p in points)
        self.values = values

    def tree_flatten(self):
        return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        interpolator = cls.__new__(cls)
        interpolator.grid, interpolator.values, interpolator.fill_value = children
        interpolator.method, interpolator.bounds_error = aux_data
        return interpolator

    def __call__(self, xi, method=None):
        """The interpolated values at the points ``xi`` (shape (..., ndim), or a tuple of
        coordinate arrays): shape ``xi.shape[:-1] + values.shape[ndim:]``."""
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _query_points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, "
                             f"but this RegularGridInterpolator has dimension {ndim}")
        shape = xi.shape
        xi = pnp.reshape(xi, (-1, ndim))
        cells, fractions, outside = self._locate(xi)
        if method == "linear":
            result = self._linear(cells, fractions)
        else:
            result = self.values[tuple(pnp.where(f <= 0.5, i, i + 1)
                                       for i, f in zip(cells, fractions))]
        if self.fill_value is not None:
            result = pnp.where(pnp.reshape(outside, (-1,) + (1,) * (result.ndim - 1)),
                               self.fill_value, result)
        return pnp.reshape(result, shape[:-1] + self.values.shape[ndim:])

    def _locate(self, xi):
        """Per axis, each point's cell (lower index) and fractional distance into it; and
        whether the point lies outside the grid."""
        cells, fractions, outside = [], [], pnp.zeros(xi.shape[0], bool)
        for x, g in zip(xi.T, self.grid):
            cell = pnp.clip(pnp.searchsorted(g, x) - 1, 0, g.size - 2)
            cells.append(cell)
            fractions.append((x - g[cell]) / (g[cell + 1] - g[cell]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return cells, fractions, outside

    def _linear(self, cells, fractions):
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(cells))
        result = 0.0
        for corner in itertools.product((0, 1), repeat=len(cells)):
            weight = 1.0
            for upper, f in zip(corner, fractions):
                weight = weight * (f if upper else 1 - f)
            index = tuple(c + upper for c, upper in zip(cells, corner))
            result = result + self.values[index] * weight[trailing]
        return result


__all__ = ["RegularGridInterpolator"]
__dir__ = dir_function(__all__)

add_examples(globals(), """
RegularGridInterpolator:
    >>> from ptojax.scipy.interpolate import RegularGridInterpolator
    >>> points = (pnp.array([1, 2, 3]), pnp.array([4, 5, 6]))
    >>> values = pnp.array([[10, 20, 30], [40, 50, 60], [70, 80, 90]])
    >>> interpolate = RegularGridInterpolator(points, values)
    >>> interpolate(pnp.array([[1.5, 4.5], [2.2, 5.8], [0.0, 5.0]]))
    Array([30., 64., nan], dtype=float32)
""")
