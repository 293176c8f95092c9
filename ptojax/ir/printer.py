"""Text form of PTO IR, in the style of a jaxpr:

    { lambda ; a:f32[4,5] b:f32[5,3]. let
        c:f32[4,3] = dot_general[contract=((1,), (0,)) batch=((), ())] a b
      in (c) }
"""
from __future__ import annotations

import itertools
import os
import string

import numpy as np

from ptojax import dtypes
from ptojax.ir.core import IR, ClosedIR, Literal, Var


def _names():
    letters = string.ascii_lowercase
    for size in itertools.count(1):
        for chars in itertools.product(letters, repeat=size):
            yield "".join(chars)


class Namer:
    """Assigns stable names a, b, ..., z, aa, ab, ... in order of first appearance."""

    def __init__(self):
        self._names = {}
        self._gen = _names()

    def __call__(self, var) -> str:
        if isinstance(var, Literal):
            return format_literal(var)
        name = self._names.get(var)
        if name is None:
            name = self._names[var] = next(self._gen)
        return name

    def decl(self, var) -> str:
        return f"{self(var)}:{var.type}"


def format_literal(lit: Literal) -> str:
    v = lit.value
    if lit.type.dtype == dtypes.bool_:
        text = str(bool(v))
    elif dtypes.is_float(lit.type.dtype):
        text = repr(float(v))
    else:
        text = str(int(v))
    return f"{text}:{lit.type}"


def format_param(value, namer, indent) -> str:
    if isinstance(value, (IR, ClosedIR)):
        ir = value.ir if isinstance(value, ClosedIR) else value
        return "\n" + _print(ir, namer, indent + 4, source=False) + "\n" + " " * (indent + 2)
    if isinstance(value, np.dtype):
        return dtypes.short_name(value)
    if isinstance(value, tuple) and any(isinstance(v, (IR, ClosedIR)) for v in value):
        return "(" + "".join(format_param(v, namer, indent) for v in value) + ")"
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return repr(value) if isinstance(value, str) else str(value)


def print_eqn(eqn, namer=None, indent=0, source=False) -> str:
    namer = namer or Namer()
    outs = " ".join(namer.decl(v) for v in eqn.outputs)
    params = ""
    shown = [(k, v) for k, v in eqn.params.items() if v is not None]
    if shown:
        params = "[" + " ".join(f"{k}={format_param(v, namer, indent)}" for k, v in shown) + "]"
    ins = " ".join(namer(a) for a in eqn.inputs)
    line = f"{outs} = {eqn.prim.name}{params} {ins}".rstrip()
    if source and eqn.source is not None:
        line += f"    # {os.path.basename(eqn.source.file)}:{eqn.source.line}"
    return line


def _print(ir: IR, namer: Namer, indent: int, source: bool) -> str:
    pad = " " * indent
    consts = " ".join(namer.decl(v) for v in ir.constvars)
    ins = " ".join(namer.decl(v) for v in ir.invars)
    head = f"{pad}{{ lambda {consts}{' ' if consts else ''}; {ins}. let"
    body = [pad + "    " + print_eqn(e, namer, indent + 4, source) for e in ir.eqns]
    outs = " ".join(namer(v) for v in ir.outvars)
    return "\n".join([head, *body, f"{pad}  in ({outs}) }}"])


def print_ir(ir: IR, source: bool = False) -> str:
    return _print(ir, Namer(), 0, source)
