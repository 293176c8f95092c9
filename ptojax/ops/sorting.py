"""``sort``: stable sort of several same-shaped operands along one dimension, ordered by the
first ``num_keys`` of them (lexicographically). NaNs sort last, as in JAX."""
from __future__ import annotations

import numpy as np

from ptojax.errors import ShapeError
from ptojax.ops.checks import check_axis, fmt_types
from ptojax.trace import Primitive


def _sort_abstract(*operands, dimension, num_keys=1):
    if not operands or any(o.shape != operands[0].shape for o in operands):
        raise ShapeError(f"sort: operands must share a shape, got {fmt_types(operands)}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys must be in 1..{len(operands)}, got {num_keys}")
    check_axis("sort", dimension, operands[0].ndim)
    return list(operands)


def _sort(*operands, dimension, num_keys=1):
    keys = operands[:num_keys]
    if num_keys == 1:
        order = np.argsort(keys[0], axis=dimension, kind="stable")
    else:  # lexsort is stable and takes its primary key last
        order = np.lexsort(tuple(reversed(keys)), axis=dimension)
    return [np.take_along_axis(o, order, axis=dimension) for o in operands]


sort_p = Primitive("sort", _sort_abstract, _sort, multiple_results=True)
