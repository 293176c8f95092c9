"""Products: matmul/@, dot, vdot, inner, outer, tensordot, einsum — all one dot_general each
(einsum: one per pair of operands)."""
from __future__ import annotations

import string

from ptojax import lax
from ptojax.errors import ShapeError
from ptojax.numpy._promote import asarray, broadcast_shapes, broadcast_to_shape, promote_args
from ptojax.source_info import user_frame


def _promote2(name, a, b):
    a, b = asarray(a), asarray(b)
    # promote dtypes only; shapes are the contraction's business
    from ptojax.numpy._promote import convert, result_type
    dt, weak = result_type(a, b)
    return convert(a, dt, weak), convert(b, dt, weak)


def matmul(a, b, *, preferred_element_type=None):
    a, b = _promote2("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands must be at least 1-D, got {a.aval} and {b.aval}; "
                         f"use * for scalar products", user_frame(3))
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = lax.expand_dims(a, (0,))
    if b_vec:
        b = lax.expand_dims(b, (1,))
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul: contracting dimensions differ: {a.aval} @ {b.aval} "
                         f"({a.shape[-1]} vs {b.shape[-2]})", user_frame(3))
    batch = broadcast_shapes("matmul", tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    nb = len(batch)
    if a.ndim == 2 and b.ndim > 2:  # unbatched lhs: contract against every batch of rhs
        out = lax.dot_general(a, b, (((1,), (b.ndim - 2,)), ((), ())), preferred_element_type)
        out = lax.transpose(out, (*range(1, 1 + nb), 0, out.ndim - 1))
    elif b.ndim == 2:  # unbatched rhs: fold the batch into the rows
        out = lax.dot_general(a, b, (((a.ndim - 1,), (0,)), ((), ())), preferred_element_type)
        if a.ndim - 2 < nb:
            out = broadcast_to_shape(out, batch + tuple(out.shape[-2:]))
    else:
        a = broadcast_to_shape(a, batch + tuple(a.shape[-2:]))
        b = broadcast_to_shape(b, batch + tuple(b.shape[-2:]))
        out = lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                              preferred_element_type)
    if a_vec:
        out = lax.squeeze(out, (out.ndim - 2,))
    if b_vec:
        out = lax.squeeze(out, (out.ndim - 1,))
    return out


def dot(a, b, *, preferred_element_type=None):
    a, b = _promote2("dot", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return lax.mul(*promote_args("dot", a, b))
    if b.ndim <= 2:
        return matmul(a, b, preferred_element_type=preferred_element_type)
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), ((), ())),
                           preferred_element_type)


def vdot(a, b):
    from ptojax.numpy.manipulation import ravel
    return dot(ravel(a), ravel(b))


def inner(a, b):
    a, b = _promote2("inner", a, b)
    if a.ndim == 0 or b.ndim == 0:
        return lax.mul(*promote_args("inner", a, b))
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())))


def outer(a, b):
    from ptojax.numpy.manipulation import ravel
    a, b = _promote2("outer", ravel(a), ravel(b))
    return lax.dot_general(a, b, (((), ()), ((), ())))


def tensordot(a, b, axes=2):
    a, b = _promote2("tensordot", a, b)
    if isinstance(axes, int):
        ca, cb = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, int) else tuple(ca)
        cb = (cb,) if isinstance(cb, int) else tuple(cb)
    return lax.dot_general(a, b, ((ca, cb), ((), ())))


def einsum(subscripts, *operands, preferred_element_type=None, optimize=None):
    """Einstein summation with an explicit or implicit output; each pair of operands becomes
    one dot_general (batch, contracting and free dimensions read off the subscripts)."""
    operands = [asarray(o) for o in operands]
    if len(operands) > 1:
        from ptojax.numpy._promote import convert, result_type
        dt, weak = result_type(*operands)
        operands = [convert(o, dt, weak) for o in operands]
    inputs, output = _parse(subscripts, operands)
    terms = list(zip(inputs, operands))
    # reduce repeated labels within one operand (traces/diagonals) and unused labels first
    while len(terms) > 1:
        (sa, a), (sb, b) = terms[0], terms[1]
        keep = set(output) | {c for s, _ in terms[2:] for c in s}
        a, sa = _sum_unused(a, sa, keep | set(sb))
        b, sb = _sum_unused(b, sb, keep | set(sa))
        batch = [c for c in sa if c in sb and c in keep]
        contract = [c for c in sa if c in sb and c not in keep]
        out = lax.dot_general(a, b, ((tuple(sa.index(c) for c in contract),
                                      tuple(sb.index(c) for c in contract)),
                                     (tuple(sa.index(c) for c in batch),
                                      tuple(sb.index(c) for c in batch))),
                              preferred_element_type)
        labels = batch + [c for c in sa if c not in sb] + [c for c in sb if c not in sa]
        terms = [("".join(labels), out)] + terms[2:]
    s, x = terms[0]
    x, s = _sum_unused(x, s, set(output))
    return lax.transpose(x, tuple(s.index(c) for c in output))


def _sum_unused(x, labels, keep):
    labels = list(labels)
    # a label repeated within one operand: take the diagonal
    for c in set(labels):
        while labels.count(c) > 1:
            i = labels.index(c)
            j = labels.index(c, i + 1)
            from ptojax.numpy.manipulation import diagonal
            x = diagonal(x, 0, i, j)
            labels = [l for k, l in enumerate(labels) if k not in (i, j)] + [c]
    drop = tuple(i for i, c in enumerate(labels) if c not in keep)
    if drop:
        x = lax.reduce_sum(x, drop)
        labels = [c for i, c in enumerate(labels) if i not in drop]
    return x, "".join(labels)


def _parse(subscripts, operands):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        lhs, output = subscripts.split("->")
    else:
        lhs, output = subscripts, None
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ShapeError(f"einsum: {len(inputs)} operand specs in {subscripts!r} but "
                         f"{len(operands)} operands", user_frame(4))
    if any("." in s for s in inputs):
        inputs, output = _expand_ellipsis(inputs, output, operands)
    for s, o in zip(inputs, operands):
        if len(s) != o.ndim:
            raise ShapeError(f"einsum: spec {s!r} has {len(s)} labels but the operand is "
                             f"{o.aval}", user_frame(4))
    sizes = {}
    for s, o in zip(inputs, operands):
        for c, n in zip(s, o.shape):
            if sizes.setdefault(c, n) != n:
                raise ShapeError(f"einsum: label {c!r} has sizes {sizes[c]} and {n}",
                                 user_frame(4))
    if output is None:
        counts = {c: sum(s.count(c) for s in inputs) for c in sizes}
        output = "".join(sorted(c for c, k in counts.items() if k == 1))
    return inputs, output


def _expand_ellipsis(inputs, output, operands):
    free = [c for c in string.ascii_letters if c not in "".join(inputs) + (output or "")]
    widest = max(o.ndim - len(s.replace("...", "")) for s, o in zip(inputs, operands)
                 if "..." in s)
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
