"""``reduce_window``: a reduction over sliding windows (pooling), as ``jax.lax.reduce_window``
— window strides, padding strings or pairs, base and window dilation, one array or a pytree
of arrays with a matching tree of initial values and any ``computation``.

No primitive of its own: the operand is padded with the initial value (base dilation as
interior padding), and each window offset is one strided slice of it; the result folds the
slices with ``computation`` in window order. Gradients, vmap, sharding and tiling are those
of pad, slice and the elementwise fold, so every reduction is differentiable (JAX's generic
``reduce_window`` is not).

For ``lax.max``/``lax.min`` the fold is a select of the strictly greater (smaller) or NaN
element, so the gradient goes to the first extreme element of each window, as JAX's
``select_and_scatter_add`` does, rather than being split between ties; for ``lax.add`` the
transpose of the slices is JAX's padded sum. Window sums of float16, bfloat16 and float8
accumulate in float32 and round once, as ``reduce_sum``'s (JAX's CPU backend adds in the
operand's dtype, so a sum with cancellation can differ from its by more than one rounding);
windows that tile the operand are one ``reduce_sum`` (``_tiling_window_sum``). Each slice is an output-sized array, so a
``k``-element window reads the input ``k`` times: fine for pooling windows."""
from __future__ import annotations

import itertools

import numpy as np

from ptojax import dtypes, pytree as tree_util
from ptojax.errors import PtoError, ShapeError
from ptojax.ops import arithmetic
from ptojax.ops.broadcast import broadcast_in_dim, reduce_sum
from ptojax.ops.convert import convert_element_type
from ptojax.ops.elementwise import operands
from ptojax.ops.logic import bitwise_or, gt, lt, ne, select
from ptojax.ops.shape import reshape
from ptojax.ops.slicing import pad, slice
from ptojax.ops.windows import dilate_and_pad, dilate_dim, explicit_pads, strided_dim
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple:
    """The result shape of ``reduce_window`` with explicit ``padding`` pairs."""
    ones = (1,) * len(operand_shape)
    base_dilation, window_dilation = base_dilation or ones, window_dilation or ones
    return tuple(strided_dim(dilate_dim(n, b) + lo + hi, dilate_dim(w, d), s)
                 for n, w, s, (lo, hi), b, d in zip(operand_shape, window_dimensions,
                                                    window_strides, padding, base_dilation,
                                                    window_dilation))


def _offsets(shape, window, strides, window_dilation):
    """Per window offset, the (start, limit) of its strided slice of the padded operand."""
    out = [strided_dim(n, dilate_dim(w, d), s)
           for n, w, d, s in zip(shape, window, window_dilation, strides)]
    for offset in itertools.product(*(range(w) for w in window)):
        start = [i * d for i, d in zip(offset, window_dilation)]
        yield start, [st + (m - 1) * s + 1 if m else st for st, m, s in zip(start, out, strides)]


def _window_slices(x, init, window, strides, padding, base_dilation, window_dilation):
    """One strided slice of the padded, dilated ``x`` per window offset (window order)."""
    (init,) = operands(x, init)[1:]
    x = pad(x, init, [(lo, hi, b - 1) for (lo, hi), b in zip(padding, base_dilation)])
    return [slice(x, start, limit, strides)
            for start, limit in _offsets(x.shape, window, strides, window_dilation)]


def _real_elements(shape, window, strides, padding, base_dilation, window_dilation):
    """Per window offset, a boolean mask of the windows whose element there is an operand
    element (not padding or a dilation hole), or None when all are."""
    real = dilate_and_pad(np.ones(shape, bool), 0, base_dilation, padding, value=False)
    masks = [real[tuple(np.s_[st:li:s] for st, li, s in zip(start, limit, strides))]
             for start, limit in _offsets(real.shape, window, strides, window_dilation)]
    return [None if m.all() else m for m in masks]


def _identity_of(op, dtype):
    """The value ``op`` leaves unchanged, for the three monoids JAX recognises."""
    if op is arithmetic.add:
        return 0
    info = np.finfo if dtypes.is_float(dtype) else np.iinfo
    if dtypes.is_bool(dtype):
        return op is arithmetic.min
    if op is arithmetic.max:
        return -np.inf if dtypes.is_float(dtype) else info(dtype).min
    return np.inf if dtypes.is_float(dtype) else info(dtype).max


def _is_identity(init, op, dtype) -> bool:
    try:
        value = np.asarray(init)
    except (PtoError, TypeError):       # a traced initial value
        return False
    return value.shape == () and value == _identity_of(op, dtype)


def _choose(slices, init, x, better):
    """The first element of each window that is ``better`` than all before it (NaNs win)."""
    monoid = arithmetic.max if better is gt else arithmetic.min
    best = None if _is_identity(init, monoid, x.dtype) else operands(x, init)[1]
    for s in slices:
        if best is None:
            best = s
            continue
        best = broadcast_in_dim(best, s.shape, ()) if best.ndim == 0 else best
        take = better(s, best)
        if dtypes.is_float(s.dtype):
            take = bitwise_or(take, ne(s, s))
        best = select(take, s, best)
    return best


def _fold(slices, inits, computation, tree, masks):
    """``computation`` applied to the running value and each slice in turn, skipping the
    padding and dilation holes (as XLA does)."""
    acc = None
    for flat, mask in zip(zip(*slices), masks):
        if acc is None:
            acc = [broadcast_in_dim(i, s.shape, ()) for i, s in zip(inits, flat)]
        result = computation(tree_util.tree_unflatten(tree, acc),
                             tree_util.tree_unflatten(tree, list(flat)))
        new, out_tree = tree_util.tree_flatten(result)
        if out_tree != tree:
            raise ShapeError(f"reduce_window: computation must return the operands' "
                             f"structure {tree}, got {out_tree}", user_frame())
        acc = new if mask is None else [select(mask, n, a) for n, a in zip(new, acc)]
    return acc


def _tiling_window_sum(x, window, strides, pads, base_dilation, window_dilation):
    """The window sums when the windows tile the operand (strides equal to the window, or one
    window, along each dimension; no padding or dilation: average and sum pooling, global
    pooling): each window dimension split in two and summed over its inner part, or None for
    other geometries. One reduction rather than a slice and an add per window offset (a
    global 8x8 pool: 64 of each, and their transposes, 64 pads)."""
    shape = tuple(x.shape)
    if any(p != (0, 0) for p in pads) or any(b != 1 for b in base_dilation) \
            or any(d != 1 for d in window_dilation) \
            or not all(type(n) is int and n >= w for n, w in zip(shape, window)):
        return None
    counts = [(n - w) // s + 1 for n, w, s in zip(shape, window, strides)]
    if any(s != w and c != 1 for w, s, c in zip(window, strides, counts)):
        return None          # windows overlap or skip elements
    kept = [c * w for c, w in zip(counts, window)]
    if kept != list(shape):      # VALID: the tail no window covers is dropped
        x = slice(x, [0] * len(shape), kept)
    split, summed = [], []
    for c, w in zip(counts, window):
        split.append(c)
        if w > 1:
            summed.append(len(split))
            split.append(w)
    return reduce_sum(reshape(x, split), tuple(summed)) if summed else x


def _ints(name, values, k) -> tuple:
    if values is None:
        return (1,) * k
    values = tuple(int(v) for v in values)
    if len(values) != k or any(v < 1 for v in values):
        raise ShapeError(f"reduce_window: {name} must be {k} positive integers (one per "
                         f"operand dimension), got {values}", user_frame())
    return values


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce each window of ``operand`` with ``computation`` starting from ``init_value``
    (padding and base-dilation holes hold ``init_value``), as ``jax.lax.reduce_window``."""
    flat, tree = tree_util.tree_flatten(operand)
    inits, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree or not flat:
        raise ShapeError(f"reduce_window: operands {tree} and init values {init_tree} must "
                         f"have the same (non-empty) structure", user_frame())
    shape = flat[0].shape
    if any(x.shape != shape for x in flat):
        raise ShapeError(f"reduce_window: operands must share a shape, got "
                         f"{[tuple(x.shape) for x in flat]}", user_frame())
    window = _ints("window_dimensions", window_dimensions, len(shape))
    strides = _ints("window_strides", window_strides, len(shape))
    base_dilation = _ints("base_dilation", base_dilation, len(shape))
    window_dilation = _ints("window_dilation", window_dilation, len(shape))
    try:
        pads = explicit_pads("reduce_window", padding, shape,
                             [dilate_dim(w, d) for w, d in zip(window, window_dilation)],
                             strides)
    except ShapeError as e:
        raise e.with_source(user_frame()) from None
    geometry = (window, strides, pads, base_dilation, window_dilation)
    if len(flat) == 1 and computation is arithmetic.add and \
            _is_identity(inits[0], arithmetic.add, flat[0].dtype):
        tiled = _tiling_window_sum(flat[0], *geometry)
        if tiled is not None:
            return tiled
    slices = [_window_slices(x, i, *geometry) for x, i in zip(flat, inits)]
    if len(flat) == 1 and computation in (arithmetic.max, arithmetic.min):
        better = gt if computation is arithmetic.max else lt
        return _choose(slices[0], inits[0], flat[0], better)
    if len(flat) == 1 and computation is arithmetic.add and \
            _is_identity(inits[0], arithmetic.add, flat[0].dtype):
        wide = dtypes.accumulates_in_f32(flat[0].dtype)    # as reduce_sum's
        parts = [convert_element_type(s, np.float32) if wide else s for s in slices[0]]
        total = parts[0]
        for s in parts[1:]:
            total = arithmetic.add(total, s)
        return convert_element_type(total, flat[0].dtype) if wide else total
    inits = [operands(x, i)[1] for x, i in zip(flat, inits)]
    masks = _real_elements(shape, *geometry)
    return tree_util.tree_unflatten(tree, _fold(slices, inits, computation, tree, masks))


_add_examples(globals(), """
reduce_window:
    >>> pto.lax.reduce_window(pnp.arange(6.0), -pnp.inf, pto.lax.max, (2,), (2,))
    Array([1., 3., 5.], dtype=float32)
reduce_window_shape_tuple:
    >>> pto.lax.reduce_window_shape_tuple((6, 6), (2, 2), (2, 2), [(0, 0), (0, 0)])
    (3, 3)
""")
