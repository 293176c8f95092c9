"""einsum: Einstein summation, contracted one pair of operands at a time in the order
``einsum_path`` finds (``optimize``, as in JAX: 'auto' by default). Each pair is one
dot_general; labels only one operand (and not the result) has are summed first, repeated labels
within an operand become a diagonal."""
from __future__ import annotations

from ptojax import lax
from ptojax.errors import ShapeError
from ptojax.numpy._promote import broadcast_to_shape
from ptojax.numpy.einsum_path import search_path, step_labels
from ptojax.numpy.einsum_spec import parse, search_sizes, split_operands
from ptojax.numpy.manipulation import diagonal
from ptojax.numpy.products import _options, _promoted
from ptojax.public import add_examples as _add_examples
from ptojax.source_info import user_frame


def einsum(subscripts, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None):
    """Einstein summation with an explicit or implicit output, in the string or interleaved
    form; each pair of operands becomes one dot_general."""
    if out is not None:
        raise NotImplementedError("einsum: the 'out' argument is not supported (arrays are "
                                  "immutable); use the returned array")
    subscripts, operands = split_operands(subscripts, operands)
    if not operands:
        raise ShapeError("einsum: needs at least one operand", user_frame())
    operands = _promoted("einsum", *operands)
    kw = _options("einsum", precision, preferred_element_type)
    inputs, output, sizes = parse(subscripts, operands)
    path = search_path(optimize, inputs, output, search_sizes(sizes))
    terms = [broadcast_to_shape(x, [sizes[c] for c in s], "einsum")
             for x, s in zip(operands, inputs)]
    for positions, names, result, _ in step_labels(inputs, output, path):
        taken = [terms.pop(p) for p in positions]
        terms.append(_contract(taken, names, result, kw))
    x = terms[0]
    pet = kw["preferred_element_type"]
    return x if pet is None or x.dtype == pet else lax.convert_element_type(x, pet)


def _contract(taken, names, result, kw):
    """One step: a single operand reduced to ``result``, or a pair through one dot_general."""
    if len(taken) == 1:
        x, labels = _sum_unused(taken[0], names[0], set(result))
        return _ordered(x, labels, result)
    if len(taken) > 2:
        raise NotImplementedError(f"einsum does not support simultaneous contraction of 3 or "
                                  f"more operands (path step {','.join(names)}->{result}); "
                                  f"give a path of pairs")
    (a, b), (sa, sb) = taken, names
    a, sa = _sum_unused(a, sa, set(result) | set(sb))
    b, sb = _sum_unused(b, sb, set(result) | set(sa))
    batch = [c for c in result if c in sa and c in sb]

    def free(s, other):
        return [c for c in s if c not in other]
    # the operands in their original order (steps list them last first), unless the other
    # order makes the result come out in order without a transpose
    if batch + free(sb, sa) + free(sa, sb) == list(result) \
            or batch + free(sa, sb) + free(sb, sa) != list(result):
        (a, sa), (b, sb) = (b, sb), (a, sa)
    contract = [c for c in sa if c in sb and c not in result]
    x = lax.dot_general(a, b, ((tuple(sa.index(c) for c in contract),
                                tuple(sb.index(c) for c in contract)),
                               (tuple(sa.index(c) for c in batch),
                                tuple(sb.index(c) for c in batch))), **kw)
    return _ordered(x, "".join(batch + free(sa, sb) + free(sb, sa)), result)


def _ordered(x, labels, result):
    perm = tuple(labels.index(c) for c in result)
    return x if perm == tuple(range(len(perm))) else lax.transpose(x, perm)


def _sum_unused(x, labels, keep):
    """Diagonals for labels repeated within the operand, then sums over labels not in
    ``keep``."""
    labels = list(labels)
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


_add_examples(globals(), """
einsum:
    >>> pnp.einsum('ij,j->i', pnp.array([[1, 2], [3, 4]]), pnp.array([1, 1]))
    Array([3, 7], dtype=int32)
""")
