"""The block values of a ``pto.kernel`` body as ``kernel/lower.py`` lowers it (``Value``), the
UB layouts a vector value takes (full tile, row vector [R, 1], column vector [1, C]) with the
padded shapes of UB and cube tiles, the ``Scope`` (the body's top level or a loop body) whose
IR the lowering builds, and the int32 index literal its scalar arithmetic uses."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ptojax import dtypes
from ptojax.ir.builder import IRBuilder
from ptojax.ir.core import Literal, Var
from ptojax.ir.pto import row_vector_rows
from ptojax.ir.types import TensorType
from ptojax.tile.memory import align_up

I32 = TensorType((), dtypes.int32)
FULL, ROW, COL = "full", "row", "col"


def idx(value: int) -> Literal:
    return Literal(np.int32(value), I32)


def _is_lit(a, value=None) -> bool:
    return type(a) is Literal and (value is None or int(a.value) == value)


@dataclass(eq=False)
class Value:
    """A block value inside a kernel body. ``kind``:

    tile     ``atom`` is a UB tile of ``layout`` (full | row | col)
    scalar   ``atom`` is a scalar (Literal or Var)
    bcast    ``src`` (a row/col/scalar Value) broadcast to ``shape`` (``layout``: what src is)
    acc      ``atom`` is an L0C accumulator holding ``shape`` (``dtype``: the block dtype)
    window   a GM window not loaded yet: ``ref`` (GM atom), ``starts``, ``sizes``
    iota     indices along ``dim`` of ``shape``
    gm       ``atom`` is a GM array (a ref)
    trans    ``src`` transposed (only a matmul reads it)
    """
    kind: str
    shape: tuple
    dtype: object
    scope: object
    atom: object = None
    layout: str = FULL
    src: object = None
    ref: object = None
    starts: tuple = ()
    sizes: tuple = ()
    dim: int = 0
    made: dict = field(default_factory=dict)


def layout_of(shape, hint=COL) -> str:
    """The UB layout of a logical shape: (R, 1) a row vector, (1, C) or (C,) a column vector
    (``hint`` decides for 1-d values), (R, C) full."""
    if len(shape) == 1:
        return hint
    r, c = shape
    if c == 1 and r > 1:
        return ROW
    if r == 1:
        return COL
    return FULL


def ub_shape(shape, layout, dtype) -> tuple:
    """(physical shape, valid shape) of a UB tile: rows span 32-byte multiples."""
    align = max(1, 32 // dtype.itemsize)
    n = math.prod(shape)
    if layout == ROW:
        return (row_vector_rows(n), 1), (n, 1)
    if layout == COL:
        return (1, align_up(n, align)), (1, n)
    r, c = shape
    return (r, align_up(c, align)), (r, c)


def cube_shape(rows, cols, f=16) -> tuple:
    return (align_up(rows, f), align_up(cols, f)), (rows, cols)


# --- scopes (the kernel body and loop bodies) ----------------------------------------------------
class Scope:
    """An IR being built: the body's top level or a loop body. Atoms defined in an enclosing
    scope are imported as loop invariants on use (``atom``)."""

    def __init__(self, parent: Optional["Scope"]):
        self.parent = parent
        self.b = IRBuilder()
        self.defined: set = set()
        self.imported: dict = {}          # outer atom -> this scope's var

    def atom(self, a):
        if type(a) is Literal or a in self.defined:
            return a
        if a not in self.imported:
            if self.parent is None:
                raise AssertionError(f"kernel lowering: {a} is defined nowhere")
            self.parent.atom(a)
            self.imported[a] = Var(a.type)
            self.defined.add(self.imported[a])     # this scope's name for it
        return self.imported[a]

    def emit(self, prim, inputs, source, **params):
        out = self.b.emit(prim, [self.atom(a) for a in inputs], params, source)
        for v in (out if isinstance(out, list) else [out]):
            self.defined.add(v)
        return out

    def depth(self) -> int:
        return 0 if self.parent is None else 1 + self.parent.depth()
