"""Dataflow graph of an IR: ``pto.tools.to_dot(ir)`` (Graphviz DOT text, always available) and
``pto.tools.draw(ir)`` (rendered with the ``graphviz`` package and the Graphviz ``dot``
program when both are installed)."""
from __future__ import annotations

import html
import shutil

from ptojax.errors import UnsupportedError
from ptojax.ir.core import ClosedIR, Literal, Var
from ptojax.ir.core import Namer, format_literal
from ptojax.public import add_examples as _add_examples

INSTALL_HINT = ("pip install graphviz (the Python package) and apt install graphviz (the `dot` "
                "program); pto.tools.to_dot(ir) gives the DOT text without them")


def to_dot(ir, name: str = "ir") -> str:
    """DOT text: inputs and constants as boxes, equations as ellipses, edges for values."""
    ir = ir.ir if isinstance(ir, ClosedIR) else ir
    namer = Namer()
    lines = [f"digraph {name} {{", "  rankdir=TB;", '  node [fontname="monospace"];']
    producer = {}
    for kind, variables in (("const", ir.constvars), ("input", ir.invars)):
        for v in variables:
            node = f"v_{namer(v)}"
            producer[v] = node
            lines.append(f'  {node} [shape=box, label="{kind} {namer.decl(v)}"];')
    for i, eqn in enumerate(ir.eqns):
        node = f"e{i}"
        outs = ", ".join(namer.decl(v) for v in eqn.outputs)
        lines.append(f'  {node} [label="{html.escape(eqn.prim.name)}\\n{outs}"];')
        for a in eqn.inputs:
            if type(a) is Literal:
                lit = f"l{i}_{id(a)}"
                lines.append(f'  {lit} [shape=plaintext, label="{format_literal(a)}"];')
                lines.append(f"  {lit} -> {node};")
            elif a in producer:
                lines.append(f"  {producer[a]} -> {node};")
        for v in eqn.outputs:
            producer[v] = node
    for k, v in enumerate(ir.outvars):
        lines.append(f'  out{k} [shape=box, style=bold, label="output {k}"];')
        if type(v) is Var and v in producer:
            lines.append(f"  {producer[v]} -> out{k};")
    lines.append("}")
    return "\n".join(lines)


def draw(ir, name: str = "ir"):
    """A ``graphviz.Source`` (displays inline in Jupyter; ``.render(path)`` writes a file).

    Raises ``UnsupportedError`` saying what to install when the ``graphviz`` package or the
    ``dot`` program is missing."""
    try:
        import graphviz
    except ImportError:
        raise UnsupportedError(f"pto.tools.draw needs the `graphviz` Python package: "
                               f"{INSTALL_HINT}") from None
    if shutil.which("dot") is None:
        raise UnsupportedError(f"pto.tools.draw needs the Graphviz `dot` program on PATH: "
                               f"{INSTALL_HINT}")
    return graphviz.Source(to_dot(ir, name))


_add_examples(globals(), """
to_dot:
    >>> dot = pto.tools.to_dot(pto.make_ir(lambda x: pnp.sin(x) + 1.0)(1.0))
    >>> dot.splitlines()[0]
    'digraph ir {'
""")
