"""``ravel_pytree``: a pytree of arrays as one 1-D array plus the function that rebuilds the
pytree from such an array, as JAX's ``jax.flatten_util`` (parameters flattened for BFGS,
Newton steps or ODE solvers).

The flat array's dtype is the promotion of the leaves' dtypes. When the leaves share one
dtype, ``unravel`` keeps the dtype it is given; otherwise it requires that promoted dtype and
converts every piece back to its leaf's dtype. An empty pytree ravels to an empty float32
array.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.public import add_examples, dir_function
from ptojax.pytree import tree_flatten, tree_unflatten


def ravel_pytree(pytree):
    """``(flat, unravel)``: the leaves of ``pytree`` raveled and concatenated into one 1-D
    array, and ``unravel(flat)`` rebuilding a pytree of the same structure and shapes."""
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_leaves = _ravel_leaves(leaves)
    return flat, functools.partial(_unravel_pytree, treedef, unravel_leaves)


def _unravel_pytree(treedef, unravel_leaves, flat):
    return tree_unflatten(treedef, unravel_leaves(flat))


def _ravel_leaves(leaves):
    if not leaves:
        return pnp.zeros((0,), np.float32), lambda _: []
    leaves = [pnp.asarray(leaf) for leaf in leaves]
    from_dtypes = tuple(leaf.dtype for leaf in leaves)
    to_dtype = pnp.result_type(*from_dtypes)
    shapes = tuple(tuple(leaf.shape) for leaf in leaves)
    flat = lax.concatenate([lax.convert_element_type(leaf, to_dtype).reshape(-1)
                            for leaf in leaves], 0)
    if all(d == to_dtype for d in from_dtypes):
        return flat, functools.partial(_split, shapes, None, None)
    return flat, functools.partial(_split, shapes, from_dtypes, to_dtype)


def _split(shapes, from_dtypes, to_dtype, flat):
    flat = pnp.asarray(flat)
    total = sum(math.prod(s) for s in shapes)
    if flat.shape != (total,):
        raise ValueError(f"unravel: expected a 1-D array of {total} elements (the raveled "
                         f"pytree's size), got shape {tuple(flat.shape)}")
    if to_dtype is not None and flat.dtype != to_dtype:
        raise TypeError(f"unravel function given array of dtype {flat.dtype}, but expected "
                        f"dtype {np.dtype(to_dtype)}")
    pieces, start = [], 0
    for i, shape in enumerate(shapes):
        size = math.prod(shape)
        piece = lax.slice(flat, (start,), (start + size,)).reshape(shape)
        if from_dtypes is not None:
            piece = lax.convert_element_type(piece, from_dtypes[i])
        pieces.append(piece)
        start += size
    return pieces


add_examples(globals(), """
ravel_pytree:
    >>> flat, unravel = pto.flatten_util.ravel_pytree({"w": pnp.ones((2, 2)), "b": pnp.zeros(2)})
    >>> flat
    Array([0., 0., 1., 1., 1., 1.], dtype=float32)
    >>> unravel(flat * 2)["w"]
    Array([[2., 2.],
           [2., 2.]], dtype=float32)
""")

__all__ = ["ravel_pytree"]
__dir__ = dir_function(__all__)
