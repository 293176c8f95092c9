"""``lax.associative_scan``: the prefix "sums" of an associative combiner, in O(log n) rounds
of whole-array combines (Blelloch's work-efficient scheme, as JAX does it).

A round combines neighbouring pairs (elements ``2i`` and ``2i+1``), scans those pair results
recursively (giving the prefixes ending at the odd positions), then combines each odd prefix
with the next even element (the prefixes ending at the even positions) and interleaves the two.
The combines happen in JAX's order, so floating-point results agree with JAX's. It is all
slicing, concatenation and the user's combiner: autodiff and vmap trace straight through.
"""
from __future__ import annotations

from ptojax.errors import ShapeError
from ptojax.ops.convert import convert_element_type
from ptojax.ops.checks import user_axis
from ptojax.ops.shape import reshape
from ptojax.ops.slicing import concatenate, rev, slice_in_dim
from ptojax.ops.shape import expand_dims
from ptojax.source_info import user_frame
from ptojax.pytree import tree_flatten, tree_unflatten
from ptojax.public import add_examples as _add_examples


def _interleave(a, b, axis):
    """``a[0], b[0], a[1], b[1], ...`` along ``axis``; ``a`` is as long as ``b`` or one
    longer. Strongly typed, as JAX's (it pads with a strong zero), so a scan of two or more
    elements is strong even of weak ones."""
    n_a, n_b = a.shape[axis], b.shape[axis]
    if n_a != n_b:   # pad b with a's last element, then drop it again
        b = concatenate([b, slice_in_dim(a, n_a - 1, n_a, axis=axis)], axis)
    pairs = concatenate([expand_dims(a, (axis + 1,)), expand_dims(b, (axis + 1,))], axis + 1)
    shape = (*a.shape[:axis], 2 * n_a, *a.shape[axis + 1:])
    out = slice_in_dim(reshape(pairs, shape), 0, n_a + n_b, axis=axis)
    return convert_element_type(out, out.dtype)


def _combiner(fn, tree):
    def combine(a_flat, b_flat):
        out = fn(tree_unflatten(tree, a_flat), tree_unflatten(tree, b_flat))
        out_flat, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise ShapeError(f"associative_scan: fn must return the structure of its inputs "
                             f"({tree}), got {out_tree}", user_frame())
        for x, y in zip(out_flat, a_flat):
            if tuple(x.shape) != tuple(y.shape):
                raise ShapeError(f"associative_scan: fn must combine elementwise (keep the "
                                 f"shape {tuple(y.shape)}), got shape {tuple(x.shape)}",
                                 user_frame())
        return out_flat
    return combine


def _scan(combine, elems, axis):
    n = elems[0].shape[axis]
    if n < 2:
        return elems
    pairs = combine([slice_in_dim(e, 0, n - 1, stride=2, axis=axis) for e in elems],
                    [slice_in_dim(e, 1, n, stride=2, axis=axis) for e in elems])
    odd = _scan(combine, pairs, axis)
    if n % 2 == 0:
        left = [slice_in_dim(e, 0, e.shape[axis] - 1, axis=axis) for e in odd]
    else:
        left = odd
    even = combine(left, [slice_in_dim(e, 2, n, stride=2, axis=axis) for e in elems])
    even = [concatenate([slice_in_dim(e, 0, 1, axis=axis), r], axis)
            for e, r in zip(elems, even)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd)]


def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """The inclusive scan of ``elems`` (a pytree of arrays, scanned along ``axis``) with the
    associative ``fn(a, b)``, which combines pytrees of ``elems``' structure elementwise (it
    must accept slices of any length along ``axis``); ``reverse`` scans from the end. As
    JAX's ``lax.associative_scan``."""
    flat, tree = tree_flatten(elems)
    if not flat:
        raise ValueError("associative_scan: elems has no arrays")
    for x in flat:
        if not hasattr(x, "shape") or x.ndim == 0:
            raise ShapeError("associative_scan: elems must be arrays of at least one "
                             "dimension", user_frame())
    axis = user_axis("associative_scan", axis, flat[0].ndim)
    n = flat[0].shape[axis]
    if any(x.ndim <= axis or x.shape[axis] != n for x in flat[1:]):
        raise ValueError(f"Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[tuple(x.shape) for x in flat]})")
    if reverse:
        flat = [rev(x, (axis,)) for x in flat]
    out = _scan(_combiner(fn, tree), flat, axis)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


_add_examples(globals(), """
associative_scan:
    >>> pto.lax.associative_scan(pto.lax.add, pnp.arange(1, 6))
    Array([ 1,  3,  6, 10, 15], dtype=int32)
    >>> pto.lax.associative_scan(pto.lax.mul, pnp.arange(1.0, 5.0), reverse=True)
    Array([24., 24., 12.,  4.], dtype=float32)
""")
