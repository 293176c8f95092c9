"""Products: matmul/@, dot, vdot, inner, outer, tensordot — all one dot_general each.
einsum is in einsum.py, vector products (vecdot, cross, ...) in vector_products.py."""
from __future__ import annotations

from ptojax import dtypes, lax
from ptojax.errors import ShapeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy.manipulation import ravel
from ptojax.numpy.math import multiply
from ptojax.numpy._promote import (asarray, broadcast_shapes, broadcast_to_shape, convert,
                                   result_type, supported_dtype)
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples


def _promoted(op, *operands):
    """The operands as arrays of their common dtype (shapes are the contraction's business)."""
    operands = [asarray(o, op=op) for o in operands]
    dtype, weak = result_type(*operands, op=op)
    return [convert(o, dtype, weak) for o in operands]


def _options(op, precision, preferred_element_type):
    """dot_general's keyword arguments: the precision (recorded) and the result dtype."""
    pet = None if preferred_element_type is None else supported_dtype(preferred_element_type,
                                                                     op)
    return {"precision": precision, "preferred_element_type": pet}


def _require_sizes_match(op, a, da, b, db):
    if a.shape[da] != b.shape[db]:
        raise ShapeError(f"{op}: dimension {da} of {a.aval} (size {a.shape[da]}) must match "
                         f"dimension {db} of {b.aval} (size {b.shape[db]})", user_frame())


def matmul(a, b, *, precision=None, preferred_element_type=None):
    a, b = _promoted("matmul", a, b)
    kw = _options("matmul", precision, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands must be at least 1-D, got {a.aval} and {b.aval}; "
                         f"use * for products with scalars", user_frame())
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = lax.expand_dims(a, (0,))
    if b_vec:
        b = lax.expand_dims(b, (1,))
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul: the contracted dimensions differ: {a.aval} @ {b.aval} "
                         f"({a.shape[-1]} vs {b.shape[-2]})", user_frame())
    batch = _batch_shape(a, b)
    nb = len(batch)
    if a.ndim == 2 and b.ndim > 2:  # unbatched lhs: contract against every batch of rhs
        out = lax.dot_general(a, b, (((1,), (b.ndim - 2,)), ((), ())), **kw)
        out = lax.transpose(out, (*range(1, 1 + nb), 0, out.ndim - 1))
    elif b.ndim == 2:  # unbatched rhs: fold the batch into the rows
        out = lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())), **kw)
    else:
        a = broadcast_to_shape(a, batch + tuple(a.shape[-2:]), "matmul")
        b = broadcast_to_shape(b, batch + tuple(b.shape[-2:]), "matmul")
        out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                              **kw)
    if a_vec:
        out = lax.squeeze(out, (out.ndim - 2,))
    if b_vec:
        out = lax.squeeze(out, (out.ndim - 1,))
    return out


def _batch_shape(a, b) -> tuple:
    try:
        return broadcast_shapes("matmul", tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ShapeError:
        raise ShapeError(f"matmul: the batch dimensions {tuple(a.shape[:-2])} of {a.aval} and "
                         f"{tuple(b.shape[:-2])} of {b.aval} cannot be broadcast together",
                         user_frame()) from None


def dot(a, b, *, precision=None, preferred_element_type=None):
    a, b = _promoted("dot", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim <= 2:
        _require_sizes_match("dot", a, a.ndim - 1, b, 0)
        return matmul(a, b, precision=precision, preferred_element_type=preferred_element_type)
    _require_sizes_match("dot", a, a.ndim - 1, b, b.ndim - 2)
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), ((), ())),
                           **_options("dot", precision, preferred_element_type))


def vdot(a, b, *, precision=None, preferred_element_type=None):
    a, b = _promoted("vdot", a, b)
    if a.size != b.size:
        raise ShapeError(f"vdot: the operands need the same number of elements, got {a.aval} "
                         f"and {b.aval}", user_frame())
    if dtypes.is_complex(a.dtype):   # the first operand is conjugated
        a = lax.conj(a)
    return dot(ravel(a), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    a, b = _promoted("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    _require_sizes_match("inner", a, a.ndim - 1, b, b.ndim - 1)
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())),
                           **_options("inner", precision, preferred_element_type))


def outer(a, b):
    a, b = _promoted("outer", a, b)
    return lax.dot_general(ravel(a), ravel(b), (((), ()), ((), ())))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    a, b = _promoted("tensordot", a, b)
    if isinstance(axes, int):
        if not 0 <= axes <= min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: cannot contract {axes} dimensions of {a.aval} and "
                             f"{b.aval}", user_frame())
        ca, cb = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        ca, cb = ((x,) if isinstance(x, int) else tuple(x) for x in axes)
        if len(ca) != len(cb):
            raise ShapeError(f"tensordot: axes {axes} must pair up the contracted dimensions",
                             user_frame())
        ca = tuple(normalize_axis("tensordot", d, a.ndim) for d in ca)
        cb = tuple(normalize_axis("tensordot", d, b.ndim) for d in cb)
    for da, db in zip(ca, cb):
        _require_sizes_match("tensordot", a, da, b, db)
    return lax.dot_general(a, b, ((ca, cb), ((), ())),
                           **_options("tensordot", precision, preferred_element_type))


_add_examples(globals(), """
dot: The dot product: sum of products over the last axis of ``a`` and the second-to-last of
    ``b`` (a scalar product for vectors, matmul for matrices).
    >>> pnp.dot(pnp.array([1, 2, 3]), pnp.array([4, 5, 6]))
    Array(32, dtype=int32)
inner: Sum of products over the last axes of ``a`` and ``b``.
    >>> pnp.inner(pnp.array([[1, 2], [3, 4]]), pnp.array([1, 1]))
    Array([3, 7], dtype=int32)
matmul: Matrix product of ``a`` and ``b`` (``a @ b``), broadcasting leading batch axes.
    >>> pnp.matmul(pnp.array([[1, 2], [3, 4]]), pnp.array([[0, 1], [1, 0]]))
    Array([[2, 1],
           [4, 3]], dtype=int32)
outer: The outer product of ``a`` and ``b`` (both flattened).
    >>> pnp.outer(pnp.array([1, 2]), pnp.array([1, 10, 100]))
    Array([[  1,  10, 100],
           [  2,  20, 200]], dtype=int32)
tensordot: Sum of products over ``axes`` of ``a`` and ``b`` (the last ``axes`` of ``a`` and
    first of ``b`` when an integer).
    >>> pnp.tensordot(pnp.ones((2, 3)), pnp.ones((3, 4)), axes=1).shape
    (2, 4)
vdot: The dot product of ``a`` and ``b`` flattened, conjugating ``a``.
    >>> pnp.vdot(pnp.array([1 + 1j, 2]), pnp.array([1, 1j]))
    Array(1.+1.j, dtype=complex64)
""")
