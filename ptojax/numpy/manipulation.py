"""Shape manipulation: reshape, ravel, transpose, swapaxes, moveaxis, concatenate, stack,
split, squeeze, expand_dims, broadcast_to, tile, repeat, flip, roll, tril/triu, pad."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import AxisError, ShapeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy.creation import tri
from ptojax.numpy.indexing import getitem, take
from ptojax.numpy.math import where
from ptojax.numpy import reductions
from ptojax.numpy._promote import (asarray, broadcast_shapes as _broadcast_shapes,
                                   broadcast_to_shape, convert, result_type, supported_dtype)
from ptojax.eval.leaves import check_arraylike
from ptojax.eval.key_array import (PRNGKeyArray as _KeyArray,
                                   key_type_error as _key_type_error)
from ptojax.ir.symbolic import as_index, divide_exactly, is_index_scalar
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def reshape(a, shape=None, order="C", *, newshape=None):
    a = asarray(a)
    shape = newshape if shape is None else shape
    if is_index_scalar(shape):
        shape = (shape,)
    shape = [as_index(d) for d in shape]
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: only one dimension can be -1, got {tuple(shape)}",
                         user_frame())
    if -1 in shape:
        missing = divide_exactly(a.size, math.prod(d for d in shape if d != -1))
        if missing is None:
            raise ShapeError(f"reshape: cannot reshape {a.aval} to {tuple(shape)}",
                             user_frame())
        shape[shape.index(-1)] = missing
    if math.prod(shape) != a.size:
        raise ShapeError(f"reshape: cannot reshape {a.aval} ({a.size} elements) to "
                         f"{tuple(shape)}", user_frame())
    if order == "F":
        a = lax.transpose(a, tuple(reversed(range(a.ndim))))
        out = lax.reshape(a, tuple(reversed(shape)))
        return lax.transpose(out, tuple(reversed(range(len(shape)))))
    return lax.reshape(a, tuple(shape))


def ravel(a, order="C"):
    a = asarray(a)
    return reshape(a, (a.size,), order)


def transpose(a, axes=None):
    a = asarray(a)
    if axes is None:
        axes = tuple(reversed(range(a.ndim)))
    axes = tuple(normalize_axis("transpose", ax, a.ndim) for ax in axes)
    if sorted(axes) != list(range(a.ndim)):
        raise AxisError(f"transpose: {axes} is not a permutation of {a.ndim} axes",
                        user_frame())
    return lax.transpose(a, axes)


def permute_dims(a, axes):
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    a = asarray(a)
    perm = list(range(a.ndim))
    i, j = normalize_axis("swapaxes", axis1, a.ndim), normalize_axis("swapaxes", axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


def moveaxis(a, source, destination):
    a = asarray(a)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise AxisError("moveaxis: source and destination need the same number of axes",
                        user_frame())
    src = [normalize_axis("moveaxis", s, a.ndim, "source") for s in src]
    dst = [normalize_axis("moveaxis", d, a.ndim, "destination") for d in dst]
    order = [d for d in range(a.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(a, order)


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved to lie before position ``start`` (NumPy's older form of
    moveaxis)."""
    a = asarray(a, op="rollaxis")
    axis = normalize_axis("rollaxis", axis, a.ndim)
    start = operator.index(start)
    if not -a.ndim <= start <= a.ndim:
        raise AxisError(f"rollaxis: start {start} is out of bounds for an array of rank "
                        f"{a.ndim} (valid: {-a.ndim}..{a.ndim})", user_frame())
    start = start + a.ndim if start < 0 else start
    return moveaxis(a, axis, start - 1 if start > axis else start)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes`` (from the first axis
    towards the second)."""
    m = asarray(m, op="rot90")
    if m.ndim < 2:
        raise ShapeError(f"rot90: the array must have at least 2 dimensions, got {m.aval}",
                         user_frame())
    ax1, ax2 = (normalize_axis("rot90", ax, m.ndim) for ax in axes)
    if ax1 == ax2:
        raise AxisError(f"rot90: the axes must differ, got {axes}", user_frame())
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return lax.rev(m, (ax1, ax2))
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return lax.transpose(lax.rev(m, (ax2,)), perm)
    return lax.rev(lax.transpose(m, perm), (ax2,))


def matrix_transpose(x):
    x = asarray(x)
    return swapaxes(x, -1, -2)


def concatenate(arrays, axis=0, dtype=None):
    arrays = list(arrays)
    if not arrays:
        raise ShapeError("concatenate needs at least one array", user_frame())
    if any(isinstance(a, _KeyArray) for a in arrays):
        return _of_keys(concatenate, arrays, axis, dtype, arrays[0].ndim)
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    dt, weak = result_type(*arrays, op="concatenate")
    if dtype:   # an asked-for dtype is strong
        dt = supported_dtype(dtype, "concatenate")
        arrays = [lax.convert_element_type(a, dt) for a in arrays]
    else:       # weak when all operands are (as JAX's promotion joins them)
        arrays = [convert(a, dt, weak) for a in arrays]
    shapes = ", ".join(str(tuple(x.shape)) for x in arrays)
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated; use "
                         "pnp.stack to make a new axis", user_frame())
    if any(a.ndim != ndim for a in arrays):
        raise ShapeError(f"concatenate: all arrays must have the same rank, got shapes "
                         f"{shapes}", user_frame())
    axis = normalize_axis("concatenate", axis, ndim)
    for a in arrays:
        if any(x != y for d, (x, y) in enumerate(zip(a.shape, arrays[0].shape)) if d != axis):
            raise ShapeError(f"concatenate along axis {axis}: shapes {shapes} differ off that "
                             f"axis; only the sizes along axis {axis} may differ",
                             user_frame())
    arrays = [a for a in arrays if a.shape[axis] > 0] or arrays[:1]
    return lax.concatenate(arrays, axis)


concat = concatenate


def stack(arrays, axis=0, dtype=None):
    arrays = list(arrays)
    if arrays and any(isinstance(a, _KeyArray) for a in arrays):
        return _of_keys(stack, arrays, axis, dtype, arrays[0].ndim + 1)
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ShapeError("stack needs at least one array", user_frame())
    shape = tuple(arrays[0].shape)
    if any(tuple(a.shape) != shape for a in arrays):
        raise ShapeError(f"stack: all arrays must have one shape, got "
                         f"{', '.join(str(tuple(a.shape)) for a in arrays)}", user_frame())
    axis = normalize_axis("stack", axis, len(shape) + 1)
    return concatenate([lax.expand_dims(a, (axis,)) for a in arrays], axis, dtype)


def _of_keys(join, keys, axis, dtype, ndim):
    """``join`` (stack/concatenate) of typed keys: of their words, on the key axes."""
    if dtype is not None or not all(isinstance(k, _KeyArray) for k in keys):
        raise _key_type_error(join.__name__)
    if axis is None:
        keys, axis, ndim = [k.ravel() for k in keys], 0, 1
    axis = normalize_axis(join.__name__, axis, ndim)
    return _KeyArray(join([k.data for k in keys], axis))


def hstack(tup, dtype=None):
    arrays = [atleast_1d(asarray(a)) for a in tup]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None):
    return concatenate([atleast_2d(asarray(a)) for a in tup], 0, dtype)


def dstack(tup, dtype=None):
    return concatenate([atleast_3d(asarray(a)) for a in tup], 2, dtype)


def column_stack(tup):
    arrays = [asarray(a) for a in tup]
    return concatenate([reshape(a, (a.size, 1)) if a.ndim < 2 else a for a in arrays], 1)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    x = asarray(x, op="unstack")
    if x.ndim == 0:
        raise ShapeError("unstack: a 0-d array has no axis to unstack", user_frame())
    axis = normalize_axis("unstack", axis, x.ndim)
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def _each(one):
    """``one`` of each array given (an array for one argument, a list for several), as
    JAX's ``atleast_*d(*arys)``."""
    def fn(*arys):
        out = [one(asarray(a, op=one.__name__)) for a in arys]
        return out[0] if len(out) == 1 else out
    fn.__name__ = fn.__qualname__ = one.__name__
    fn.__doc__ = one.__doc__
    return fn


@_each
def atleast_1d(a):
    """The array with at least one dimension (a leading 1 added to a scalar)."""
    return reshape(a, (1,)) if a.ndim == 0 else a


@_each
def atleast_2d(a):
    """The array with at least two dimensions (leading 1s added)."""
    return reshape(a, (1,) * (2 - a.ndim) + tuple(a.shape)) if a.ndim < 2 else a


@_each
def atleast_3d(a):
    """The array with at least three dimensions (a scalar is (1, 1, 1), a vector (1, n, 1),
    a matrix (m, n, 1))."""
    if a.ndim == 0:
        return reshape(a, (1, 1, 1))
    if a.ndim == 1:
        return reshape(a, (1, a.shape[0], 1))
    if a.ndim == 2:
        return reshape(a, (*a.shape, 1))
    return a


def split(ary, indices_or_sections, axis=0):
    ary = asarray(ary, op="split")
    axis = normalize_axis("split", axis, ary.ndim)
    n = ary.shape[axis]
    if is_index_scalar(indices_or_sections):
        sections = operator.index(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ShapeError(f"split: axis {axis} of size {n} cannot be split into "
                             f"{sections} equal sections; use array_split", user_frame())
        bounds = [i * (n // sections) for i in range(sections + 1)]
    else:
        bounds = [0] + [builtins.min(builtins.max(int(i), 0), n)
                        for i in indices_or_sections] + [n]
    return [lax.slice_in_dim(ary, lo, builtins.max(lo, hi), 1, axis)
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def array_split(ary, indices_or_sections, axis=0):
    ary = asarray(ary)
    if is_index_scalar(indices_or_sections):
        n = ary.shape[normalize_axis("array_split", axis, ary.ndim)]
        k = operator.index(indices_or_sections)
        sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
        indices_or_sections = list(np.cumsum(sizes)[:-1])
    return split(ary, indices_or_sections, axis)


def _split_along(name, ary, indices_or_sections, axis, min_ndim):
    ary = asarray(ary, op=name)
    if ary.ndim < min_ndim:
        raise ShapeError(f"{name}: the array must have at least {min_ndim} dimensions, got "
                         f"{ary.aval}", user_frame())
    return split(ary, indices_or_sections, axis)


def vsplit(ary, indices_or_sections):
    return _split_along("vsplit", ary, indices_or_sections, 0, 2)


def hsplit(ary, indices_or_sections):
    ary = asarray(ary, op="hsplit")
    return _split_along("hsplit", ary, indices_or_sections, 1 if ary.ndim > 1 else 0, 1)


def dsplit(ary, indices_or_sections):
    return _split_along("dsplit", ary, indices_or_sections, 2, 3)


def squeeze(a, axis=None):
    a = asarray(a)
    if axis is None:
        axis = tuple(d for d, n in enumerate(a.shape) if n == 1)
    axes = (axis,) if is_index_scalar(axis) else tuple(axis)
    axes = tuple(normalize_axis("squeeze", d, a.ndim) for d in axes)
    for d in axes:
        if a.shape[d] != 1:
            raise ShapeError(f"squeeze: axis {d} of {a.aval} has size {a.shape[d]}, not 1",
                             user_frame())
    return lax.squeeze(a, axes)


def expand_dims(a, axis):
    a = asarray(a)
    axes = (axis,) if is_index_scalar(axis) else tuple(axis)
    n = a.ndim + len(axes)
    axes = tuple(normalize_axis("expand_dims", d, n) for d in axes)
    if len(set(axes)) != len(axes):
        raise AxisError(f"expand_dims: repeated axis in {axis}", user_frame())
    return lax.expand_dims(a, axes)


def broadcast_to(array, shape):
    array = asarray(array)
    shape = tuple(as_index(d) for d in ((shape,) if is_index_scalar(shape) else shape))
    _broadcast_shapes("broadcast_to", tuple(array.shape), shape)
    return broadcast_to_shape(array, shape)


def broadcast_shapes(*shapes) -> tuple:
    """The shape that arrays of ``shapes`` (tuples, or ints for 1-D shapes) broadcast to, by
    NumPy's rules; a ShapeError when they cannot.

    >>> pnp.broadcast_shapes((3, 1), (4,), 4)
    (3, 4)
    """
    shapes = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    return _broadcast_shapes("broadcast_shapes", *shapes)


def broadcast_arrays(*args):
    args = [asarray(a) for a in args]
    shape = _broadcast_shapes("broadcast_arrays", *[tuple(a.shape) for a in args])
    return [broadcast_to_shape(a, shape) for a in args]


def flip(m, axis=None):
    m = asarray(m)
    axes = range(m.ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    return lax.rev(m, [normalize_axis("flip", a, m.ndim) for a in axes])


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    try:  # shifts and axes broadcast together; shifts of one axis add up (as NumPy)
        pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
    except ValueError:
        raise ShapeError(f"roll: shift {shift!r} and axis {axis!r} do not broadcast together",
                         user_frame()) from None
    total = {}
    for s, ax in pairs:
        ax = normalize_axis("roll", int(ax), a.ndim)
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in total.items():
        n = a.shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            a = lax.concatenate([lax.slice_in_dim(a, n - s, n, 1, ax),
                                 lax.slice_in_dim(a, 0, n - s, 1, ax)], ax)
    return a


def tile(A, reps):
    A = asarray(A, op="tile")
    reps = tuple(operator.index(r) for r in ((reps,) if is_index_scalar(reps) else reps))
    if any(r < 0 for r in reps):
        raise ShapeError(f"tile: repetitions must be non-negative, got {reps}", user_frame())
    nd = builtins.max(A.ndim, len(reps))
    A = reshape(A, (1,) * (nd - A.ndim) + tuple(A.shape))
    reps = (1,) * (nd - len(reps)) + reps
    # broadcast to (r0, n0, r1, n1, ...) and merge pairs
    big = tuple(x for r, n in zip(reps, A.shape) for x in (r, n))
    out = lax.broadcast_in_dim(A, big, tuple(range(1, 2 * nd, 2)))
    return lax.reshape(out, tuple(r * n for r, n in zip(reps, A.shape)))


def repeat(a, repeats, axis=None, total_repeat_length=None):
    a = asarray(a, op="repeat")
    check_arraylike("repeat", repeats)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis("repeat", axis, a.ndim)
    if isinstance(repeats, (int, np.integer)) and total_repeat_length is None:
        r = int(repeats)
        if r < 0:
            raise ShapeError(f"repeat: repeats must be non-negative, got {r}", user_frame())
        shape = list(a.shape)
        big = shape[:axis + 1] + [r] + shape[axis + 1:]
        dims = tuple(d for d in range(len(big)) if d != axis + 1)
        out = lax.broadcast_in_dim(a, tuple(big), dims)
        shape[axis] *= r
        return lax.reshape(out, tuple(shape))
    index = _repeat_index("repeat", a.shape[axis], repeats, total_repeat_length)
    return take(a, index, axis=axis, mode="clip")


def _repeat_index(op, n, repeats, total_length):
    """Which source element each output element of a repeat reads (repeats must be concrete:
    they set the shape). ``total_length`` truncates, or pads with the last element."""
    reps = np.asarray(repeats)
    if reps.ndim > 1 or reps.size not in (1, n) or (reps < 0).any():
        raise ShapeError(f"{op}: repeats must be a non-negative int or one count per element "
                         f"({n}), got {repeats!r:.60}", user_frame())
    index = np.repeat(np.arange(n), np.broadcast_to(reps, (n,)))
    if total_length is not None:
        index = index[:total_length]
        fill = index[-1] if index.size else 0
        index = np.concatenate([index, np.full(total_length - index.size, fill, index.dtype)])
    return index


def _require_matrix(op, m):
    if m.ndim < 2:
        raise ShapeError(f"{op}: the input must have at least 2 dimensions, got {m.aval}",
                         user_frame())


def tril(m, k=0):
    m = asarray(m, op="tril")
    _require_matrix("tril", m)
    mask = tri(m.shape[-2], m.shape[-1], k, dtypes.bool_)
    return where(mask, m, _zero_like(m))


def triu(m, k=0):
    m = asarray(m, op="triu")
    _require_matrix("triu", m)
    mask = tri(m.shape[-2], m.shape[-1], k - 1, dtypes.bool_)
    return where(mask, _zero_like(m), m)


def _zero_like(x):
    """A scalar 0 of ``x``'s dtype and weak type: what a triangle or diagonal is padded
    with keeps a weakly typed input weak, as in JAX."""
    return convert(0, x.dtype, bool(x.weak_type))


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` over ``axis1`` and ``axis2``. Its weak type is JAX's: a
    gather keeps a weak ``a`` weak, but the main diagonal of a square 2-D non-bool matrix is
    strong (JAX sums it from a product with an identity of ``a``'s dtype)."""
    a = asarray(a)
    square_main = a.ndim == 2 and a.shape[0] == a.shape[1] and offset == 0 \
        and a.dtype != dtypes.bool_
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = a.shape[-2], a.shape[-1]
    rows = np.arange(builtins.max(0, -offset), builtins.min(n, m - offset))
    out = getitem(a, (Ellipsis, rows, rows + offset))
    return lax.convert_element_type(out, out.dtype) if square_main else out


def diag(v, k=0):
    v = asarray(v)
    if v.ndim == 1:
        n = v.shape[0] + builtins.abs(k)
        rows = np.arange(v.shape[0]) + builtins.max(0, -k)
        out = lax.broadcast_in_dim(_zero_like(v), (n, n), ())
        return out.at[rows, rows + k].set(v)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ShapeError("diag: input must be 1-D or 2-D", user_frame())


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sum of diagonal ``offset`` over axes ``axis1`` and ``axis2`` (in ``dtype``)."""
    return reductions.sum(diagonal(a, offset, axis1, axis2), -1, dtype=dtype, out=out)


_add_examples(globals(), """
array_split: ``ary`` split along ``axis`` into ``indices_or_sections`` parts; unlike ``split``
    the parts may differ in size by one.
    >>> pnp.array_split(pnp.arange(5), 2)
    [Array([0, 1, 2], dtype=int32), Array([3, 4], dtype=int32)]
atleast_1d: Each argument as an array with at least one dimension (a list of them for several
    arguments).
    >>> pnp.atleast_1d(3.0)
    Array([3.], dtype=float32, weak_type=True)
atleast_2d: Each argument as an array with at least two dimensions, adding leading axes.
    >>> pnp.atleast_2d(pnp.array([1, 2]))
    Array([[1, 2]], dtype=int32)
atleast_3d: Each argument as an array with at least three dimensions (a vector of n becomes 1 x
    n x 1).
    >>> pnp.atleast_3d(pnp.array([1, 2])).shape
    (1, 2, 1)
broadcast_arrays: The arguments broadcast to their common shape.
    >>> pnp.broadcast_arrays(pnp.array([1, 2]), pnp.array([[0], [10]]))
    [Array([[1, 2],
           [1, 2]], dtype=int32), Array([[ 0,  0],
           [10, 10]], dtype=int32)]
broadcast_to: ``array`` broadcast to ``shape`` (size-1 and missing leading axes repeat).
    >>> pnp.broadcast_to(pnp.array([1, 2]), (2, 2))
    Array([[1, 2],
           [1, 2]], dtype=int32)
column_stack: 1-D arrays as the columns of a 2-D array (2-D arrays are stacked along axis 1).
    >>> pnp.column_stack([pnp.array([1, 2]), pnp.array([3, 4])])
    Array([[1, 3],
           [2, 4]], dtype=int32)
concatenate: The ``arrays`` joined along an existing ``axis`` (``concat``; ``axis=None``
    flattens first).
    >>> pnp.concatenate([pnp.array([1, 2]), pnp.array([3])])
    Array([1, 2, 3], dtype=int32)
diag: The ``k``-th diagonal of a 2-D ``v``, or a 2-D array with the 1-D ``v`` on diagonal
    ``k``.
    >>> pnp.diag(pnp.array([1, 2]))
    Array([[1, 0],
           [0, 2]], dtype=int32)
    >>> pnp.diag(pnp.arange(6).reshape(2, 3))
    Array([0, 4], dtype=int32)
diagonal: The diagonal ``offset`` of the 2-D slices over ``axis1`` and ``axis2``, in the last
    axis of the result.
    >>> pnp.diagonal(pnp.arange(6).reshape(2, 3), offset=1)
    Array([1, 5], dtype=int32)
dsplit: ``ary`` (at least 3-D) split along its third axis.
    >>> [p.shape for p in pnp.dsplit(pnp.zeros((1, 1, 4)), 2)]
    [(1, 1, 2), (1, 1, 2)]
dstack: The arrays stacked along a third axis (made at least 3-D first).
    >>> pnp.dstack([pnp.array([1, 2]), pnp.array([3, 4])])
    Array([[[1, 3],
            [2, 4]]], dtype=int32)
expand_dims: ``a`` with a new size-1 axis at each position in ``axis``.
    >>> pnp.expand_dims(pnp.array([1, 2]), 0).shape
    (1, 2)
flip: ``m`` with the order of its elements reversed along ``axis`` (every axis by default).
    >>> pnp.flip(pnp.arange(6).reshape(2, 3), axis=1)
    Array([[2, 1, 0],
           [5, 4, 3]], dtype=int32)
fliplr: ``m`` with its columns (axis 1) reversed.
    >>> pnp.fliplr(pnp.arange(6).reshape(2, 3))
    Array([[2, 1, 0],
           [5, 4, 3]], dtype=int32)
flipud: ``m`` with its rows (axis 0) reversed.
    >>> pnp.flipud(pnp.arange(6).reshape(2, 3))
    Array([[3, 4, 5],
           [0, 1, 2]], dtype=int32)
hsplit: ``ary`` split along axis 1 (axis 0 for a vector).
    >>> pnp.hsplit(pnp.arange(4), 2)
    [Array([0, 1], dtype=int32), Array([2, 3], dtype=int32)]
hstack: The arrays joined along axis 1 (axis 0 for vectors).
    >>> pnp.hstack([pnp.array([1, 2]), pnp.array([3])])
    Array([1, 2, 3], dtype=int32)
matrix_transpose: ``x`` with its last two axes swapped (``x.mT``).
    >>> pnp.matrix_transpose(pnp.arange(6).reshape(2, 3))
    Array([[0, 3],
           [1, 4],
           [2, 5]], dtype=int32)
moveaxis: ``a`` with the axes ``source`` moved to positions ``destination``, the others keeping
    their order.
    >>> pnp.moveaxis(pnp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
permute_dims: ``a`` with its axes permuted by ``axes`` (the array API name of ``transpose``).
    >>> pnp.permute_dims(pnp.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
ravel: ``a`` flattened to one dimension (row-major, ``order='C'``).
    >>> pnp.ravel(pnp.arange(6).reshape(2, 3))
    Array([0, 1, 2, 3, 4, 5], dtype=int32)
repeat: Each element of ``a`` repeated ``repeats`` times along ``axis`` (flattened if None).
    >>> pnp.repeat(pnp.array([1, 2]), 2)
    Array([1, 1, 2, 2], dtype=int32)
    >>> pnp.repeat(pnp.array([1, 2]), pnp.array([1, 3]), total_repeat_length=4)
    Array([1, 2, 2, 2], dtype=int32)
reshape: ``a`` with the same elements in ``shape`` (one entry may be -1, inferred), row-major.
    >>> pnp.reshape(pnp.arange(6), (3, -1))
    Array([[0, 1],
           [2, 3],
           [4, 5]], dtype=int32)
roll: ``a`` with its elements shifted by ``shift`` along ``axis``, wrapping around (flattened
    if None).
    >>> pnp.roll(pnp.arange(5), 2)
    Array([3, 4, 0, 1, 2], dtype=int32)
split: ``ary`` split along ``axis`` into ``indices_or_sections`` equal parts, or at the given
    indices.
    >>> pnp.split(pnp.arange(6), [2, 3])
    [Array([0, 1], dtype=int32), Array([2], dtype=int32), Array([3, 4, 5], dtype=int32)]
squeeze: ``a`` without its size-1 axes (only those in ``axis`` if given).
    >>> pnp.squeeze(pnp.zeros((1, 3, 1))).shape
    (3,)
stack: The ``arrays`` (of one shape) joined along a new ``axis``.
    >>> pnp.stack([pnp.array([1, 2]), pnp.array([3, 4])], axis=1)
    Array([[1, 3],
           [2, 4]], dtype=int32)
swapaxes: ``a`` with ``axis1`` and ``axis2`` interchanged.
    >>> pnp.swapaxes(pnp.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
tile: ``A`` repeated ``reps`` times along each axis.
    >>> pnp.tile(pnp.array([1, 2]), (2, 2))
    Array([[1, 2, 1, 2],
           [1, 2, 1, 2]], dtype=int32)
transpose: ``a`` with its axes permuted by ``axes`` (reversed by default).
    >>> pnp.transpose(pnp.arange(6).reshape(2, 3))
    Array([[0, 3],
           [1, 4],
           [2, 5]], dtype=int32)
tril: ``m`` with the elements above diagonal ``k`` set to zero (over the last two axes).
    >>> pnp.tril(pnp.ones((3, 3), dtype=pnp.int32))
    Array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]], dtype=int32)
triu: ``m`` with the elements below diagonal ``k`` set to zero (over the last two axes).
    >>> pnp.triu(pnp.ones((3, 3), dtype=pnp.int32), k=1)
    Array([[0, 1, 1],
           [0, 0, 1],
           [0, 0, 0]], dtype=int32)
vsplit: ``ary`` (at least 2-D) split along axis 0.
    >>> pnp.vsplit(pnp.arange(4).reshape(2, 2), 2)
    [Array([[0, 1]], dtype=int32), Array([[2, 3]], dtype=int32)]
vstack: The arrays joined along axis 0 (vectors become rows).
    >>> pnp.vstack([pnp.array([1, 2]), pnp.array([3, 4])])
    Array([[1, 2],
           [3, 4]], dtype=int32)
rollaxis:
    >>> pnp.rollaxis(pnp.zeros((2, 3, 4)), 2).shape
    (4, 2, 3)
rot90:
    >>> pnp.rot90(pnp.array([[1, 2], [3, 4]]))
    Array([[2, 4],
           [1, 3]], dtype=int32)
trace:
    >>> pnp.trace(pnp.array([[1, 2], [3, 4]]))
    Array(5, dtype=int32)
unstack:
    >>> pnp.unstack(pnp.array([[1, 2], [3, 4]]))
    (Array([1, 2], dtype=int32), Array([3, 4], dtype=int32))
""")
