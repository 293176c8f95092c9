"""``einsum_path``: the order einsum contracts its operands in, and the report JAX prints
for it (opt_einsum's ``PathInfo``). ``contraction_steps`` is what ``einsum`` follows."""
from __future__ import annotations

from decimal import Decimal

import numpy as np

from ptojax.errors import ShapeError
from ptojax.numpy.einsum_search import STRATEGIES, flop_count, term_size
from ptojax.numpy.einsum_spec import parse, search_sizes, shape_of, split_operands
from ptojax.public import add_examples
from ptojax.source_info import user_frame


def search_path(optimize, inputs, output, sizes):
    """The path (position tuples) ``optimize`` asks for: a strategy name, True ('optimal'),
    False (left to right, one pair at a time) or an explicit path."""
    n = len(inputs)
    if optimize is None:
        optimize = "auto"
    if optimize is True:
        optimize = "optimal"
    if optimize is False:
        return [(0, 1)] * (n - 1) if n > 2 else [tuple(range(n))]
    if isinstance(optimize, str):
        if optimize.lower() not in STRATEGIES:
            raise ValueError(f"einsum: unknown or unsupported optimize={optimize!r}; use one of "
                             f"{sorted(STRATEGIES)}, True, False or an explicit path")
        if n <= 2:
            return [tuple(range(n))]
        return STRATEGIES[optimize.lower()]([frozenset(s) for s in inputs], frozenset(output),
                                            sizes)
    return _checked_path(optimize, n)


def _checked_path(path, n):
    """An explicit path: steps of distinct positions into the shrinking operand list that end
    with one operand."""
    try:
        steps = [tuple(int(p) for p in step) for step in path]
    except TypeError:
        raise ValueError(f"einsum: optimize must be a strategy name, a bool or a path (a list "
                         f"of tuples of operand positions); got {path!r}") from None
    live = n
    for step in steps:
        if not step or len(set(step)) != len(step) or not all(0 <= p < live for p in step):
            raise ValueError(f"einsum: path step {step} of {steps} must name distinct "
                             f"positions among the {live} operands left at that point")
        live -= len(step) - 1
    if live != 1:
        raise ValueError(f"einsum: path {steps} leaves {live} operands; it must contract the "
                         f"{n} operands to one")
    return steps


def step_labels(inputs, output, path):
    """Per step of ``path``: (its positions, descending; the labels of the operands it takes,
    in that order; its result's labels; the labels of the operands left after it).
    Operands leave by descending position; the result goes last, labelled in the order its
    labels first appear in the step's operands (the output order at the last step)."""
    terms = list(inputs)
    for k, step in enumerate(path):
        positions = tuple(sorted(step, reverse=True))
        taken = [terms.pop(p) for p in positions]
        joined = "".join(taken)
        kept = set(joined) & set(output + "".join(terms))
        result = output if k == len(path) - 1 else "".join(sorted(kept, key=joined.find))
        terms.append(result)
        yield positions, taken, result, tuple(terms)


def contraction_steps(inputs, shapes, output, sizes, path):
    """Per step of ``path``: (positions, labels summed away, 'in,in->out' string, labels of
    the operands left after it (None past 20), kernel class, FLOPs, scaling, result size)."""
    shapes = [tuple(s) for s in shapes]
    steps = []
    for positions, taken, result, left in step_labels(inputs, output, path):
        taken_shapes = [shapes.pop(p) for p in positions]
        shapes.append(tuple(max(sh[s.find(c)] for s, sh in zip(taken, taken_shapes) if c in s)
                            for c in result))
        involved = frozenset("".join(taken))
        removed = involved - set(result)
        steps.append((positions, removed, ",".join(taken) + "->" + result,
                      left if len(left) <= 20 else None,
                      kernel_class(taken, taken_shapes, result, removed),
                      flop_count(involved, bool(removed), len(positions), sizes),
                      len(involved), term_size(result, sizes)))
    return steps


def kernel_class(taken, shapes, result, removed):
    """The BLAS kernel opt_einsum would map a step to (the report's BLAS column), or False:
    a pair with every label at most once per operand, either shared and summed or kept, and
    summed labels of equal size in both (no broadcasting)."""
    if len(taken) != 2:
        return False
    left, right = taken
    for c in set(left + right):
        nl, nr = left.count(c), right.count(c)
        if nl > 1 or nr > 1 or nl + nr - 1 == int(c in result):
            return False
    if any(shapes[0][left.find(c)] != shapes[1][right.find(c)] for c in removed):
        return False
    if not removed:
        return "OUTER/EINSUM"
    if left == right:
        return "DOT"
    if set(left) == set(right):
        return "DOT/EINSUM"
    r = len(removed)
    if (left[-r:] == right[:r] or left[:r] == right[-r:] or left[-r:] == right[-r:]
            or left[:r] == right[:r]):
        return "GEMM"
    if not set(left) - removed or not set(right) - removed:
        return "GEMV/EINSUM"
    return "TDOT"


class PathInfo:
    """A contraction path's report: FLOPs and scaling of the naive (one big loop) and chosen
    orders, the largest intermediate, and each step. Printing it gives the table."""

    def __init__(self, inputs, output, sizes, path, steps):
        self.input_subscripts = ",".join(inputs)
        self.output_subscript = output
        self.eq = f"{self.input_subscripts}->{output}"
        self.path = path
        self.indices = frozenset("".join(inputs))
        self.size_dict = sizes
        self.shapes = [tuple(sizes[c] for c in s) for s in inputs]
        self.contraction_list = [s[:5] for s in steps]
        self.scale_list = [s[6] for s in steps]
        self.size_list = [s[7] for s in steps]
        inner = sum(len(set(s)) for s in inputs) > len(self.indices)
        self.naive_cost = Decimal(flop_count(self.indices, inner, len(inputs), sizes))
        self.opt_cost = Decimal(sum(s[5] for s in steps))
        self.speedup = self.naive_cost / max(self.opt_cost, Decimal(1))
        self.largest_intermediate = Decimal(max(self.size_list, default=1))

    def __repr__(self):
        lines = [f"  Complete contraction:  {self.eq}\n",
                 f"         Naive scaling:  {len(self.indices)}\n",
                 f"     Optimized scaling:  {max(self.scale_list, default=0)}\n",
                 f"      Naive FLOP count:  {self.naive_cost:.3e}\n",
                 f"  Optimized FLOP count:  {self.opt_cost:.3e}\n",
                 f"   Theoretical speedup:  {self.speedup:.3e}\n",
                 f"  Largest intermediate:  {self.largest_intermediate:.3e} elements\n",
                 "-" * 80 + "\n",
                 f"{'scaling':>6} {'BLAS':>11} {'current':>22} {'remaining':>37}\n",
                 "-" * 80]
        for scale, (_, _, current, left, blas) in zip(self.scale_list, self.contraction_list):
            rest = ",".join(left) + "->" + self.output_subscript if left is not None else "..."
            width = max(0, 56 - max(22, len(current)))
            lines.append(f"\n{scale:>4} {blas:>14} {current:>22}    {rest:>{width}}")
        return "".join(lines)


def einsum_path(subscripts, *operands, optimize="auto"):
    """The contraction order einsum would use, without computing: (path, report).
    ``optimize``: 'auto' (default), 'optimal', 'greedy' (= 'eager', 'opportunistic'),
    'branch-all', 'branch-2', 'branch-1', True ('optimal'), False (left to right) or a path.
    Operands may be arrays or anything with a shape."""
    subscripts, operands = split_operands(subscripts, operands)
    if not operands:
        raise ShapeError("einsum_path: needs at least one operand", user_frame())
    inputs, output, sizes = parse(subscripts, operands)
    sizes = search_sizes(sizes)
    path = search_path(optimize, inputs, output, sizes)
    shapes = [tuple(d if isinstance(d, (int, np.integer)) else sizes[c]   # symbolic: as searched
                    for c, d in zip(s, shape_of(o))) for s, o in zip(inputs, operands)]
    steps = contraction_steps(inputs, shapes, output, sizes, path)
    return path, PathInfo(inputs, output, sizes, path, steps)



add_examples(globals(), """
einsum_path:
    >>> path, info = pnp.einsum_path("ij,jk,kl", pnp.ones((2, 3)), pnp.ones((3, 100)),
    ...                              pnp.ones((100, 5)), optimize="optimal")
    >>> path
    [(1, 2), (0, 1)]
    >>> print(info)  # doctest: +NORMALIZE_WHITESPACE
      Complete contraction:  ij,jk,kl->il
             Naive scaling:  4
         Optimized scaling:  3
          Naive FLOP count:  9.000e+3
      Optimized FLOP count:  3.060e+3
       Theoretical speedup:  2.941e+0
      Largest intermediate:  1.500e+1 elements
    --------------------------------------------------------------------------------
    scaling        BLAS                current                             remaining
    --------------------------------------------------------------------------------
       3           GEMM              kl,jk->lj                             ij,lj->il
       3           GEMM              lj,ij->il                                il->il
""")
