"""Products: matmul/@, dot, vdot, inner, outer, tensordot, einsum — all one dot_general each
(einsum: one per pair of operands). Vector products (vecdot, cross, ...) are in
vector_products.py."""
from __future__ import annotations

import string

from ptojax import dtypes, lax
from ptojax.errors import ShapeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy.manipulation import diagonal, ravel
from ptojax.numpy.math import multiply
from ptojax.numpy._promote import (asarray, broadcast_shapes, broadcast_to_shape, convert,
                                   result_type, supported_dtype)
from ptojax.source_info import user_frame


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


# einsum --------------------------------------------------------------------------------------
def einsum(subscripts, *operands, optimize=None, precision=None, preferred_element_type=None):
    """Einstein summation with an explicit or implicit output; each pair of operands becomes
    one dot_general (batch, contracting and free dimensions read off the subscripts)."""
    if not operands:
        raise ShapeError("einsum: needs at least one operand", user_frame())
    operands = _promoted("einsum", *operands)
    kw = _options("einsum", precision, preferred_element_type)
    pet = kw["preferred_element_type"]
    inputs, output = _parse(subscripts, operands)
    terms = list(zip(inputs, operands))
    while len(terms) > 1:
        (sa, a), (sb, b) = terms[0], terms[1]
        keep = set(output) | {c for s, _ in terms[2:] for c in s}
        # reduce repeated labels within one operand (diagonals) and labels used nowhere else
        a, sa = _sum_unused(a, sa, keep | set(sb))
        b, sb = _sum_unused(b, sb, keep | set(sa))
        batch = [c for c in sa if c in sb and c in keep]
        contract = [c for c in sa if c in sb and c not in keep]
        out = lax.dot_general(a, b, ((tuple(sa.index(c) for c in contract),
                                      tuple(sb.index(c) for c in contract)),
                                     (tuple(sa.index(c) for c in batch),
                                      tuple(sb.index(c) for c in batch))), **kw)
        labels = batch + [c for c in sa if c not in sb] + [c for c in sb if c not in sa]
        terms = [("".join(labels), out)] + terms[2:]
    s, x = terms[0]
    x, s = _sum_unused(x, s, set(output))
    if pet is not None and x.dtype != pet:
        x = lax.convert_element_type(x, pet)
    return lax.transpose(x, tuple(s.index(c) for c in output))


def _sum_unused(x, labels, keep):
    labels = list(labels)
    # a label repeated within one operand: take the diagonal
    for c in set(labels):
        while labels.count(c) > 1:
            i = labels.index(c)
            j = labels.index(c, i + 1)
            x = diagonal(x, 0, i, j)
            labels = [lab for k, lab in enumerate(labels) if k not in (i, j)] + [c]
    drop = tuple(i for i, c in enumerate(labels) if c not in keep)
    if drop:
        x = lax.reduce_sum(x, drop)
        labels = [c for i, c in enumerate(labels) if i not in drop]
    return x, "".join(labels)


def _spec_error(subscripts, why):
    return ShapeError(f"einsum: invalid subscripts {subscripts!r}: {why}", user_frame())


def _parse(subscripts, operands):
    if not isinstance(subscripts, str):
        raise _spec_error(subscripts, "the subscripts must be a string like 'ij,jk->ik'")
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1 or not set(spec) <= set(string.ascii_letters + ",.->"):
        raise _spec_error(subscripts, "use letters, ',', '...' and at most one '->'")
    lhs, output = spec.split("->") if "->" in spec else (spec, None)
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise _spec_error(subscripts, f"{len(inputs)} operand specs but {len(operands)} "
                                      f"operands")
    if any("." in s.replace("...", "") for s in inputs + [output or ""]):
        raise _spec_error(subscripts, "'.' may only appear as '...'")
    if any("..." in s for s in inputs):
        inputs, output = _expand_ellipsis(subscripts, inputs, output, operands)
    for s, o in zip(inputs, operands):
        if len(s) != o.ndim:
            raise ShapeError(f"einsum: spec {s!r} has {len(s)} labels but the operand is "
                             f"{o.aval}", user_frame())
    sizes = {}
    for s, o in zip(inputs, operands):
        for c, n in zip(s, o.shape):
            if sizes.setdefault(c, n) != n:
                raise ShapeError(f"einsum: label {c!r} has sizes {sizes[c]} and {n} in "
                                 f"{subscripts!r}", user_frame())
    if output is None:
        counts = {c: sum(s.count(c) for s in inputs) for c in sizes}
        output = "".join(sorted(c for c, k in counts.items() if k == 1))
    if "..." in output or len(set(output)) != len(output) or not set(output) <= set(sizes):
        raise _spec_error(subscripts, f"the output {output!r} must use distinct labels of the "
                                      f"inputs")
    return inputs, output


def _expand_ellipsis(subscripts, inputs, output, operands):
    free = [c for c in string.ascii_letters if c not in "".join(inputs) + (output or "")]
    ranks = [o.ndim - len(s.replace("...", "")) for s, o in zip(inputs, operands)
             if "..." in s]
    if min(ranks) < 0:
        raise _spec_error(subscripts, "an operand has fewer dimensions than its labels")
    widest = max(ranks)
    ell = "".join(free[:widest])
    new_inputs = []
    for s, o in zip(inputs, operands):
        if "..." in s:
            k = o.ndim - len(s.replace("...", ""))
            s = s.replace("...", ell[widest - k:])
        new_inputs.append(s)
    if output is not None:
        output = output.replace("...", ell)
    else:
        counts = {c: sum(s.count(c) for s in new_inputs) for c in "".join(new_inputs)}
        output = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    return new_inputs, output
