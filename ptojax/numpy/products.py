"""Products: matmul/@, dot, vdot, inner, outer, tensordot — all one dot_general each.
einsum is in einsum.py, vector products (vecdot, cross, ...) in vector_products.py."""
from __future__ import annotations

from ptojax import dtypes, lax
from ptojax.errors import ShapeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy.manipulation import ravel
from ptojax.numpy.math import multiply
from ptojax.numpy._promote import asarray, broadcast_shapes, convert, result_type, supported_dtype
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
    """``a @ b`` as one dot_general, as JAX: a vector operand is contracted as it is (no
    expand_dims / squeeze around the product), batch dimensions both operands have become
    the dot_general's batch dimensions, a batch dimension only one operand has (or a size-1
    one, squeezed) stays a free dimension of that operand; a transpose puts the batch first
    when the product leaves it elsewhere. Nothing is broadcast, so vmap over one operand
    keeps the other unbatched."""
    a, b = _promoted("matmul", a, b)
    kw = _options("matmul", precision, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands must be at least 1-D, got {a.aval} and {b.aval}; "
                         f"use * for products with scalars", user_frame())
    a_k, b_k = a.ndim - 1, max(b.ndim - 2, 0)
    if a.shape[a_k] != b.shape[b_k]:
        raise ShapeError(f"matmul: the contracted dimensions differ: {a.aval} @ {b.aval} "
                         f"({a.shape[a_k]} vs {b.shape[b_k]})", user_frame())
    _batch_shape(a, b)   # the batch dimensions must broadcast
    plan = _MatmulBatch(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    a, b = lax.squeeze(a, plan.a_squeezed), lax.squeeze(b, plan.b_squeezed)
    a_k, b_k = a.ndim - 1, max(b.ndim - 2, 0)
    out = lax.dot_general(a, b, (((a_k,), (b_k,)), plan.paired()), **kw)
    order = plan.result_positions(a.ndim, b.ndim, a_k, b_k)
    permutation = tuple(sorted(range(len(order)), key=order.__getitem__))
    if permutation != tuple(range(len(order))):
        out = lax.transpose(out, permutation)
    return out


class _MatmulBatch:
    """How each position of ``a @ b``'s broadcast batch shape enters the dot_general: paired
    (both operands have it, with one size), or free in one operand (the other lacks it or
    has size 1 there, squeezed). Where both have size 1 JAX squeezes both and broadcasts the
    result back; pairing them is one equation instead of three, and keeps a transposed
    operand next to the product (so the tile planner can still absorb the transpose)."""

    def __init__(self, a_batch, b_batch):
        self.rank = rank = max(len(a_batch), len(b_batch))
        self.pairs = []                    # (a dim, b dim, position)
        self.a_free, self.b_free = [], []  # (dim, position)
        self.a_squeezed, self.b_squeezed = [], []
        for pos in range(rank):
            i, j = pos - rank + len(a_batch), pos - rank + len(b_batch)
            sa = a_batch[i] if i >= 0 else None
            sb = b_batch[j] if j >= 0 else None
            if sa is not None and sa == sb:
                self.pairs.append((i, j, pos))
            elif sb is None or (sa is not None and sb == 1):
                self.a_free.append((i, pos))
                if sb is not None:
                    self.b_squeezed.append(j)
            else:
                self.b_free.append((j, pos))
                if sa is not None:
                    self.a_squeezed.append(i)

    def _kept(self, dim, squeezed):
        return dim - sum(d < dim for d in squeezed)

    def paired(self):
        """The dot_general's batch dimensions of the squeezed operands."""
        return (tuple(self._kept(i, self.a_squeezed) for i, _, _ in self.pairs),
                tuple(self._kept(j, self.b_squeezed) for _, j, _ in self.pairs))

    def result_positions(self, a_ndim, b_ndim, a_k, b_k):
        """For each dimension of the dot_general's result (batch, a's free, b's free), its
        position in ``a @ b`` (rows after the batch, columns last)."""
        a_pos = {self._kept(i, self.a_squeezed): p for i, p in self.a_free}
        b_pos = {self._kept(j, self.b_squeezed): p for j, p in self.b_free}
        row, col = self.rank, self.rank + 1
        batch = [p for _, _, p in self.pairs]
        paired_a, paired_b = map(set, self.paired())
        a_side = [a_pos.get(d, row) for d in range(a_ndim) if d != a_k and d not in paired_a]
        b_side = [b_pos.get(d, col) for d in range(b_ndim) if d != b_k and d not in paired_b]
        return batch + a_side + b_side


def _batch_shape(a, b) -> tuple:
    try:
        return broadcast_shapes("matmul", tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ShapeError:
        raise ShapeError(f"matmul: the batch dimensions {tuple(a.shape[:-2])} of {a.aval} and "
                         f"{tuple(b.shape[:-2])} of {b.aval} cannot be broadcast together",
                         user_frame()) from None


def _scaled(a, b, preferred_element_type):
    """A product with a scalar: the elementwise product (what XLA makes of a dot_general
    without contraction), in ``preferred_element_type`` when one is given."""
    if preferred_element_type is not None:
        dtype = supported_dtype(preferred_element_type, "dot")
        a, b = convert(a, dtype), convert(b, dtype)
    return multiply(a, b)


def dot(a, b, *, precision=None, preferred_element_type=None):
    a, b = _promoted("dot", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _scaled(a, b, preferred_element_type)
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
        return _scaled(a, b, preferred_element_type)
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
