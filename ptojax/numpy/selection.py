"""Choosing among values elementwise: ``select`` (the first true condition picks its
choice), ``choose`` (an index array picks among choices) and ``piecewise`` (the last true
condition picks the function applied to ``x``, as ``vectorize(switch)``)."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.control_flow import switch
from ptojax.errors import ConcretizationError, located
from ptojax.numpy._promote import (array_from, asarray, broadcast_shapes, broadcast_to_shape,
                                   convert, result_type)
from ptojax.numpy import math as ew
from ptojax.numpy.vectorize import vectorize
from ptojax.source_info import user_frame
from ptojax.trace import Tracer
from ptojax.public import add_examples as _add_examples


def _as_bool(c):
    return c if c.dtype == dtypes.bool_ else lax.ne(c, convert(0, c.dtype))


def _broadcast_all(op, arrays):
    shape = broadcast_shapes(op, *[tuple(a.shape) for a in arrays])
    return [broadcast_to_shape(a, shape, op) for a in arrays]


def select(condlist, choicelist, default=0):
    """``choicelist[k]`` where ``condlist[k]`` is the first true condition, else
    ``default``; all broadcast together, the choices and default promoted to one dtype."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist must have the length of choicelist "
                         f"({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("select: condlist must be non-empty")
    conds = [_as_bool(asarray(c, op="select")) for c in condlist]
    values = [asarray(v, op="select") for v in (default, *choicelist)]
    dtype, weak = result_type(*values, op="select")
    values = [convert(v, dtype, weak) for v in values]
    conds, values = (lambda xs: (xs[:len(conds)], xs[len(conds):]))(
        _broadcast_all("select", conds + values))
    out = values[0]
    for cond, choice in zip(reversed(conds), reversed(values[1:])):
        out = lax.select(cond, choice, out)
    return out


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` for each position ``i`` (``a`` and the choices broadcast
    together). ``mode``: "raise" (``a`` must be concrete and in range), "wrap" or "clip"."""
    if out is not None:
        raise ValueError("choose: the out= argument is not supported")
    a = asarray(a, op="choose")
    choices = [asarray(c, op="choose") for c in choices]
    if not dtypes.is_integer(a.dtype):
        raise located(ValueError(f"choose: the index array a must be integer typed, got "
                                 f"{a.aval}"), user_frame())
    n = len(choices)
    if mode == "raise":
        if type(a) is Tracer:
            raise ConcretizationError("choose: mode='raise' checks the indices, so they must "
                                      "be concrete; use mode='wrap' or mode='clip' under "
                                      "jit/vmap/grad", user_frame())
        values = np.asarray(a)
        if np.any((values < 0) | (values >= n)):
            raise located(ValueError(f"choose: an entry of a is outside 0..{n - 1} "
                                     f"(invalid entry in choice array)"), user_frame())
    elif mode == "wrap":
        a = ew.remainder(a, n)
    elif mode == "clip":
        a = ew.clip(a, 0, n - 1)
    else:
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if n == 0:
        raise ValueError("choose: choices must be non-empty")
    dtype = result_type(*choices, op="choose")[0]
    index, *cases = _broadcast_all("choose", [convert(a, dtypes.int32)]
                                   + [convert(c, dtype) for c in choices])
    return lax.select_n(index, *cases)


def piecewise(x, condlist, funclist, *args, **kw):
    """``x`` with each element replaced by ``funclist[k](element, *args, **kw)`` (or the
    constant ``funclist[k]``) for the last true ``condlist[k]``; where none holds, by the
    extra last entry of ``funclist`` (or 0). Results keep ``x``'s dtype."""
    x = asarray(x, op="piecewise")
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = [funclist[-1], *funclist[:-1]]
    elif nf == nc:
        funclist = [0, *funclist]
    else:
        raise ValueError(f"piecewise: with {nc} condition(s), {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    conds = array_from(condlist, dtype=dtypes.bool_, op="piecewise")   # a list, as JAX
    # the branch: 1 + the last true condition, or 0 when none holds
    weights = lax.broadcast_in_dim(np.arange(1, nc + 1, dtype=np.int32), tuple(conds.shape),
                                   (0,))
    index = lax.reduce_max(lax.select(conds, weights, lax.full_like(weights, 0)), (0,))

    def branch(f):   # each branch's result in x's dtype, strongly typed, as JAX's
        if callable(f):
            return lambda v: lax.convert_element_type(f(v, *args, **kw), x.dtype)
        return lambda v: lax.convert_element_type(asarray(f, op="piecewise"), x.dtype)
    return vectorize(switch, excluded=(1,))(index, [branch(f) for f in funclist], x)


__all__ = ["choose", "piecewise", "select"]


_add_examples(globals(), """
select:
    >>> x = pnp.arange(5)
    >>> pnp.select([x < 2, x > 3], [x, x * 10], default=-1)
    Array([ 0,  1, -1, -1, 40], dtype=int32)
choose:
    >>> pnp.choose(pnp.array([0, 1, 0]), [pnp.array([1, 2, 3]), pnp.array([10, 20, 30])])
    Array([ 1, 20,  3], dtype=int32)
piecewise:
    >>> x = pnp.array([-2.0, 0.5, 3.0])
    >>> pnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, 1.0, lambda v: v * v])
    Array([2.  , 0.25, 1.  ], dtype=float32)
""")
