"""sort, argsort (stable; NaNs last) along an axis."""
from __future__ import annotations

from ptojax import dtypes, lax
from ptojax.numpy._promote import asarray


def sort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    a = asarray(a)
    if axis is None:
        a, axis = lax.reshape(a, (a.size,)), 0
    out = lax.sort(a, dimension=axis)
    return lax.rev(out, (axis % a.ndim,)) if descending else out


def argsort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    a = asarray(a)
    if axis is None:
        a, axis = lax.reshape(a, (a.size,)), 0
    axis = axis % a.ndim
    iota = lax.broadcasted_iota(dtypes.int32, a.shape, axis)
    if descending:  # stable descending order: sort the reversed array, map indices back
        rev = lax.rev(a, (axis,))
        _, idx = lax.sort((rev, iota), dimension=axis, num_keys=1)
        return lax.rev(lax.sub(a.shape[axis] - 1, idx), (axis,))
    _, idx = lax.sort((a, iota), dimension=axis, num_keys=1)
    return idx
