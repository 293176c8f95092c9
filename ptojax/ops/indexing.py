"""Indexing primitives: dynamic_slice, dynamic_update_slice, gather and scatter.

``gather``/``scatter`` are point-indexing with optional paired batch dimensions:

    operand : B + O                (B = the first ``nbatch`` dims)
    indices : B + I + (len(axes),) (integer; indices[..., j] indexes O's axis ``axes[j]``)
    result  : B + I + (O without ``axes``)

``result[b, i, rest] = operand[b, O-index with axes[j] = indices[b, i, j], rest]``. A gather
index out of bounds is clamped (mode "clip") or yields ``fill_value`` (mode "fill"); scatter
drops out-of-bounds updates, as XLA does. Negative indices are out of bounds here:
``ptojax.numpy`` normalizes them first. Scatter modes: add, set, mul, min, max.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.ir.types import TensorType
from ptojax.ops.checks import check_axes, fmt_types, require_same_dtype
from ptojax.trace import Primitive


def _require_int_scalars(name, idx):
    for t in idx:
        if t.shape != () or not dtypes.is_integer(t.dtype):
            raise DtypeError(f"{name}: start indices must be integer scalars, got {t}")


def _dynamic_slice_abstract(x, *starts, slice_sizes):
    _require_int_scalars("dynamic_slice", starts)
    if len(starts) != x.ndim or len(slice_sizes) != x.ndim:
        raise ShapeError(f"dynamic_slice: {x} needs {x.ndim} start indices and slice sizes, "
                         f"got {len(starts)} and {tuple(slice_sizes)}")
    for d, (n, s) in enumerate(zip(x.shape, slice_sizes)):
        if not 0 <= s <= n:
            raise ShapeError(f"dynamic_slice: slice size {s} does not fit dimension {d} "
                             f"of {x}")
    return TensorType(slice_sizes, x.dtype, x.weak_type)


def _clamped_starts(shape, sizes, starts):
    return [int(min(max(int(s), 0), n - k)) for n, k, s in zip(shape, sizes, starts)]


def _dynamic_slice(x, *starts, slice_sizes):
    starts = _clamped_starts(x.shape, slice_sizes, starts)
    return x[tuple(slice(s, s + k) for s, k in zip(starts, slice_sizes))]


dynamic_slice_p = Primitive("dynamic_slice", _dynamic_slice_abstract, _dynamic_slice)


def _dynamic_update_slice_abstract(x, update, *starts):
    _require_int_scalars("dynamic_update_slice", starts)
    require_same_dtype("dynamic_update_slice", (x, update))
    if len(starts) != x.ndim or update.ndim != x.ndim or any(
            u > n for u, n in zip(update.shape, x.shape)):
        raise ShapeError(f"dynamic_update_slice: update {update} with {len(starts)} start "
                         f"indices does not fit in {x}")
    return x


def _dynamic_update_slice(x, update, *starts):
    starts = _clamped_starts(x.shape, update.shape, starts)
    out = np.array(x, copy=True)
    out[tuple(slice(s, s + k) for s, k in zip(starts, update.shape))] = update
    return out


dynamic_update_slice_p = Primitive("dynamic_update_slice", _dynamic_update_slice_abstract,
                                   _dynamic_update_slice)


# gather / scatter ----------------------------------------------------------------------------
def _gather_shape(name, operand, indices, axes, nbatch):
    if not dtypes.is_integer(indices.dtype):
        raise DtypeError(f"{name}: indices must be integers, got {indices}")
    if indices.ndim < nbatch + 1 or indices.shape[-1] != len(axes):
        raise ShapeError(f"{name}: indices {indices} must end in a dimension of size "
                         f"{len(axes)} (one entry per indexed axis {tuple(axes)})")
    if operand.shape[:nbatch] != indices.shape[:nbatch]:
        raise ShapeError(f"{name}: the {nbatch} batch dimensions of {operand} and {indices} "
                         f"differ")
    o_shape = operand.shape[nbatch:]
    axes = check_axes(name, axes, len(o_shape))
    rest = tuple(d for i, d in enumerate(o_shape) if i not in axes)
    return indices.shape[:-1] + rest


def _gather_abstract(operand, indices, axes, nbatch=0, mode="clip", fill_value=None):
    if mode not in ("clip", "fill"):
        raise ValueError(f"gather: mode must be 'clip' or 'fill', got {mode!r}")
    return TensorType(_gather_shape("gather", operand, indices, axes, nbatch), operand.dtype,
                      operand.weak_type)


def _index_tuple(shape, indices, axes, nbatch):
    """Operand transposed to B + axes + rest, and the advanced index selecting B + I."""
    o_ndim = len(shape) - nbatch
    rest = [nbatch + d for d in range(o_ndim) if d not in axes]
    perm = list(range(nbatch)) + [nbatch + a for a in axes] + rest
    lead = indices.shape[:-1]
    index = []
    for b in range(nbatch):
        ramp_shape = [1] * len(lead)
        ramp_shape[b] = shape[b]
        index.append(np.arange(shape[b]).reshape(ramp_shape))
    index += [indices[..., j] for j in range(len(axes))]
    return perm, tuple(index)


def _in_bounds(shape, indices, axes, nbatch):
    o_shape = shape[nbatch:]
    ok = np.ones(indices.shape[:-1], dtype=bool)
    for j, a in enumerate(axes):
        ok &= (indices[..., j] >= 0) & (indices[..., j] < o_shape[a])
    return ok


def _gather(operand, indices, axes, nbatch=0, mode="clip", fill_value=None):
    o_shape = operand.shape[nbatch:]
    clipped = np.stack([np.clip(indices[..., j], 0, max(o_shape[a] - 1, 0))
                        for j, a in enumerate(axes)], axis=-1) if axes else indices
    perm, index = _index_tuple(operand.shape, clipped, axes, nbatch)
    out = np.transpose(operand, perm)[index]
    if mode == "fill":
        ok = _in_bounds(operand.shape, indices, axes, nbatch)
        if not ok.all():
            fill = _default_fill(operand.dtype) if fill_value is None else fill_value
            out = np.where(ok.reshape(ok.shape + (1,) * (out.ndim - ok.ndim)), out,
                           np.asarray(fill, operand.dtype))
    return out


def _default_fill(dtype):
    if dtypes.is_float(dtype):
        return np.nan
    if dtype == dtypes.bool_:
        return True
    return np.iinfo(dtype).min if dtypes.is_integer(dtype) else 0


gather_p = Primitive("gather", _gather_abstract, _gather)

SCATTER_MODES = ("add", "set", "mul", "min", "max")


def _scatter_abstract(operand, indices, updates, axes, nbatch=0, mode="add"):
    if mode not in SCATTER_MODES:
        raise ValueError(f"scatter: mode must be one of {SCATTER_MODES}, got {mode!r}")
    require_same_dtype("scatter", (operand, updates))
    expected = _gather_shape("scatter", operand, indices, axes, nbatch)
    if updates.shape != expected:
        raise ShapeError(f"scatter: updates must have shape {expected} for operand and "
                         f"indices ({fmt_types((operand, indices, updates))})")
    return operand


_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter(operand, indices, updates, axes, nbatch=0, mode="add"):
    out = np.array(operand, copy=True)
    perm, index = _index_tuple(operand.shape, indices, axes, nbatch)
    ok = _in_bounds(operand.shape, indices, axes, nbatch)
    lead = indices.shape[:-1]
    full = [np.broadcast_to(ix, lead)[ok] for ix in index]
    upd = updates[ok]
    view = np.transpose(out, perm)
    if mode == "set":
        view[tuple(full)] = upd
    else:
        _UFUNC[mode].at(view, tuple(full), upd)
    return out


scatter_p = Primitive("scatter", _scatter_abstract, _scatter)
