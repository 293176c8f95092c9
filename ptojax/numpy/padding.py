"""``pad`` in every NumPy mode: constant, edge, wrap, reflect, symmetric (even or odd
reflection), linear_ramp, maximum, minimum, mean, median, empty, or a function applied along
each axis. Each mode pads one axis at a time with slices, reversals and concatenations, so
the padded array is differentiable in the input (and in traced constant/end values)."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.batching.api import vmap
from ptojax.errors import ConcretizationError, ShapeError, UnsupportedError
from ptojax.numpy._promote import array_from, asarray, broadcast_to_shape, convert
from ptojax.ops.convert import convert_element_type
from ptojax.ops.elementwise import zero_like
from ptojax.numpy import math as ew
from ptojax.numpy import reductions as red
from ptojax.numpy.creation import linspace
from ptojax.numpy.manipulation import moveaxis, repeat, reshape
from ptojax.numpy.statistics import median
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.pytree import tree_leaves
from ptojax.public import add_examples as _add_examples

_MODE_KWARGS = {"constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
                "linear_ramp": {"end_values"}, "maximum": {"stat_length"},
                "minimum": {"stat_length"}, "mean": {"stat_length"},
                "median": {"stat_length"}, "reflect": {"reflect_type"},
                "symmetric": {"reflect_type"}}


def _pairs(name, values, array):
    """``values`` as one (before, after) pair per axis: NumPy's ``((b, a), ...)``, ``((b,
    a),)``, ``(b, a)``, ``(v,)`` or ``v``. The values must be concrete."""
    if any(isinstance(v, Tracer) for v in tree_leaves(values)):
        raise ConcretizationError(f"pad: {name} must be concrete (it sets the result's shape "
                                  f"or slices)", user_frame())
    try:
        arr = np.asarray(values)
    except ValueError:
        raise ShapeError(f"pad: {name} entries must all have one shape, got {values!r:.60}",
                         user_frame()) from None
    ndim = array.ndim
    shapes = {(ndim, 2): lambda: arr, (1, 2): lambda: np.broadcast_to(arr, (ndim, 2)),
              (2,): lambda: np.broadcast_to(arr, (ndim, 2)),
              (1,): lambda: np.full((ndim, 2), arr[0]), (): lambda: np.full((ndim, 2), arr)}
    if arr.shape not in shapes:
        raise ShapeError(f"pad: {name} of shape {arr.shape} does not fit {array.aval}; give "
                         f"shape ({ndim}, 2), (1, 2), (2,), (1,) or ()", user_frame())
    return [tuple(p) for p in shapes[arr.shape]().tolist()]


def _widths(pad_width, array):
    widths = _pairs("pad_width", pad_width, array)
    flat = np.asarray(widths).ravel()
    if flat.size and (flat.dtype.kind not in "iu" or (flat < 0).any()):
        raise ShapeError(f"pad: pad_width must be non-negative integers, got "
                         f"{pad_width!r:.60}", user_frame())
    return [(int(b), int(a)) for b, a in widths]


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded by ``pad_width`` ((before, after) per axis, or broadcast from one
    pair or one int) in ``mode`` (a NumPy mode name or a function, see module doc)."""
    array = asarray(array, op="pad")
    widths = _widths(pad_width, array)
    if callable(mode):
        return _pad_with_function(array, widths, mode, kwargs)
    if mode not in _MODE_KWARGS:
        raise UnsupportedError(f"pad: unknown mode {mode!r}; modes: "
                               f"{', '.join(_MODE_KWARGS)} or a function", user_frame())
    unexpected = set(kwargs) - _MODE_KWARGS[mode]
    if unexpected:
        raise TypeError(f"pad: mode {mode!r} takes no argument {sorted(unexpected)[0]!r}")
    if array.ndim == 0:
        return array
    if mode == "constant":
        return _pad_constant(array, widths, kwargs.get("constant_values", 0))
    if mode == "linear_ramp":
        return _pad_linear_ramp(array, widths, kwargs.get("end_values", 0))
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got "
                             f"{reflect_type!r}")
        return _per_axis(array, widths, mode, lambda x, ax, b, a: _reflect(
            x, ax, b, a, mode, reflect_type))
    if mode in ("maximum", "minimum", "mean", "median"):
        lengths = kwargs.get("stat_length")
        lengths = None if lengths is None else _pairs("stat_length", lengths, array)
        return _per_axis(array, widths, mode, lambda x, ax, b, a: _stat(
            x, ax, b, a, mode, None if lengths is None else lengths[ax]))
    return _per_axis(array, widths, mode, {"edge": _edge, "wrap": _wrap,
                                           "empty": _empty}[mode])


def _per_axis(array, widths, mode, pad_axis):
    """Pad each axis in turn with ``pad_axis(x, axis, before, after)``."""
    for axis, (before, after) in enumerate(widths):
        if before == 0 and after == 0:
            continue
        if array.shape[axis] == 0 and mode != "empty":
            raise ShapeError(f"pad: cannot pad the empty axis {axis} of {array.aval} in mode "
                             f"{mode!r} (there are no values to repeat)", user_frame())
        array = pad_axis(array, axis, before, after)
    return array


def _piece(x, axis, start, stop):
    return lax.slice_in_dim(x, start, stop, 1, axis)


def _join(parts, axis):
    parts = [p for p in parts if p.shape[axis] > 0]
    return parts[0] if len(parts) == 1 else lax.concatenate(parts, axis)


def _pad_constant(array, widths, constant_values):
    # pairs, as JAX; of the array's weak type (JAX's fill never changes it)
    values = convert_element_type(array_from(constant_values, op="pad"), array.dtype,
                                  weak_type=array.weak_type)
    if values.size == 1:
        return lax.pad(array, lax.reshape(values, ()), [(b, a, 0) for b, a in widths])
    values = broadcast_to_shape(values, (array.ndim, 2), "pad (constant_values)")
    for axis, (before, after) in enumerate(widths):
        for side, width in ((0, before), (1, after)):
            if width:
                config = [(0, 0, 0)] * array.ndim
                config[axis] = (width, 0, 0) if side == 0 else (0, width, 0)
                value = lax.reshape(lax.slice(values, (axis, side), (axis + 1, side + 1)), ())
                array = lax.pad(array, value, config)
    return array


def _edge(x, axis, before, after):
    n = x.shape[axis]
    return _join([repeat(_piece(x, axis, 0, 1), before, axis), x,
                  repeat(_piece(x, axis, n - 1, n), after, axis)], axis)


def _wrap(x, axis, before, after):
    n = x.shape[axis]
    left_repeats, left_rest = divmod(before, n)
    right_repeats, right_rest = divmod(after, n)
    parts = [_piece(x, axis, n - left_rest, n)] if left_rest else []
    parts += [x] * (left_repeats + right_repeats + 1)
    parts += [_piece(x, axis, 0, right_rest)] if right_rest else []
    return _join(parts, axis)


def _empty(x, axis, before, after):
    def block(width):
        shape = tuple(width if d == axis else s for d, s in enumerate(x.shape))
        return lax.broadcast_in_dim(np.asarray(0, x.dtype), shape, ())
    return _join([block(before), x, block(after)], axis)


def _reflect(x, axis, before, after, mode, reflect_type):
    """Mirror images of the array appended in chunks until the padding is filled ("reflect"
    leaves the edge out of the image, "symmetric" keeps it); "odd" reflects through the
    edge value (2 * edge - image)."""
    n = x.shape[axis]
    offset = 1 if mode == "reflect" and n > 1 else 0

    def grow(x, padding, at_start):
        while padding > 0:
            size = x.shape[axis]
            edge = _piece(x, axis, 0, 1) if at_start else _piece(x, axis, size - 1, size)
            step = min(padding, n - offset)
            padding -= step
            if at_start:
                image = _piece(x, axis, offset, offset + step)
            else:
                stop = size if mode == "symmetric" or n == 1 else size - 1
                image = _piece(x, axis, stop - step, stop)
            image = lax.rev(image, (axis,))
            if reflect_type == "odd":
                image = ew.subtract(ew.multiply(2, _broadcast_like(edge, image, axis)), image)
                image = convert(image, x.dtype)
            x = _join([image, x] if at_start else [x, image], axis)
        return x

    return grow(grow(x, before, True), after, False)


def _broadcast_like(edge, image, axis):
    return lax.broadcast_in_dim(lax.squeeze(edge, (axis,)), tuple(image.shape),
                                tuple(d for d in range(image.ndim) if d != axis))


_STATS = {"maximum": red.max, "minimum": red.min, "mean": red.mean, "median": median}


def _stat(x, axis, before, after, mode, lengths):
    stat = _STATS[mode]
    if lengths is None:
        first = last = stat(x, axis=axis, keepdims=True)
    else:
        n = x.shape[axis]
        length_before, length_after = (int(v) for v in lengths)
        if length_before == 0 or length_after == 0:
            raise ShapeError("pad: a stat_length of 0 gives no values to compute the "
                             "statistic of", user_frame())
        length_before, length_after = min(length_before, n), min(length_after, n)
        first = stat(_piece(x, axis, 0, length_before), axis=axis, keepdims=True)
        last = stat(_piece(x, axis, n - length_after, n), axis=axis, keepdims=True)
    if dtypes.is_integer(x.dtype):
        first, last = ew.round(first), ew.round(last)
    first, last = convert(first, x.dtype), convert(last, x.dtype)
    return _join([repeat(first, before, axis), x, repeat(last, after, axis)], axis)


def _pad_linear_ramp(array, widths, end_values):
    ends = _pairs("end_values", end_values, array)
    for axis, (before, after) in enumerate(widths):
        n = array.shape[axis]
        ramps = []
        for end, edge, width in ((ends[axis][0], _piece(array, axis, 0, 1), before),
                                 (ends[axis][1], _piece(array, axis, n - 1, n), after)):
            ramp = linspace(end, lax.squeeze(edge, (axis,)), width, endpoint=False,
                            dtype=array.dtype, axis=axis)
            ramps.append(ramp)
        array = _join([ramps[0], array, lax.rev(ramps[1], (axis,))], axis)
    return array


def _pad_with_function(array, widths, fn, kwargs):
    """NumPy's callable mode: ``fn(vector, (before, after), axis, kwargs)`` returns each 1-D
    slice (already padded with zeros) with its padding filled in."""
    padded = lax.pad(array, zero_like(array), [(b, a, 0) for b, a in widths])
    for axis in range(padded.ndim):
        moved = moveaxis(padded, axis, -1)
        rows = reshape(moved, (-1, moved.shape[-1]))
        out = vmap(lambda v, w=widths[axis], ax=axis: array_from(fn(v, w, ax, kwargs)))(rows)
        padded = moveaxis(reshape(out, tuple(moved.shape)), -1, axis)
    return padded


__all__ = ["pad"]


_add_examples(globals(), """
pad:
    >>> pnp.pad(pnp.array([1, 2, 3]), (1, 2))
    Array([0, 1, 2, 3, 0, 0], dtype=int32)
    >>> pnp.pad(pnp.array([1, 2, 3]), 2, mode='reflect')
    Array([3, 2, 1, 2, 3, 2, 1], dtype=int32)
""")
