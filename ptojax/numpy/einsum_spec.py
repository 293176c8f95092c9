"""Reading einsum's subscripts: the string form (``'ij,jk->ik'``, implicit output, ``...``)
or the interleaved form (``x, [0, 1], y, [1, 2], [0, 2]``), checked against the operands'
shapes, into one label string per operand, the output labels and each label's size."""
from __future__ import annotations

import string

import numpy as np

from ptojax.errors import ShapeError
from ptojax.source_info import user_frame

LABELS = string.ascii_letters       # the order opt_einsum assigns symbols in


def shape_of(x) -> tuple:
    """An operand's shape, without converting it (arrays, tracers, nested lists)."""
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _describe(x) -> str:
    aval = getattr(x, "aval", None)
    return str(aval) if aval is not None else f"of shape {shape_of(x)}"


def _spec_error(subscripts, why):
    return ShapeError(f"einsum: invalid subscripts {subscripts!r}: {why}", user_frame())


def split_operands(subscripts, operands):
    """(subscripts string, operands) from either calling form."""
    if isinstance(subscripts, str):
        return subscripts, list(operands)
    return _from_interleaved([subscripts, *operands])


def _from_interleaved(args):
    """``op0, sub0, op1, sub1, ..., [out]``: the operands' labels (any sortable values, and
    Ellipsis) become letters in sorted order."""
    output = args.pop() if len(args) % 2 else None
    ops, subs = args[0::2], [list(s) for s in args[1::2]]
    try:
        symbols = sorted({x for sub in subs for x in sub if x is not Ellipsis})
    except TypeError:
        raise ShapeError(f"einsum: interleaved subscripts must hold sortable labels (e.g. ints) "
                         f"or Ellipsis; got {subs}", user_frame()) from None
    if len(symbols) > len(LABELS):
        raise ShapeError(f"einsum: at most {len(LABELS)} distinct labels; got {len(symbols)}",
                         user_frame())
    letter = dict(zip(symbols, LABELS))

    def letters(sub):
        missing = [x for x in sub if x is not Ellipsis and x not in letter]
        if missing:
            raise ShapeError(f"einsum: output labels {missing} appear in no operand",
                             user_frame())
        return "".join("..." if x is Ellipsis else letter[x] for x in sub)
    spec = ",".join(letters(s) for s in subs)
    if output is not None:
        spec += "->" + letters(list(output))
    return spec, list(ops)


def parse(subscripts, operands):
    """(input label strings with ``...`` expanded, output labels, {label: size})."""
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1 or not set(spec) <= set(LABELS + ",.->"):
        raise _spec_error(subscripts, "use letters, ',', '...' and at most one '->'")
    lhs, output = spec.split("->") if "->" in spec else (spec, None)
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise _spec_error(subscripts, f"{len(inputs)} operand specs but {len(operands)} "
                                      f"operands")
    if any("." in s.replace("...", "", 1) for s in inputs + [output or ""]):
        raise _spec_error(subscripts, "'.' may only appear as one '...' per operand")
    shapes = [shape_of(o) for o in operands]
    if "..." in spec:
        inputs, output = _expand_ellipsis(subscripts, inputs, output, shapes)
    for s, o, shape in zip(inputs, operands, shapes):
        if len(s) != len(shape):
            raise ShapeError(f"einsum: spec {s!r} has {len(s)} labels but the operand is "
                             f"{_describe(o)}", user_frame())
    sizes = _label_sizes(subscripts, inputs, shapes)
    if output is None:
        output = _implicit_output(inputs, "")
    if "..." in output or len(set(output)) != len(output) or not set(output) <= set(sizes):
        raise _spec_error(subscripts, f"the output {output!r} must use distinct labels of the "
                                      f"inputs")
    return inputs, output, sizes


def _label_sizes(subscripts, inputs, shapes):
    """Each label's size; a size-1 dimension broadcasts against the label's other sizes."""
    sizes = {}
    for s, shape in zip(inputs, shapes):
        for c, n in zip(s, shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = n
            elif n not in (1, sizes[c]):
                raise ShapeError(f"einsum: label {c!r} has sizes {sizes[c]} and {n} in "
                                 f"{subscripts!r}", user_frame())
    return sizes


def search_sizes(sizes):
    """The sizes a path search weighs: a symbolic dimension (dynamic shapes) counts as 8, as
    JAX's einsum does for shape-polymorphic operands."""
    return {c: int(n) if isinstance(n, (int, np.integer)) else 8 for c, n in sizes.items()}


def _implicit_output(inputs, leading):
    """NumPy's implicit output: ``leading`` then the labels used once, sorted."""
    joined = "".join(inputs)
    return leading + "".join(sorted(c for c in set(joined)
                                    if joined.count(c) == 1 and c not in leading))


def _expand_ellipsis(subscripts, inputs, output, shapes):
    """``...`` as the last k of the first (largest rank) unused labels, k the dimensions it
    covers in each operand (opt_einsum's naming, so reports read the same)."""
    used = set("".join(inputs) + (output or "")) - set(".")
    free = [c for c in LABELS if c not in used][:max((len(s) for s in shapes), default=0)]
    widest = 0
    expanded = []
    for s, shape in zip(inputs, shapes):
        if "..." in s:
            k = len(shape) - (len(s) - 3)
            if k < 0:
                raise _spec_error(subscripts, f"operand spec {s!r} has more labels than the "
                                              f"operand's {len(shape)} dimensions")
            widest = max(widest, k)
            s = s.replace("...", "".join(free[len(free) - k:]) if k else "")
        expanded.append(s)
    ellipsis = "".join(free[len(free) - widest:]) if widest else ""
    if output is not None:
        return expanded, output.replace("...", ellipsis)
    return expanded, _implicit_output(expanded, ellipsis)
