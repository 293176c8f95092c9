"""Faster numpy forms of a few impls the numpy executor runs often: bit-for-bit the same,
except ``add_reduce``, which adds the same numbers in another order.

- ``select``: ``np.where`` branches per element, so over a mask of unpredictable bits (a ReLU's,
  a max pool's) it costs ~3.5 ns an element; a branch-free blend of the operands' bits
  (``b ^ ((a ^ b) & -mask)``) ~0.25 ns.
- ``reduce_sum`` over the leading axes of a contiguous array with short rows (batch-norm
  statistics of NHWC activations, ``(n, h, w, c) -> (c,)``): numpy's reduce over axis 0 runs
  a loop of ``c`` elements per row; folding ``k`` rows into one first (``(n/k, k*c)`` summed
  over axis 0, then ``(k, c)``) gives it long rows (13x faster for ``c = 16``).
- Arithmetic and comparisons of ml_dtypes' floats (bfloat16, float8): its ufuncs compute each
  element in float32 and round, one element at a time; converting the operands to float32,
  running numpy's vectorised float32 loop and rounding the result once is the same
  arithmetic (2-4x faster).
- ``pad`` and fills of ml_dtypes' floats through an integer view of their bits (their own
  copy and fill loops are per element: 3x slower).
- Widening ml_dtypes' one-byte types (float8/6/4, int4 & co) through a 256-entry table
  indexed by their bits: ml_dtypes' cast converts one element at a time (6x slower for
  float8 to float32); the table holds its own conversion of every bit pattern.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ptojax import dtypes

_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# ml_dtypes' float types: numpy runs their copies and ufuncs through per-element callbacks
_ML_FLOATS = frozenset(np.dtype(d) for d in (dtypes.bfloat16, *dtypes.NARROW_FLOATS))
# ufuncs whose ml_dtypes loop is "to float32, the float32 operation, round back"
_COMPARISONS = frozenset((np.equal, np.not_equal, np.less, np.less_equal, np.greater,
                          np.greater_equal))
_VIA_F32 = _COMPARISONS | {np.add, np.subtract, np.multiply, np.divide}
_FOLD_MAX_ROW = 256      # rows of at most this many elements are folded before summing
_FOLD_TARGET = 1024      # ... into rows of about this many
_FOLD_MIN_SIZE = 4096    # below, the fold's second reduce costs more than it saves (25x25:
                         # 3.8 us folded, 1.6 us not; 256x16 5.5 vs 6.2)


def bits(a: np.ndarray) -> np.ndarray:
    """``a``'s elements as unsigned integers of the same size (a view)."""
    return a.view(_BITS[a.dtype.itemsize])


def is_ml_float(dtype) -> bool:
    return np.dtype(dtype) in _ML_FLOATS


def select(pred, on_true, on_false):
    """``np.where(pred, on_true, on_false)`` (operands of one dtype, rank 0 or the result's
    shape), branch-free for arrays of a plain element size; between scalars (an index
    clamp), a 0-d copy of the one chosen, without ``np.where``'s setup."""
    kind_t, kind_f = getattr(on_true, "dtype", None), getattr(on_false, "dtype", None)
    if kind_t is not None and kind_t == kind_f and getattr(pred, "dtype", None) == np.bool_ \
            and pred.ndim == 0 and on_true.ndim == 0 and on_false.ndim == 0:
        return np.array(on_true if pred else on_false)
    pred, on_true, on_false = np.asarray(pred), np.asarray(on_true), np.asarray(on_false)
    if max(pred.size, on_true.size, on_false.size) < 4096:   # small: np.where (no setup)
        return np.where(pred, on_true, on_false)
    dtype = on_true.dtype
    shape = np.broadcast_shapes(pred.shape, on_true.shape, on_false.shape)
    if dtype.itemsize not in _BITS or dtype.kind == "O" or dtype != on_false.dtype \
            or math.prod(shape) < 4096:
        return np.where(pred, on_true, on_false)
    kind = _BITS[dtype.itemsize]
    t, f = on_true.view(kind), on_false.view(kind)
    mask = np.broadcast_to(pred, shape).astype(kind)   # 0 or 1
    np.negative(mask, out=mask)                         # 0 or all ones
    out = np.bitwise_xor(t, f, out=np.empty(shape, kind))
    np.bitwise_and(out, mask, out=out)
    np.bitwise_xor(out, f, out=out)
    return out.view(dtype)


def add_reduce(x: np.ndarray, axes, dtype):
    """``np.add.reduce(x, axis=axes, dtype=dtype)``, with leading axes of a contiguous ``x``
    over short rows folded first (see the module's docstring)."""
    axes = tuple(axes)
    lead = len(axes)
    if lead == 0 or lead == x.ndim or axes != tuple(range(lead)) \
            or not x.flags.c_contiguous or x.size < _FOLD_MIN_SIZE:
        return np.add.reduce(x, axis=axes, dtype=dtype)
    rows = math.prod(x.shape[:lead])
    row = x.size // rows
    fold = math.gcd(rows, _FOLD_TARGET // row) if row <= _FOLD_MAX_ROW else 1
    if fold <= 1:
        return np.add.reduce(x, axis=axes, dtype=dtype)
    partial = np.add.reduce(x.reshape(rows // fold, fold * row), axis=0, dtype=dtype)
    return np.add.reduce(partial.reshape(fold, *x.shape[lead:]), axis=0, dtype=dtype)


@functools.lru_cache(maxsize=None)
def _widening_table(dtype, wide) -> np.ndarray:
    return np.arange(256, dtype=np.uint8).view(dtype).astype(wide)


def widened(a: np.ndarray, wide) -> np.ndarray:
    """``a.astype(wide)`` (exact: float32 for ml_dtypes floats, int32 for int4 & co), by
    table for one-byte ml_dtypes types."""
    a = np.asarray(a)
    if a.dtype.itemsize == 1 and (a.dtype in _ML_FLOATS or a.dtype in dtypes.NARROW_INTS):
        return np.take(_widening_table(a.dtype, np.dtype(wide)), a.view(np.uint8))
    return a.astype(wide)


def ufunc_via_f32(ufunc, dtype):
    """``ufunc`` for operands of ml_dtypes float ``dtype`` computed in float32 (the same
    rounding as ml_dtypes' own loop), or None where that is not known to be exact."""
    if ufunc not in _VIA_F32 or not is_ml_float(dtype):
        return None
    f32, compares = np.float32, ufunc in _COMPARISONS

    def run(*args, out=None):
        wide = [widened(a, f32) for a in args]
        if compares:
            return ufunc(*wide, out=out)
        shape = np.broadcast_shapes(*(w.shape for w in wide))
        into = next((w for w in wide if w.shape == shape), None)
        result = ufunc(*wide, out=into)
        if out is not None:
            np.copyto(out, result, casting="unsafe")
            return out
        return result.astype(dtype)
    run.__name__ = f"{ufunc.__name__}_via_float32"
    return run


def narrow_int_outputs(outputs):
    """The dtypes of an equation's ``outputs`` if one is a narrow integer (int4 & co), whose
    ml_dtypes loops mostly answer in int8, else None."""
    kinds = tuple(getattr(v.type, "dtype", None) for v in outputs)
    return kinds if any(k in dtypes.NARROW_INTS for k in kinds) else None


def cast_results(fn, kinds, multiple: bool):
    """``fn`` with its results converted to ``kinds`` (an int8 result to int4 wraps around,
    as the narrow type's arithmetic does)."""
    def run(*args):
        out = fn(*args)
        if multiple:
            return [_as(o, k) for o, k in zip(out, kinds)]
        return _as(out, kinds[0])
    return run


def _as(value, dtype):
    value = np.asarray(value)
    return value if dtype is None or value.dtype == dtype else value.astype(dtype)


def full(shape, value, dtype) -> np.ndarray:
    """``np.full(shape, value, dtype)``; for ml_dtypes floats through their bits."""
    if not is_ml_float(dtype):
        return np.full(shape, value, dtype=dtype)
    one = np.asarray(value).astype(dtype)
    return np.full(shape, bits(one), dtype=bits(one).dtype).view(dtype)


def assign(out: np.ndarray, index, x: np.ndarray) -> None:
    """``out[index] = x``; for ml_dtypes floats through their bits."""
    if is_ml_float(out.dtype) and x.dtype == out.dtype:
        bits(out)[index] = bits(np.asarray(x))
    else:
        out[index] = x
