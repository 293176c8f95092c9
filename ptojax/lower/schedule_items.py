"""The items of a ``pto.kernel`` schedule before its statements are grouped by core: tile
operations (``Op``, with the flags inserted before and after them) and loops (``LoopItem``,
which may nest: a loop inside a loop's body is an item of that body).

A loop at depth ``d`` (1 for a loop at the top of the body) selects the buffer copy of the
tiles it defines with its own iteration count, named ``loop_slot(d)`` in the statements
("kslot" for depth 1, "kslot2" for depth 2, ...; "slot" is the tile's, depth 0); its staging
rings use the events ``[d * buffers, (d + 1) * buffers)``, below ``EARLY_EVENT``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptojax.errors import TileError
from ptojax.ir.core import Var
from ptojax.ir.pto import RowView, Scratch
from ptojax.ir.types import TileType

ADJACENT_EVENT = 7           # event of adjacent set/wait pairs (rings use the low ids)
EARLY_EVENT = 6              # event of pairs set right after the earlier access (same step)


def loop_slot(depth: int) -> str:
    """The name of the buffer slot selected by the loop at ``depth`` (0: the tile's)."""
    return "slot" if depth == 0 else "kslot" if depth == 1 else f"kslot{depth}"


def slot_depth(name: str) -> int:
    """The loop depth of a slot name (``loop_slot``'s inverse)."""
    return 0 if name == "slot" else 1 if name == "kslot" else int(name[len("kslot"):])


def loop_var_name(depth: int) -> str:
    """The schedule's name of the index of the loop at ``depth`` (>= 1)."""
    return "k" if depth == 1 else f"k{depth}"


def ring_offset(depth: int, buffers: int, source=None) -> int:
    """The first ring event of the loop at ``depth``; deeper nests than the events allow
    raise a TileError at ``source``."""
    if (depth + 1) * buffers > EARLY_EVENT:
        raise TileError(f"kernel body: loops nested {depth} deep with {buffers} staging "
                        f"buffers need more than the {EARLY_EVENT} ring events a core has; "
                        f"nest fewer pto.kernel.fori loops or use fewer staging buffers",
                        source)
    return depth * buffers


@dataclass(eq=False)
class Op:
    """One tile operation: its core, pipe, statements, and the buffers it reads/writes."""
    core: str
    pipe: str
    stmts: list
    reads: list
    writes: list
    eqn: object
    before: list = field(default_factory=list)    # statements inserted before it
    after: list = field(default_factory=list)


@dataclass(eq=False)
class LoopItem:
    var: Var
    start: object
    stop: object
    decls: list
    items: list
    depth: int = 1             # 1: a loop at the top of the body; 2: inside one; ...
    source: object = None      # the user's pto.kernel.fori line
    before: list = field(default_factory=list)
    after: list = field(default_factory=list)



def resource(op):
    if isinstance(op, RowView):
        op = op.var
    if isinstance(op, Scratch):
        return ("scratch", op.eqn)
    if isinstance(op, Var) and isinstance(op.type, TileType):
        return ("tile", op)
    return None


def flat_ops(items):
    """(op, top-level item containing it) for every op, in program order."""
    for it in items:
        if isinstance(it, Op):
            yield it, it
        elif isinstance(it, LoopItem):
            for op, _ in flat_ops(it.items):
                yield op, it



def scoped_ops(items, loop=None):
    """(op, the loop holding it or None) for every op, in program order."""
    for it in items:
        if isinstance(it, Op):
            yield it, loop
        elif isinstance(it, LoopItem):
            yield from scoped_ops(it.items, it)

