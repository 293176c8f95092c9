"""Sliding-window geometry shared by convolution and reduce_window: padding strings, dilated
sizes, output sizes, and the numpy window view their host implementations read."""
from __future__ import annotations

import numpy as np

from ptojax.errors import ShapeError
from ptojax.public import add_examples as _add_examples


def dilate_dim(size: int, dilation: int) -> int:
    """The size of a dimension of ``size`` with ``dilation - 1`` holes between elements."""
    return 0 if size == 0 else 1 + dilation * (size - 1)


def strided_dim(size: int, window: int, stride: int) -> int:
    """How many windows of ``window`` at ``stride`` fit in ``size``."""
    return 0 if size < window else (size - window) // stride + 1


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list:
    """``(low, high)`` pairs for 'VALID', 'SAME' (extra at the end) or 'SAME_LOWER' (extra at
    the start), as in ``jax.lax.padtype_to_pads``."""
    mode = padding.upper() if isinstance(padding, str) else padding
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise ShapeError(f"padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of "
                         f"(low, high) pairs, got {padding!r}")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-n // s) - 1) * s + w - n, 0)
        small, large = total // 2, total - total // 2
        pads.append((large, small) if mode == "SAME_LOWER" else (small, large))
    return pads


def explicit_pads(name: str, padding, in_shape, window_shape, window_strides) -> tuple:
    """``padding`` (a string or (low, high) pairs) as a tuple of int pairs."""
    if isinstance(padding, str):
        return tuple(padtype_to_pads(in_shape, window_shape, window_strides, padding))
    try:
        pads = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ShapeError(f"{name}: padding must be a string or a sequence of (low, high) "
                         f"pairs, got {padding!r}") from None
    if len(pads) != len(in_shape):
        raise ShapeError(f"{name}: padding has {len(pads)} pairs for {len(in_shape)} "
                         f"windowed dimensions")
    return pads


def dilate_and_pad(x: np.ndarray, first: int, dilation, pads, value=0) -> np.ndarray:
    """``x`` with dims ``first:first + len(pads)`` dilated (holes of ``value``) and padded by
    ``pads`` (negative pads crop), as ``lax.pad`` with interior padding."""
    k = len(pads)
    spatial = x.shape[first:first + k]
    grown = [dilate_dim(n, d) + max(lo, 0) + max(hi, 0)
             for n, d, (lo, hi) in zip(spatial, dilation, pads)]
    if all(d == 1 for d in dilation) and all(lo == hi == 0 for lo, hi in pads):
        return x
    out = np.full(x.shape[:first] + tuple(grown) + x.shape[first + k:], value, x.dtype)
    lead = (np.s_[:],) * first
    inner = tuple(np.s_[max(lo, 0):max(lo, 0) + dilate_dim(n, d):d]
                  for n, d, (lo, _) in zip(spatial, dilation, pads))
    out[lead + inner] = x
    crop = tuple(np.s_[max(-lo, 0):g - max(-hi, 0)] for g, (lo, hi) in zip(grown, pads))
    return out[lead + crop]


def pad_axes(x: np.ndarray, axes, dilation, pads, value=0) -> np.ndarray:
    """``x`` with each dimension ``axes[i]`` dilated by ``dilation[i]`` and padded by
    ``pads[i]`` (negative pads crop), in ``x``'s own layout (no transposing copy). Zero padding
    allocates zeroed memory, so the only pass over the data is the one writing ``x``."""
    if all(d == 1 for d in dilation) and all(lo == hi == 0 for lo, hi in pads):
        return x
    shape = list(x.shape)
    inner = [np.s_[:]] * x.ndim
    crop = [np.s_[:]] * x.ndim
    for a, d, (lo, hi) in zip(axes, dilation, pads):
        n = x.shape[a]
        grown = dilate_dim(n, d) + max(lo, 0) + max(hi, 0)
        shape[a] = grown
        inner[a] = np.s_[max(lo, 0):max(lo, 0) + dilate_dim(n, d):d]
        crop[a] = np.s_[max(-lo, 0):grown - max(-hi, 0)]
    out = _empty_in_layout_of(x, shape, value)
    out[tuple(inner)] = x
    return out[tuple(crop)]


def _empty_in_layout_of(x: np.ndarray, shape, value) -> np.ndarray:
    """A new array of ``shape`` filled with ``value``, its dimensions laid out in memory in
    the order of ``x``'s strides (so copying ``x`` into it reads and writes in runs)."""
    order = sorted(range(x.ndim), key=lambda a: -abs(x.strides[a]) if x.shape[a] > 1 else 0)
    physical = [shape[a] for a in order]
    out = np.zeros(physical, x.dtype) if value == 0 else np.full(physical, value, x.dtype)
    return np.transpose(out, np.argsort(order))


def window_view(x: np.ndarray, first: int, window, strides, dilation) -> np.ndarray:
    """A read-only view of shape ``x.shape[:first] + out + x.shape[first + k:] + window``
    (``k = len(window)``) whose element ``[..., o, ..., w]`` is ``x[..., o * stride + w *
    dilation, ...]`` (no copy)."""
    k = len(window)
    spans = [dilate_dim(w, d) for w, d in zip(window, dilation)]
    out = [strided_dim(n, s, st) for n, s, st in zip(x.shape[first:first + k], spans, strides)]
    if 0 in out or 0 in x.shape:
        return np.zeros(x.shape[:first] + tuple(out) + x.shape[first + k:] + tuple(window),
                        x.dtype)
    view = np.lib.stride_tricks.sliding_window_view(x, spans,
                                                    axis=tuple(range(first, first + k)))
    rest = x.ndim - first - k
    return view[(np.s_[:],) * first + tuple(np.s_[::s] for s in strides)
                + (np.s_[:],) * rest + tuple(np.s_[::d] for d in dilation)]


_add_examples(globals(), """
padtype_to_pads:
    >>> pto.lax.padtype_to_pads((5, 5), (3, 3), (2, 2), 'SAME')
    [(1, 1), (1, 1)]
""")
