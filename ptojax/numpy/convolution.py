"""1-D ``convolve`` and ``correlate`` (modes "full", "same", "valid"), as one gather of the
sliding windows and one matrix-vector product (there is no convolution primitive)."""
from __future__ import annotations

import numpy as np

from ptojax import lax
from ptojax.errors import ShapeError
from ptojax.eval.array import Array
from ptojax.numpy._promote import promote_dtypes
from ptojax.numpy.indexing import take
from ptojax.numpy.products import matmul
from ptojax.ops.elementwise import zero_like
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples

_MODES = ("full", "same", "valid")


def _sliding(name, x, y, mode, preferred_element_type, flip_y, reverse_out):
    """``out[k] = sum_j xpad[k + j] * y'[j]`` with ``y'`` the (flipped) shorter operand."""
    if x.ndim != 1 or y.ndim != 1:
        raise ShapeError(f"{name}: only 1-D inputs are supported, got {x.aval} and {y.aval}",
                         user_frame())
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ShapeError(f"{name}: the inputs must not be empty, got {x.aval} and {y.aval}",
                         user_frame())
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {', '.join(_MODES)}, got {mode!r}")
    if flip_y:
        y = lax.rev(y, (0,))
    m = y.shape[0]
    before, after = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1),
                     "full": (m - 1, m - 1)}[mode]
    xpad = lax.pad(x, zero_like(x), [(before, after, 0)])
    count = xpad.shape[0] - m + 1
    windows = take(xpad, Array(np.arange(count)[:, None] + np.arange(m)[None, :]), axis=0)
    out = matmul(windows, y, preferred_element_type=preferred_element_type)
    return lax.rev(out, (0,)) if reverse_out else out


def _operands(name, a, v, preferred_element_type):
    kind = "float" if preferred_element_type is None else None
    return promote_dtypes(name, a, v, kind=kind)


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of two 1-D arrays (integers become floats unless
    ``preferred_element_type`` is given, as JAX)."""
    a, v = _operands("convolve", a, v, preferred_element_type)
    if a.shape[0] < v.shape[0]:
        a, v = v, a
    return _sliding("convolve", a, v, mode, preferred_element_type, True, False)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of two 1-D arrays (``sum_n a[n + k] * v[n]``)."""
    a, v = _operands("correlate", a, v, preferred_element_type)
    swap = a.shape[0] < v.shape[0]
    if swap:
        a, v = v, a
    return _sliding("correlate", a, v, mode, preferred_element_type, False, swap)


__all__ = ["convolve", "correlate"]


_add_examples(globals(), """
convolve:
    >>> pnp.convolve(pnp.array([1.0, 2.0, 3.0]), pnp.array([0.0, 1.0, 0.5]))
    Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
correlate:
    >>> pnp.correlate(pnp.array([1.0, 2.0, 3.0]), pnp.array([0.0, 1.0, 0.5]), mode='full')
    Array([0.5, 2. , 3.5, 3. , 0. ], dtype=float32)
""")
