"""Trip counts of a ``pto.kernel``'s loops for the cost model (``cost.py``, ``pipes.py``).

A loop's bounds are ints or scalars of the tile: program-id arithmetic (``Let``), an
enclosing loop's index (nested loops: a backward loop recomputing ``[lo, j)`` at step ``j``)
or a scalar operand read from GM (``ScalarLoad``). The walks keep the scalars known so far
in a dict: the tile's indices, each enclosing loop's index at the step being walked, and
the scalar operands whose values the call gave (``OPERANDS``: parameter name -> value, from
the arguments ``lower`` was called with). A bound that none of these gives takes the user's
hint (``TRIP_HINT``: ``lowered.cost(trip_count=n)``), else the cost model refuses it with a
``TileError`` at the loop's line: it cannot guess how long a run-time loop runs.
"""
from __future__ import annotations

import numpy as np

from ptojax.errors import TileError
from ptojax.ir.core import Literal
from ptojax.lower.schedule import Let, Loop
from ptojax.tile import ops as T

BLOCK_INDEX = "block index"      # the key of a pto.kernel tile's block in its scalars
OPERANDS = "operands"            # the key of the known scalar operands (param name -> value)
TRIP_HINT = "trip count"         # the key of the user's trip count for unknown bounds


def known(a, scalars) -> bool:
    return isinstance(a, (int, Literal)) or (scalars is not None and a in scalars)


def value(a, scalars):
    """The value of a known loop bound or Let argument (an int, a Literal or a scalar)."""
    if isinstance(a, int):
        return a
    if isinstance(a, Literal):
        return a.value
    return scalars[a]


def let(s: Let, scalars):
    """Records a Let's value when its arguments are known (not, e.g., a loop index's lets
    while that loop's steps are costed together)."""
    if scalars is None:
        return
    if s.prim is T.tile_block_index_p:
        scalars[s.var] = scalars[BLOCK_INDEX]
    elif all(known(a, scalars) for a in s.args):
        scalars[s.var] = s.prim.impl(*(value(a, scalars) for a in s.args), **dict(s.params))


def scalar_load(s, scalars):
    """Records a scalar operand's value when the call gave it."""
    if scalars is None:
        return
    v = scalars.get(OPERANDS, {}).get(s.param.name)
    if v is not None:
        scalars[s.var] = np.asarray(v).reshape(-1)[0]


def loop_steps(loop: Loop, scalars):
    """(first index or None, number of steps) of a loop: from its bounds when they are
    known, else the user's trip count hint (the index then unknown)."""
    if known(loop.start, scalars) and known(loop.stop, scalars):
        start = int(value(loop.start, scalars))
        return start, max(0, int(value(loop.stop, scalars)) - start)
    hint = None if scalars is None else scalars.get(TRIP_HINT)
    if hint is None:
        raise TileError(
            "cost model: this pto.kernel.fori loop runs a number of steps known only at run "
            "time (a bound read from a scalar operand the call did not give, or computed "
            "from one); lower the function with concrete arguments (pto.jit(f).lower(*arrays)"
            ".cost()) or give the steps to assume: .cost(trip_count=n)", loop.source)
    return None, int(hint)


def steps_differ(loop: Loop) -> bool:
    """Whether a loop's steps differ in length: a loop nested in its body has bounds that
    depend on its index (directly or through the body's lets)."""
    derived = {loop.var}
    return _uses(loop.stmts, derived)


def _uses(stmts, derived) -> bool:
    for s in stmts:
        if isinstance(s, Let) and any(a in derived for a in s.args if not isinstance(
                a, (int, Literal))):
            derived.add(s.var)
        elif isinstance(s, Loop):
            if any(b in derived for b in (s.start, s.stop) if not isinstance(b, (int, Literal))):
                return True
            if _uses(s.stmts, derived):
                return True
        elif hasattr(s, "stmts") and _uses(s.stmts, derived):
            return True
    return False
