"""Array creation: array/asarray/zeros/ones/full/arange/linspace/eye/... and *_like.

Without a dtype, values made of Python numbers get the default dtypes (float32, int32;
float64, int64 in x64 mode); numpy inputs keep theirs, 32-bit without x64, as JAX does
(a 64-bit ``dtype`` is narrowed then, with JAX's warning).
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import (ConcretizationError, ShapeError, UnsupportedError, is_masked_array,
                           located)
from ptojax.numpy._promote import (array_from as _array_from, asarray as _asarray,
                                   broadcast_to_shape, result_type, supported_dtype,
                                   to_inexact)
from ptojax.eval.leaves import check_arraylike
from ptojax.eval.array import Array
from ptojax.eval.key_array import PRNGKeyArray as _KeyArray
from ptojax.ir.symbolic import DimExpr, as_index, bounds, is_index_scalar, slice_indices
from ptojax.numpy import math as m
from ptojax.numpy._axes import normalize_axis
from ptojax.ops.convert import convert_element_type as convert_exactly
from ptojax.ops.shape import move_axis
from ptojax.source_info import user_frame
from ptojax.trace import Tracer, is_concrete, tracing
from ptojax.public import add_examples as _add_examples


def asarray(a, dtype=None, copy=None):
    if isinstance(a, _KeyArray) and dtype is None:
        return a   # typed keys are arrays of their own dtype, as in JAX
    if isinstance(a, (list, tuple)) and a and dtype is None \
            and all(isinstance(k, _KeyArray) for k in a):
        return _stacked_keys(a)
    return _array_from(a, dtype, op="asarray")


def _stacked_keys(keys):
    shapes = {k.shape for k in keys}
    if len(shapes) != 1:
        raise ShapeError(f"array: keys of different shapes {sorted(shapes)} cannot be stacked",
                         user_frame())
    words = [lax.expand_dims(k.data, (0,)) for k in keys]
    return _KeyArray(lax.concatenate(words, 0))


def array(object, dtype=None, copy=True, ndmin: int = 0):
    if isinstance(object, (list, tuple)) and object and dtype is None \
            and all(isinstance(k, _KeyArray) for k in object):
        return _stacked_keys(object)   # a list of typed keys: a key array, as JAX
    if is_masked_array(object):
        object = np.asarray(object)   # its data, as JAX's jnp.array (other functions refuse it)
    out = _array_from(object, dtype, op="array")
    if isinstance(object, (list, tuple)) and out.weak_type:
        out = lax.convert_element_type(out, out.dtype)   # a list is strong, as JAX's
    if out.ndim < ndmin:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def copy(a, order=None):
    """A copy of ``a`` (ptojax arrays are immutable, so this is ``array(a)``); ``order``
    other than "K" is not supported, as in JAX."""
    if order is not None and order != "K":
        raise UnsupportedError(f"copy: only order='K' is supported, got order={order!r}",
                               user_frame())
    return array(_asarray(a, op="copy"))


def _shape(op, shape) -> tuple:
    if is_index_scalar(shape):
        shape = (shape,)
    try:
        shape = tuple(as_index(d) for d in shape)
    except TypeError:
        raise ShapeError(f"{op}: shape must be an int or a tuple of ints, got {shape!r:.60}",
                         user_frame()) from None
    if any(d < 0 for d in shape):
        raise ShapeError(f"{op}: negative dimensions are not allowed, got {shape}",
                         user_frame())
    return shape


def _dtype(op, dtype, default):
    return supported_dtype(dtype, op) if dtype is not None else default


def full(shape, fill_value, dtype=None):
    """``fill_value`` broadcast to ``shape``. As JAX: weak when ``dtype`` is None and the fill
    is weak; a Python int fill converts to ``dtype`` as convert_element_type does (wrapping).
    Eagerly the result is allocated; while tracing it is a broadcast of the fill (no constant
    of the full size in the IR)."""
    return _full("full", _shape("full", shape), fill_value, dtype)


def _full(op, shape, fill_value, dtype, weak=None):
    if dtype is None:
        fill = _asarray(fill_value, op=op)
    else:
        fill = lax.convert_element_type(_fill_value(op, fill_value), _dtype(op, dtype, None),
                                        weak_type=bool(weak))
    if fill.ndim == 0 and type(fill) is Array and not tracing():
        try:
            return Array(np.full(shape, fill._value, fill.dtype), fill.weak_type)
        except Exception as e:  # too large to allocate
            raise located(e, user_frame(), f"{op}{shape}")
    if fill.ndim == 0:
        return lax.broadcast_in_dim(fill, shape, ())
    return broadcast_to_shape(fill, shape, op)


def _fill_value(op, fill_value):
    """A fill value: Python scalars as they are (converted with their full value), anything
    else as an array."""
    return fill_value if type(fill_value) in (int, float, bool) else _asarray(fill_value, op=op)


def zeros(shape, dtype=None):
    return _full("zeros", _shape("zeros", shape), 0, _dtype("zeros", dtype, dtypes.default_float()))


def ones(shape, dtype=None):
    return _full("ones", _shape("ones", shape), 1, _dtype("ones", dtype, dtypes.default_float()))


def empty(shape, dtype=None):
    return _full("empty", _shape("empty", shape), 0, _dtype("empty", dtype, dtypes.default_float()))


def _like(op, a, fill_value, dtype, shape):
    """``full`` shaped and typed like ``a``: weak when ``a`` is, no dtype is given and the
    fill value is a scalar (as JAX's, which converts an array fill value to ``a``'s dtype)."""
    a = _asarray(a, op=op)
    shape = _shape(op, shape) if shape is not None else tuple(a.shape)
    if dtype is None:   # exactly ``a``'s dtype: an internal float64 value (x64 off) stays so
        weak = a.weak_type and np.ndim(fill_value) == 0
        fill = convert_exactly(_fill_value(op, fill_value), a.dtype, weak_type=weak)
        return _full(op, shape, fill, None)
    return _full(op, shape, fill_value, _dtype(op, dtype, None), False)


def full_like(a, fill_value, dtype=None, shape=None):
    return _like("full_like", a, fill_value, dtype, shape)


def zeros_like(a, dtype=None, shape=None):
    return _like("zeros_like", a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None):
    return _like("ones_like", a, 1, dtype, shape)


def empty_like(a, dtype=None, shape=None):
    return _like("empty_like", a, 0, dtype, shape)


def _static_number(op, name, v):
    if isinstance(v, Tracer) and not is_concrete(v):  # concrete under eager transforms
        raise ConcretizationError(f"{op}: {name} must be concrete (the length of the result is "
                                  f"part of its shape); pass it as a Python number or mark it "
                                  f"static", user_frame())
    return v.item() if hasattr(v, "item") else v


def arange(start, stop=None, step=None, dtype=None):
    args = [v for v in (start, stop, step) if v is not None]
    values = [_static_number("arange", n, v) for n, v in zip(("start", "stop", "step"), args)]
    if dtype is None:
        dtype = result_type(*args, op="arange")[0]
    dtype = _dtype("arange", dtype, None)
    begin, end, stride = (0, values[0], 1) if stop is None else \
        (values[0], values[1], values[2] if step is not None else 1)
    if stride == 0:
        raise ShapeError("arange: step must not be zero", user_frame())
    if any(type(v) is DimExpr for v in (begin, end, stride)):   # a symbolic length
        return _iota_ramp(begin, stride, slice_indices(slice(begin, end, stride), end)[3],
                          dtype)
    if all(isinstance(v, (int, np.integer)) for v in (begin, end, stride)):
        count = len(range(begin, end, stride))
    else:  # numpy's length of a float range
        count = max(0, math.ceil((end - begin) / stride))
    integral = all(float(v).is_integer() for v in (begin, stride))
    if integral and (tracing() or (dtypes.is_integer(dtype) and (begin, stride) == (0, 1))):
        return _iota_ramp(int(begin), int(stride), count, dtype)
    # fractional steps stay numpy's values (a constant under tracing, as in JAX)
    return Array(np.arange(begin, end, stride).astype(dtype))


def _iota_ramp(begin: int, stride: int, count: int, dtype):
    """``begin + stride * i`` for i < count, exactly (integer arithmetic, then ``dtype``)."""
    last = begin + stride * max(count - 1, 0)
    work = dtypes.int32 if all(-2**31 <= v < 2**31 for v in bounds(begin) + bounds(last)) \
        else dtypes.int64
    ramp = lax.iota(work, count)
    if stride != 1:
        ramp = lax.mul(ramp, lax.convert_element_type(stride, work))
    if begin != 0:
        ramp = lax.add(ramp, lax.convert_element_type(begin, work))
    return lax.convert_element_type(ramp, dtype)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0):
    """``num`` evenly spaced values from start to stop; integer dtypes take the floor."""
    num = operator.index(_static_number("linspace", "num", num))
    if num < 0:
        raise ShapeError(f"linspace: the number of samples must be non-negative, got {num}",
                         user_frame())
    inputs = to_inexact(result_type(start, stop, op="linspace")[0])
    dtype = _dtype("linspace", dtype, inputs)
    compute = max(dtype, dtypes.float32, key=lambda d: d.itemsize) \
        if dtypes.is_float(dtype) else inputs
    start, stop = _asarray(start, compute, "linspace"), _asarray(stop, compute, "linspace")
    delta = m.subtract(stop, start)
    divisions = (num - 1) if endpoint else num
    ramp = lax.iota(compute, num)
    for _ in range(max(start.ndim, stop.ndim)):
        ramp = lax.expand_dims(ramp, (ramp.ndim,))
    if divisions > 0:
        step = m.divide(delta, float(divisions))
        # JAX's formula: start * (1 - t) + stop * t reaches both ends exactly
        fraction = m.divide(ramp, float(divisions))
        out = m.add(m.multiply(start, m.subtract(1.0, fraction)), m.multiply(stop, fraction))
    else:  # one sample or none: the step is undefined, a NaN scalar (as JAX)
        step = lax.convert_element_type(float("nan"), compute)
        bounds = np.broadcast_shapes(tuple(start.shape), tuple(stop.shape))
        out = m.add(broadcast_to_shape(start, bounds, "linspace"), m.multiply(ramp, 0.0))
    if endpoint and num > 1:
        out = m.where(m.equal(ramp, num - 1), stop, out)
    if axis != 0:
        out = move_axis(out, 0, normalize_axis("linspace", axis, out.ndim))
    if dtypes.is_integer(dtype):
        out = m.floor(out)
    out = lax.convert_element_type(out, dtype)
    if not retstep:
        return out
    return out, lax.convert_element_type(step, dtype if dtypes.is_float(dtype) else compute)


def _grid(op, N, M, dtype, default=None):
    N = as_index(N)
    M = N if M is None else as_index(M)
    if N < 0 or M < 0:
        raise ShapeError(f"{op}: the number of rows and columns must be non-negative, got "
                         f"{N} and {M}", user_frame())
    dtype = _dtype(op, dtype, default or dtypes.default_float())
    return (lax.broadcasted_iota(dtypes.int32, (N, M), 0),
            lax.broadcasted_iota(dtypes.int32, (N, M), 1), dtype)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None):
    check_arraylike("eye", k)
    rows, cols, dtype = _grid("eye", N, M, dtype)
    return lax.convert_element_type(lax.eq(lax.add(rows, operator.index(k)), cols), dtype)


def identity(n: int, dtype=None):
    return eye(n, dtype=None if dtype is None else supported_dtype(dtype, "identity"))


def tri(N: int, M: int | None = None, k: int = 0, dtype=None):
    rows, cols, dtype = _grid("tri", N, M, dtype, dtypes.float32)  # float32 also in x64, as JAX
    return lax.convert_element_type(lax.ge(lax.add(rows, operator.index(k)), cols), dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays of the grid spanned by the 1-D ``xi`` ("xy": the first two axes
    swapped, as NumPy); ``sparse=True`` keeps each one broadcastable instead of full."""
    if indexing not in ("xy", "ij"):
        raise ShapeError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}",
                         user_frame())
    if not copy:
        raise ValueError("meshgrid: ptojax arrays are immutable, only copy=True is supported")
    xs = [_asarray(x, op="meshgrid") for x in xi]
    if any(x.ndim != 1 for x in xs):
        raise ShapeError(f"meshgrid: the arguments must be 1-D, got "
                         f"{', '.join(str(x.aval) for x in xs)}", user_frame())
    swap = indexing == "xy" and len(xs) >= 2
    order = [1, 0] + list(range(2, len(xs))) if swap else list(range(len(xs)))
    sizes = [xs[i].shape[0] for i in order]
    out = [None] * len(xs)
    for position, i in enumerate(order):
        shape = [1] * len(xs) if sparse else list(sizes)
        shape[position] = sizes[position]
        out[i] = lax.broadcast_in_dim(xs[i], tuple(shape), (position,))
    return out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``."""
    inexact = to_inexact(result_type(start, stop, op="logspace")[0])
    dtype = _dtype("logspace", dtype, inexact)
    compute = to_inexact(dtype)
    exponents = linspace(_asarray(start, compute, "logspace"),
                         _asarray(stop, compute, "logspace"), num, endpoint, axis=axis)
    return lax.convert_element_type(m.power(base, exponents), dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Values evenly spaced on a log scale from ``start`` to ``stop`` (same sign)."""
    inexact = to_inexact(result_type(start, stop, op="geomspace")[0])
    dtype = _dtype("geomspace", dtype, inexact)
    compute = to_inexact(dtype)
    start, stop = _asarray(start, compute, "geomspace"), _asarray(stop, compute, "geomspace")
    sign = m.sign(start)
    out = m.multiply(sign, logspace(m.log10(m.divide(start, sign)),
                                    m.log10(m.divide(stop, sign)), num, endpoint, 10.0,
                                    compute, 0))
    if axis != 0:
        out = move_axis(out, 0, normalize_axis("geomspace", axis, out.ndim))
    return lax.convert_element_type(out, dtype)


_add_examples(globals(), """
arange: Evenly spaced values in [``start``, ``stop``) with ``step`` (``arange(stop)`` starts at
    0); integers unless a bound or ``dtype`` is a float.
    >>> pnp.arange(5)
    Array([0, 1, 2, 3, 4], dtype=int32)
    >>> pnp.arange(1.0, 2.0, 0.25)
    Array([1.  , 1.25, 1.5 , 1.75], dtype=float32)
array: An array from ``object`` (nested lists, NumPy arrays, scalars, arrays), with ``dtype``
    (default: inferred, 64-bit narrowed to 32-bit as JAX) and at least ``ndmin`` dimensions.
    >>> pnp.array([[1, 2], [3, 4]])
    Array([[1, 2],
           [3, 4]], dtype=int32)
    >>> pnp.array([1, 2], dtype=pnp.float32, ndmin=2)
    Array([[1., 2.]], dtype=float32)
asarray: ``a`` as an array of ``dtype`` (an array of that dtype is returned as is).
    >>> pnp.asarray([1.5, 2.5])
    Array([1.5, 2.5], dtype=float32)
copy: A copy of ``a`` (an array of the same values, shape and dtype).
    >>> pnp.copy(pnp.array([1, 2]))
    Array([1, 2], dtype=int32)
empty: An array of ``shape`` and ``dtype`` (float32 by default); its values are zeros, as in
    JAX.
    >>> pnp.empty((2, 2))
    Array([[0., 0.],
           [0., 0.]], dtype=float32)
empty_like: An array of the shape and dtype of ``prototype`` (or the ``dtype``/``shape``
    given), filled with zeros as in JAX.
    >>> pnp.empty_like(pnp.array([1, 2, 3]))
    Array([0, 0, 0], dtype=int32)
eye: An ``N`` x ``M`` (default ``N`` x ``N``) array with ones on diagonal ``k`` and zeros
    elsewhere.
    >>> pnp.eye(2, 3, k=1)
    Array([[0., 1., 0.],
           [0., 0., 1.]], dtype=float32)
full_like: An array of the shape and dtype of ``a`` (or the ``dtype``/``shape`` given) filled
    with ``fill_value``.
    >>> pnp.full_like(pnp.array([1, 2, 3]), 7)
    Array([7, 7, 7], dtype=int32)
identity: The ``n`` x ``n`` identity matrix.
    >>> pnp.identity(2, dtype=pnp.int32)
    Array([[1, 0],
           [0, 1]], dtype=int32)
ones: An array of ``shape`` filled with ones (float32 by default).
    >>> pnp.ones((2, 3))
    Array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32)
ones_like: An array of ones of the shape and dtype of ``a`` (or the ``dtype``/``shape`` given).
    >>> pnp.ones_like(pnp.array([1.0, 2.0]))
    Array([1., 1.], dtype=float32)
tri: An ``N`` x ``M`` array with ones at and below diagonal ``k``, zeros above.
    >>> pnp.tri(3, k=0, dtype=pnp.int32)
    Array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]], dtype=int32)
zeros: An array of ``shape`` filled with zeros (float32 by default).
    >>> pnp.zeros((2, 2), dtype=pnp.int32)
    Array([[0, 0],
           [0, 0]], dtype=int32)
zeros_like: An array of zeros of the shape and dtype of ``a`` (or the ``dtype``/``shape``
    given).
    >>> pnp.zeros_like(pnp.array([1, 2, 3]))
    Array([0, 0, 0], dtype=int32)
full:
    >>> pnp.full((2, 2), 7)
    Array([[7, 7],
           [7, 7]], dtype=int32, weak_type=True)
linspace:
    >>> pnp.linspace(0.0, 1.0, 5)
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
geomspace:
    >>> pnp.geomspace(1.0, 1000.0, 4)
    Array([   1.,   10.,  100., 1000.], dtype=float32)
logspace:
    >>> pnp.logspace(0.0, 2.0, 3)
    Array([  1.,  10., 100.], dtype=float32)
meshgrid:
    >>> pnp.meshgrid(pnp.array([1, 2, 3]), pnp.array([10, 20]))
    [Array([[1, 2, 3],
           [1, 2, 3]], dtype=int32), Array([[10, 10, 10],
           [20, 20, 20]], dtype=int32)]
""")
