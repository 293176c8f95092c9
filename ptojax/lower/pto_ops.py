"""The lowering table: the PTO instruction(s) for each tile operation.

``lower_eqn(eqn)`` returns ``Instr`` records naming PTO instructions by their C++ intrinsic
name (``TADD``, ``TROWSUM``, ...); the PTO-AS printer lowercases them into ``pto.tadd`` etc.
Operands are IR atoms (tile Vars, scalar Vars or Literals) or two markers: ``Scratch`` (the
op's temporary buffer from the memory plan) and ``RowView`` (the [1,R] row-major view of a
[R,1] column-major row-vector tile, which elementwise instructions require).

Where PTO has no single instruction, a short in-place sequence on the destination is used and
is exact up to float rounding, e.g. tanh(x) = 1 - 2/(exp(2x) + 1) and logistic(x) =
1/(1 + exp(-x)); integer powers are repeated TMUL (and TRECIP). Float -> integer conversion
is TCVT with CAST_TRUNC; ptojax's semantics additionally saturate and send NaN to 0, which a
target's TCVT is not documented to guarantee. Nothing here has been executed on Ascend
hardware.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ptojax import dtypes
from ptojax.errors import UnsupportedError
from ptojax.ir.core import Literal
from ptojax.ir.types import TensorType, TileType
from ptojax.tile import ops as T

PIPE_OF = {"TLOAD": "MTE2", "TSTORE": "MTE3", "TEXTRACT": "MTE1", "TMATMUL": "M",
           "TMATMUL_ACC": "M"}   # everything else runs on the vector pipe (V)


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


BINARY = {"add": "ADD", "sub": "SUB", "mul": "MUL", "div": "DIV", "max": "MAX", "min": "MIN"}
CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
FLIP = {"EQ": "EQ", "NE": "NE", "LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE"}
UNARY = {"neg": "TNEG", "abs": "TABS", "exp": "TEXP", "log": "TLOG", "sqrt": "TSQRT",
         "rsqrt": "TRSQRT", "not": "TNOT"}
LOGIC = {"and": "TAND", "or": "TOR"}
REDUCE = {"tile_row_sum": "TROWSUM", "tile_row_max": "TROWMAX", "tile_row_min": "TROWMIN",
          "tile_col_sum": "TCOLSUM"}


def is_row_vector(t) -> bool:
    return isinstance(t, TileType) and t.shape[1] == 1 and t.shape[0] > 1


def lit(value, dtype) -> Literal:
    return Literal(value, TensorType((), dtype))


def _vec(a):
    """Elementwise instructions see row-vector tiles through their row-major view."""
    return RowView(a) if not isinstance(a, Literal) and is_row_vector(a.type) else a


def _is_scalar(a) -> bool:
    return not isinstance(a.type, TileType)


def lower_eqn(eqn) -> list:
    """PTO instructions for one tile-body equation (loads/stores/loops are scheduled apart)."""
    name = eqn.prim.name
    out = eqn.outputs[0] if eqn.outputs else None
    if name in REDUCE:
        return [Instr(REDUCE[name], out, (eqn.inputs[0], Scratch(eqn)))]
    if name == "tile_fill":
        return [Instr("TEXPANDS", _vec(out), (eqn.inputs[0],))]
    if name == "tile_row_expand":
        return [Instr("TROWEXPAND", out, (eqn.inputs[0],))]
    if name == "tile_col_expand":
        return [Instr("TCOLEXPAND", out, (eqn.inputs[0],))]
    if name == "tile_move":
        return [Instr("TEXTRACT", out, (eqn.inputs[0],), {"index": (0, 0)})]
    if name == "tile_matmul":
        return [Instr("TMATMUL", out, tuple(eqn.inputs))]
    if name == "tile_matmul_acc":
        return [Instr("TMATMUL_ACC", out, tuple(eqn.inputs))]
    if name.startswith("tile_") and name[5:] in T.ELEMENTWISE_TILE_PRIMS:
        return _elementwise(name[5:], eqn, out)
    raise UnsupportedError(f"no PTO lowering for `{name}`")


def _elementwise(op, eqn, out):
    ins = list(eqn.inputs)
    d = _vec(out)
    dtype = out.type.dtype
    if op in BINARY or op in CMP:
        return _binary(op, ins, d, out)
    if op == "not" and dtype == dtypes.bool_:     # masks are 0/1 bytes: not is mask == 0
        return [Instr("TCMPS", d, (_vec(ins[0]), lit(0, dtype)), {"cmp": "EQ"})]
    if op in UNARY:
        return [Instr(UNARY[op], d, (_vec(ins[0]),))]
    if op in LOGIC:
        return [Instr(LOGIC[op], d, tuple(_vec(a) for a in ins))]
    x = _vec(ins[0])
    if op == "tanh":
        return [Instr("TMULS", d, (x, lit(2, dtype))), Instr("TEXP", d, (d,)),
                Instr("TADDS", d, (d, lit(1, dtype))), Instr("TRECIP", d, (d,)),
                Instr("TMULS", d, (d, lit(-2, dtype))), Instr("TADDS", d, (d, lit(1, dtype)))]
    if op == "logistic":
        return [Instr("TMULS", d, (x, lit(-1, dtype))), Instr("TEXP", d, (d,)),
                Instr("TADDS", d, (d, lit(1, dtype))), Instr("TRECIP", d, (d,))]
    if op == "integer_pow":
        return _integer_pow(eqn.params["y"], x, d, dtype)
    if op == "select":
        return [Instr("TSEL", d, tuple(_vec(a) for a in ins))]
    if op == "is_finite":
        return [Instr("TABS", Scratch(eqn), (x,)),
                Instr("TCMPS", d, (Scratch(eqn), lit(math.inf, ins[0].type.dtype)),
                      {"cmp": "LT"})]
    if op == "convert_element_type":
        src = ins[0].type.dtype
        mode = "CAST_TRUNC" if dtypes.is_float(src) and dtypes.is_integer(dtype) else \
            "CAST_RINT"
        return [Instr("TCVT", d, (x,), {"round": mode})]
    if op in ("stop_gradient", "copy"):
        return [Instr("TMOV", d, (x,))]
    raise UnsupportedError(f"no PTO lowering for tile_{op}")


def _binary(op, ins, d, out):
    a, b = ins
    cmp = CMP.get(op)
    if _is_scalar(a) and not _is_scalar(b):      # scalar first
        if cmp:
            return [Instr("TCMPS", d, (_vec(b), a), {"cmp": FLIP[cmp]})]
        if op in ("add", "mul", "max", "min"):
            return [Instr(f"T{BINARY[op]}S", d, (_vec(b), a))]
        if op == "sub":                          # s - x = (-1 * x) + s
            return [Instr("TMULS", d, (_vec(b), lit(-1, b.type.dtype))),
                    Instr("TADDS", d, (d, a))]
        return [Instr("TDIVS", d, (a, _vec(b)))]  # the scalar/tile overload
    if _is_scalar(b):
        if cmp:
            return [Instr("TCMPS", d, (_vec(a), b), {"cmp": cmp})]
        return [Instr(f"T{BINARY[op]}S", d, (_vec(a), b))]
    if cmp:
        return [Instr("TCMP", d, (_vec(a), _vec(b)), {"cmp": cmp})]
    bt, ot = b.type, out.type
    if bt.shape != ot.shape and bt.shape == (T.row_vector_rows(ot.shape[0]), 1):
        return [Instr(f"TROWEXPAND{BINARY[op]}", out, (a, b))]
    if bt.shape != ot.shape and bt.shape == (1, ot.shape[1]):
        return [Instr(f"TCOLEXPAND{BINARY[op]}", out, (a, b))]
    return [Instr(f"T{BINARY[op]}", d, (_vec(a), _vec(b)))]


def _integer_pow(y, x, d, dtype):
    if y == 1:
        return [Instr("TMULS", d, (x, lit(1, dtype)))]
    if y in (2, -2, 4):
        seq = [Instr("TMUL", d, (x, x))]
        if y == 4:
            seq.append(Instr("TMUL", d, (d, d)))
        if y == -2:
            seq.append(Instr("TRECIP", d, (d,)))
        return seq
    if y == 3:
        return [Instr("TMUL", d, (x, x)), Instr("TMUL", d, (d, x))]
    return [Instr("TRECIP", d, (x,))]           # y == -1


# Every instruction the emitted C++ may use (the subset the host header must implement).
INSTRUCTIONS = ("TASSIGN", "TLOAD", "TSTORE", "TEXTRACT", "TMATMUL", "TMATMUL_ACC", "TADD",
                "TSUB", "TMUL", "TDIV", "TMAX", "TMIN", "TADDS", "TSUBS", "TMULS", "TDIVS",
                "TMAXS", "TMINS", "TNEG", "TABS", "TEXP", "TLOG", "TSQRT", "TRSQRT", "TRECIP",
                "TNOT", "TAND", "TOR", "TCMP", "TCMPS", "TSEL", "TCVT", "TMOV", "TEXPANDS",
                "TROWEXPAND", "TCOLEXPAND", "TROWEXPANDADD", "TROWEXPANDSUB",
                "TROWEXPANDMUL", "TROWEXPANDDIV", "TROWEXPANDMAX", "TROWEXPANDMIN",
                "TCOLEXPANDADD", "TCOLEXPANDSUB", "TCOLEXPANDMUL", "TCOLEXPANDDIV",
                "TCOLEXPANDMAX", "TCOLEXPANDMIN", "TROWSUM", "TROWMAX", "TROWMIN", "TCOLSUM")
