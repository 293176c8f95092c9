"""PTO instructions as values: what one tile operation lowers to.

An ``Instr`` names a PTO instruction by its C++ intrinsic name (``TADD``, ``TROWSUM``, ...; the
PTO-AS printer lowercases it into ``pto.tadd``). Its operands are IR atoms (tile Vars, scalar
Vars or Literals) or two markers: ``Scratch`` (the op's temporary buffer from the memory plan)
and ``RowView`` (the [1,R] row-major view of a [R,1] column-major row-vector tile, which
elementwise instructions require).

A primitive's ``pto`` fact is a *recipe*: ``recipe(eqn) -> [Instr]`` for its tile equation.
The builders below cover the instruction families (unary, tile-tile / tile-scalar /
row- and column-broadcast binary, compare, fixed sequences); a primitive with a special form
writes its recipe with the same vocabulary. Where PTO has no single instruction a short
in-place sequence on the destination is used; nothing here has run on Ascend hardware.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptojax.ir.core import Literal
from ptojax.ir.types import TensorType, TileType

PIPE_OF = {"TLOAD": "MTE2", "TSTORE": "MTE3", "TEXTRACT": "MTE1", "TMATMUL": "M",
           "TMATMUL_ACC": "M", "TIMG2COL": "MTE1", "TSETFMATRIX": "S", "TSET_IMG2COL_RPT": "S",
           "TSET_IMG2COL_PADDING": "S"}   # everything else runs on the vector pipe (V)
# PTO needs the rows of a [R,1] column-major row-vector tile to span a multiple of 32 bytes;
# padding them to a multiple of 32 rows satisfies that for every dtype, so a row vector's
# physical rows may exceed the rows of the tiles it belongs to (its valid rows match them).
ROW_VECTOR_ALIGN = 32
FLIPPED = {"EQ": "EQ", "NE": "NE", "LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE"}


def row_vector_rows(rows: int) -> int:
    return -(-rows // ROW_VECTOR_ALIGN) * ROW_VECTOR_ALIGN


@dataclass(frozen=True)
class Scratch:
    """The temporary buffer the memory plan reserved for ``eqn``."""
    eqn: object


@dataclass(frozen=True)
class RowView:
    """The [1, R] row-major view of the [R, 1] column-major tile ``var`` (same storage)."""
    var: object


@dataclass
class Instr:
    op: str                       # C++ intrinsic name, e.g. "TADD"
    dst: object                   # destination operand (None for TSTORE: see args)
    srcs: tuple = ()
    attrs: dict = field(default_factory=dict)   # cmp / round mode, atomic

    @property
    def pipe(self) -> str:
        return PIPE_OF.get(self.op, "V")

    def operands(self):
        return ((self.dst,) if self.dst is not None else ()) + tuple(self.srcs)


def is_row_vector(t) -> bool:
    return isinstance(t, TileType) and t.shape[1] == 1 and t.shape[0] > 1


def lit(value, dtype) -> Literal:
    return Literal(value, TensorType((), dtype))


def vec(a):
    """Elementwise instructions see row-vector tiles through their row-major view."""
    return RowView(a) if not isinstance(a, Literal) and is_row_vector(a.type) else a


def is_scalar(a) -> bool:
    return not isinstance(a.type, TileType)


# recipe builders -------------------------------------------------------------------------------
def unary(op: str):
    """One instruction from operand 0 into the destination (``TEXP dst, x``)."""
    def recipe(eqn):
        return [Instr(op, vec(eqn.outputs[0]), (vec(eqn.inputs[0]),))]
    return recipe


def nary(op: str):
    """One instruction over every operand (``TSEL dst, mask, a, b``; ``TAND dst, a, b``)."""
    def recipe(eqn):
        return [Instr(op, vec(eqn.outputs[0]), tuple(vec(a) for a in eqn.inputs))]
    return recipe


X, DST = "x", "dst"


def sequence(*steps):
    """Fixed in-place steps ``(op, operand, *scalars)`` where the operand is ``X`` (operand
    0) or ``DST`` and the scalars become literals of the result dtype."""
    def recipe(eqn):
        d = vec(eqn.outputs[0])
        x = vec(eqn.inputs[0])
        dtype = eqn.outputs[0].type.dtype
        return [Instr(op, d, ((x if src == X else d), *(lit(c, dtype) for c in consts)))
                for op, src, *consts in steps]
    return recipe


def binary(stem: str, commutative: bool):
    """``T<stem>`` on two tiles; ``T<stem>S`` with a scalar; ``TROWEXPAND<stem>`` /
    ``TCOLEXPAND<stem>`` with a row ([R,1]) or column ([1,C]) tile as the second operand."""
    def recipe(eqn):
        (a, b), out = eqn.inputs, eqn.outputs[0]
        d = vec(out)
        if is_scalar(a) and not is_scalar(b):             # scalar first
            if commutative:
                return [Instr(f"T{stem}S", d, (vec(b), a))]
            if stem == "SUB":                              # s - x = (-1 * x) + s
                return [Instr("TMULS", d, (vec(b), lit(-1, b.type.dtype))),
                        Instr("TADDS", d, (d, a))]
            return [Instr(f"T{stem}S", d, (a, vec(b)))]     # the scalar/tile overload (TDIVS)
        if is_scalar(b):
            return [Instr(f"T{stem}S", d, (vec(a), b))]
        bt, ot = b.type, out.type
        if bt.shape != ot.shape and bt.shape == (row_vector_rows(ot.shape[0]), 1):
            return [Instr(f"TROWEXPAND{stem}", out, (a, b))]
        if bt.shape != ot.shape and bt.shape == (1, ot.shape[1]):
            return [Instr(f"TCOLEXPAND{stem}", out, (a, b))]
        return [Instr(f"T{stem}", d, (vec(a), vec(b)))]
    return recipe


def compare(cmp: str):
    """``TCMP`` of two tiles, ``TCMPS`` with a scalar (either side), writing a mask."""
    def recipe(eqn):
        (a, b), d = eqn.inputs, vec(eqn.outputs[0])
        if is_scalar(a) and not is_scalar(b):
            return [Instr("TCMPS", d, (vec(b), a), {"cmp": FLIPPED[cmp]})]
        if is_scalar(b):
            return [Instr("TCMPS", d, (vec(a), b), {"cmp": cmp})]
        return [Instr("TCMP", d, (vec(a), vec(b)), {"cmp": cmp})]
    return recipe
