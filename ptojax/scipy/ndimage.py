"""``pto.scipy.ndimage``: JAX's ``jax.scipy.ndimage``, ``map_coordinates`` of order 0
(nearest) or 1 (linear).

Each coordinate axis gives one or two neighbouring indices and weights; the result sums,
over every combination of neighbours, the product of the weights times the gathered input.
Outside the input, ``mode`` moves an index back in as JAX does ("constant": the value
``cval``, as SciPy's "grid-constant"; "nearest": clipped; "wrap": modulo the size, as
SciPy's "grid-wrap"; "mirror"/"reflect": reflected about the edge sample or edge).
Nearest rounds half away from zero; integer inputs round the interpolated result.
"""
from __future__ import annotations

import functools
import itertools
import math
import operator

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray
from ptojax.public import add_examples, dir_function


def _mirror(index, size):
    period = size - 1      # the half-period of the triangle wave
    return pnp.abs((index + period) % (2 * period) - period) if period else index * 0


def _reflect(index, size):
    return (_mirror(2 * index + 1, 2 * size + 1) - 1) // 2


_MODES = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: pnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(x):
    return x if pnp.issubdtype(x.dtype, pnp.integer) else lax.round(x)


def _neighbours(coordinate, order):
    """(index, weight) pairs of one coordinate axis."""
    if order == 0:
        return [(_round_half_away(coordinate).astype(pnp.int32), None)]
    lower = pnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(pnp.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
    """The values of ``input`` interpolated at ``coordinates`` (one array of positions per
    axis of ``input``), by nearest neighbour (``order=0``) or linearly (``order=1``)."""
    image = pnp.asarray(input)
    coordinates = [pnp.asarray(c) for c in coordinates]
    cval = pnp.asarray(cval, image.dtype)
    if len(coordinates) != image.ndim:
        raise ValueError("coordinates must be a sequence of length input.ndim, but "
                         f"{len(coordinates)} != {image.ndim}")
    if mode not in _MODES:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_MODES)}.")
    if order not in (0, 1):
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1")
    fix = _MODES[mode]
    per_axis = [[(fix(index, size), (index >= 0) & (index < size), weight)
                 for index, weight in _neighbours(c, order)]
                for c, size in zip(coordinates, image.shape)]
    terms = []
    for corner in itertools.product(*per_axis):
        indices, valid, weights = zip(*corner)
        value = image[tuple(indices)]
        if mode == "constant":
            value = pnp.where(functools.reduce(operator.and_, valid), value, cval)
        weights = [w for w in weights if w is not None]
        terms.append(value * math.prod(weights[1:], start=weights[0]) if weights else value)
    result = sum(terms[1:], terms[0])
    if pnp.issubdtype(image.dtype, pnp.integer):
        result = _round_half_away(result)
    return result.astype(image.dtype)


__all__ = ["map_coordinates"]
__dir__ = dir_function(__all__)

add_examples(globals(), """
map_coordinates:
    >>> from ptojax.scipy import ndimage
    >>> image = pnp.arange(12.0).reshape(3, 4)
    >>> ndimage.map_coordinates(image, [pnp.array([0.5, 1.5]), pnp.array([1.5, 2.5])], order=1)
    Array([3.5, 8.5], dtype=float32)
""")
