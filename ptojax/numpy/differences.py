"""Differences, derivatives and integrals of sampled data: ``diff``, ``ediff1d``,
``gradient``, ``trapezoid``, ``unwrap``, and piecewise-linear ``interp``."""
from __future__ import annotations

import operator

import numpy as np

from ptojax import dtypes, lax
from ptojax.errors import ShapeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import (asarray, broadcast_to_shape, convert, promote_args,
                                   promote_dtypes)
from ptojax.numpy import math as ew
from ptojax.numpy.manipulation import concatenate, moveaxis, ravel
from ptojax.numpy.reductions import cumsum, sum as _sum
from ptojax.numpy.searching import searchsorted
from ptojax.numpy.indexing import take
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def _part(x, axis, start, stop):
    """``x[start:stop]`` along ``axis`` (negative bounds count from the end)."""
    n = x.shape[axis]
    start, stop, _ = slice(start, stop).indices(n)
    return lax.slice_in_dim(x, start, max(start, stop), 1, axis)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th difference along ``axis`` (``!=`` for bools), after adding ``prepend``
    and ``append`` (scalars are broadcast to one slice)."""
    a = asarray(a, op="diff")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: the order n must be non-negative, got {n}")
    if n == 0:
        return a
    if a.ndim == 0:
        raise ShapeError("diff: the input must have at least one dimension", user_frame())
    axis = normalize_axis("diff", axis, a.ndim)
    parts = []
    for extra in (prepend, a, append):
        if extra is None:
            continue
        extra = asarray(extra, op="diff")
        if extra.ndim == 0:
            shape = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
            extra = broadcast_to_shape(extra, shape, "diff")
        parts.append(extra)
    if len(parts) > 1:
        a = concatenate(parts, axis)
    for _ in range(n):
        later, earlier = _part(a, axis, 1, None), _part(a, axis, None, -1)
        a = ew.not_equal(later, earlier) if a.dtype == dtypes.bool_ else \
            ew.subtract(later, earlier)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array, with ``to_begin`` and
    ``to_end`` (cast to its dtype) around them."""
    flat = ravel(asarray(ary, op="ediff1d"))
    result = lax.sub(_part(flat, 0, 1, None), _part(flat, 0, None, -1))
    parts = [result]
    # the ends in the array's dtype, strongly typed (so is the result then), as JAX's
    if to_begin is not None:
        parts.insert(0, ravel(lax.convert_element_type(asarray(to_begin, op="ediff1d"),
                                                       flat.dtype)))
    if to_end is not None:
        parts.append(ravel(lax.convert_element_type(asarray(to_end, op="ediff1d"),
                                                    flat.dtype)))
    return concatenate(parts, 0) if len(parts) > 1 else result


def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided differences at the edges, along each axis
    (spacing: scalars or coordinate arrays per axis); a list for several axes."""
    if edge_order is not None:
        raise NotImplementedError("gradient: edge_order is not supported (as in JAX)")
    a, *spacing = promote_dtypes("gradient", f, *varargs, kind="float")
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(normalize_axis("gradient", ax, a.ndim)
                     for ax in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if not axes:
        return []
    if min(a.shape[d] for d in axes) < 2:
        raise ShapeError(f"gradient: {a.aval} is too small along the axes {axes}; at least "
                         f"2 elements are needed", user_frame())
    if not spacing:
        spacing = [1.0] * len(axes)
    elif len(spacing) == 1:
        spacing = spacing * len(axes)
    elif len(spacing) != len(axes):
        raise TypeError(f"gradient: {len(spacing)} spacing arguments for {len(axes)} axes")
    result = [_gradient_along(a, h, ax) for ax, h in zip(axes, spacing)]
    return result[0] if len(result) == 1 else result


def _gradient_along(a, h, axis):
    part = lambda x, start, stop: _part(x, axis, start, stop)
    first = ew.subtract(part(a, 1, 2), part(a, 0, 1))
    last = ew.subtract(part(a, -1, None), part(a, -2, -1))
    h = asarray(h)
    if h.ndim == 0:
        inner = ew.divide(ew.multiply(ew.subtract(part(a, 2, None), part(a, None, -2)), 0.5),
                          h)
        first, last = ew.divide(first, h), ew.divide(last, h)
    elif h.ndim == 1:
        if h.shape[0] != a.shape[axis]:
            raise ShapeError(f"gradient: the coordinates {h.aval} must have the length of "
                             f"axis {axis} of {a.aval}", user_frame())
        h = lax.broadcast_in_dim(convert(h, a.dtype),
                                 tuple(n if d == axis else 1 for d, n in enumerate(a.shape)),
                                 (axis,))
        first = ew.divide(first, ew.subtract(part(h, 1, 2), part(h, 0, 1)))
        last = ew.divide(last, ew.subtract(part(h, -1, None), part(h, -2, -1)))
        dx1 = ew.subtract(part(h, 1, -1), part(h, 0, -2))
        dx2 = ew.subtract(part(h, 2, None), part(h, 1, -1))
        w0 = ew.divide(ew.negative(dx2), ew.multiply(dx1, ew.add(dx1, dx2)))
        w1 = ew.divide(ew.subtract(dx2, dx1), ew.multiply(dx1, dx2))
        w2 = ew.divide(dx1, ew.multiply(dx2, ew.add(dx1, dx2)))
        inner = ew.add(ew.add(ew.multiply(w0, part(a, 0, -2)), ew.multiply(w1, part(a, 1, -1))),
                       ew.multiply(w2, part(a, 2, None)))
    else:
        raise ShapeError(f"gradient: spacing must be scalars or 1-D arrays, got {h.aval}",
                         user_frame())
    return concatenate([first, inner, last], axis)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, with sample points
    ``x`` or a spacing ``dx`` (a scalar or an array broadcasting against ``y``)."""
    if x is None:
        (y,) = promote_args("trapezoid", y, kind="float")
        step = asarray(dx, op="trapezoid")
        if step.ndim > 0:
            step = lax.reshape(step, (1,) * (y.ndim - step.ndim) + tuple(step.shape))
            step = moveaxis(step, axis, -1)
    else:
        y, x = promote_dtypes("trapezoid", y, x, kind="float")
        step = diff(x) if x.ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    if step.ndim == 0 or step.shape[-1] == 1:
        width = step if step.ndim == 0 else lax.index_in_dim(step, 0, step.ndim - 1, False)
        ends = ew.add(_part(y, -1, 0, 1), _part(y, -1, -1, None))
        ends = lax.squeeze(ends, (ends.ndim - 1,))
        return ew.multiply(width, ew.subtract(_sum(y, -1), ew.multiply(0.5, ends)))
    pairs = ew.add(_part(y, -1, 1, None), _part(y, -1, None, -1))
    return ew.multiply(0.5, _sum(ew.multiply(step, pairs), -1))


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """``p`` with jumps larger than ``discont`` (default: half the period) along ``axis``
    replaced by their remainder modulo ``period``."""
    p, period = promote_dtypes("unwrap", p, period)
    axis = normalize_axis("unwrap", axis, p.ndim)
    if p.shape[axis] == 0:
        return p
    integer = dtypes.is_integer(p.dtype)
    interval = ew.floor_divide(period, 2) if integer else ew.divide(period, 2)
    if discont is None:
        discont = ew.divide(period, 2)
    dd = diff(p, axis=axis)
    ddmod = ew.subtract(ew.remainder(ew.add(dd, interval), period), interval)
    ddmod = ew.where(ew.logical_and(ew.equal(ddmod, ew.negative(interval)), ew.greater(dd, 0)),
                     interval, ddmod)
    correction = ew.where(ew.less(ew.absolute(dd), discont), 0, ew.subtract(ddmod, dd))
    rest = ew.add(_part(p, axis, 1, None), cumsum(correction, axis=axis))
    return concatenate([_part(p, axis, 0, 1), rest], axis)


def interp(x, xp, fp, left=None, right=None, period=None):
    """The piecewise-linear interpolant through ``(xp, fp)`` (xp increasing) at ``x``;
    ``left``/``right`` (or "extrapolate") beyond the ends; ``period`` for periodic data."""
    x, xp, fp = (asarray(v, op="interp") for v in (x, xp, fp))
    if tuple(xp.shape) != tuple(fp.shape) or xp.ndim != 1:
        raise ShapeError(f"interp: xp and fp must be 1-D of one length, got {xp.aval} and "
                         f"{fp.aval}", user_frame())
    x, xp = promote_dtypes("interp", x, xp, kind="float")
    (fp,) = promote_dtypes("interp", fp, kind="float")
    for name, value in (("left", left), ("right", right)):
        if isinstance(value, str) and value != "extrapolate":
            raise ValueError(f"interp: the only string value of {name} is 'extrapolate', "
                             f"got {value!r}")
    if period is not None:
        if np.ndim(period) != 0:
            raise ShapeError(f"interp: period must be a scalar, got {period!r}", user_frame())
        period = ew.absolute(period)
        x, xp = ew.remainder(x, period), ew.remainder(xp, period)
        xp, fp = lax.sort((xp, fp), dimension=0, num_keys=1)
        n = xp.shape[0]
        xp = concatenate([ew.subtract(_part(xp, 0, n - 1, n), period), xp,
                          ew.add(_part(xp, 0, 0, 1), period)], 0)
        fp = concatenate([_part(fp, 0, n - 1, n), fp, _part(fp, 0, 0, 1)], 0)
    n = xp.shape[0]
    i = ew.clip(searchsorted(xp, x, side="right"), 1, n - 1)
    below = ew.subtract(i, 1)
    fp_lo, fp_hi = take(fp, below), take(fp, i)
    xp_lo = take(xp, below)
    dx = ew.subtract(take(xp, i), xp_lo)
    epsilon = float(np.spacing(dtypes.finfo(xp.dtype).eps))
    flat = ew.less_equal(ew.absolute(dx), epsilon)  # no NaN gradients where dx is tiny
    slope = ew.divide(ew.subtract(x, xp_lo), ew.where(flat, 1, dx))   # weak 1: dx's type
    f = ew.where(flat, fp_lo, ew.add(fp_lo, ew.multiply(slope, ew.subtract(fp_hi, fp_lo))))
    if not isinstance(left, str) and period is None:
        first = lax.index_in_dim(fp, 0, 0, False) if left is None else left
        f = ew.where(ew.less(x, lax.index_in_dim(xp, 0, 0, False)), first, f)
    if not isinstance(right, str) and period is None:
        last = lax.index_in_dim(fp, n - 1, 0, False) if right is None else right
        f = ew.where(ew.greater(x, lax.index_in_dim(xp, n - 1, 0, False)), last, f)
    return f


__all__ = ["diff", "ediff1d", "gradient", "interp", "trapezoid", "unwrap"]


_add_examples(globals(), """
diff:
    >>> pnp.diff(pnp.array([1, 4, 9, 16]))
    Array([3, 5, 7], dtype=int32)
    >>> pnp.diff(pnp.array([1, 4, 9, 16]), n=2)
    Array([2, 2], dtype=int32)
ediff1d:
    >>> pnp.ediff1d(pnp.array([1, 4, 9]), to_begin=0)
    Array([0, 3, 5], dtype=int32)
gradient:
    >>> pnp.gradient(pnp.array([1.0, 4.0, 9.0, 16.0]))
    Array([3., 4., 6., 7.], dtype=float32)
interp:
    >>> pnp.interp(pnp.array([0.5, 1.5]), pnp.array([0.0, 1.0, 2.0]), pnp.array([0.0, 10.0, 20.0]))
    Array([ 5., 15.], dtype=float32)
trapezoid:
    >>> pnp.trapezoid(pnp.array([1.0, 2.0, 3.0]))
    Array(4., dtype=float32)
unwrap:
    >>> pnp.unwrap(pnp.array([0.0, 3.0, 6.5]))
    Array([0.      , 3.      , 0.216815], dtype=float32)
""")
