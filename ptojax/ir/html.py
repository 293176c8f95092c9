"""Rich display of IR in Jupyter (``IR._repr_html_``): the text of ``ir/printer.py`` with
primitive names, types, literals and source lines highlighted, the ``=`` of each block's
equations aligned, and every sub-IR (loop and branch bodies, tile-kernel bodies, custom rule
bodies) folded into its own ``<details>`` block under the equation that holds it."""
from __future__ import annotations

import html
import os

from ptojax.ir.core import IR, ClosedIR, Literal, as_ir
from ptojax.ir.printer import Namer, format_literal, format_param

# sub-IRs with at most this many equations start unfolded
OPEN_UP_TO = 8
# the output column is padded to the widest declaration of its block, up to this many chars
MAX_ALIGN = 40

_STYLE = ("<style>.pto-ir{font-family:monospace;font-size:12px;line-height:1.4;"
          "white-space:pre}.pto-ir .p{color:#0550ae;font-weight:600}"
          ".pto-ir .t{color:#8250df}.pto-ir .l{color:#953800}.pto-ir .k{color:#cf222e}"
          ".pto-ir .a{color:#57606a}.pto-ir .c{color:#6e7781;font-style:italic}"
          ".pto-ir summary{cursor:pointer;color:#57606a}</style>")


def _span(cls: str, text: str) -> str:
    return f'<span class="{cls}">{html.escape(text)}</span>'


def _decl(namer: Namer, var) -> tuple:
    """(html, plain-text length) of ``name:type``."""
    name, type_text = namer(var), f":{var.type}"
    return html.escape(name) + _span("t", type_text), len(name) + len(type_text)


def _atom(namer: Namer, a) -> str:
    if type(a) is Literal:
        return _span("l", format_literal(a))
    return html.escape(namer(a))


def _sub_irs(value) -> list:
    """The sub-IRs a param value holds: itself, or the members of a tuple."""
    if isinstance(value, (IR, ClosedIR)):
        return [value]
    if isinstance(value, tuple):
        return [v for v in value if isinstance(v, (IR, ClosedIR))]
    return []


def _params(eqn, namer: Namer) -> str:
    shown = []
    for key, value in eqn.params.items():
        if value is None:
            continue
        count = len(_sub_irs(value))
        text = (f"<{count} sub-IR{'s' if count > 1 else ''} below>" if count
                else format_param(value, namer, 0))
        shown.append(f"{key}={text}")
    return _span("a", "[" + " ".join(shown) + "]") if shown else ""


def _source(eqn, show: bool) -> str:
    if not show or eqn.source is None:
        return ""
    return "    " + _span("c", f"# {os.path.basename(eqn.source.file)}:{eqn.source.line}")


def _line(indent: int, content: str) -> str:
    return f'<div>{" " * indent}{content}</div>'


def _header(ir: IR, namer: Namer, indent: int) -> str:
    consts = " ".join(_decl(namer, v)[0] for v in ir.constvars)
    ins = " ".join(_decl(namer, v)[0] for v in ir.invars)
    return _line(indent, f"{{ {_span('k', 'lambda')} {consts}{' ' if consts else ''}; "
                         f"{ins}. {_span('k', 'let')}")


def _eqn_blocks(eqn, namer: Namer, indent: int, width: int, source: bool) -> list:
    decls = [_decl(namer, v) for v in eqn.outputs]
    outs = " ".join(h for h, _ in decls)
    pad = " " * max(0, width - (sum(n for _, n in decls) + len(decls) - 1))
    ins = " ".join(_atom(namer, a) for a in eqn.inputs)
    blocks = [_line(indent, f"{outs}{pad} = {_span('p', eqn.prim.name)}{_params(eqn, namer)}"
                            f"{' ' if ins else ''}{ins}{_source(eqn, source)}")]
    for key, value in eqn.params.items():
        subs = _sub_irs(value)
        for i, sub in enumerate(subs):
            label = f"{key}[{i}]" if len(subs) > 1 else key
            blocks.append(_folded(label, as_ir(sub), namer, indent + 4))
    return blocks


def _folded(label: str, ir: IR, namer: Namer, indent: int) -> str:
    n = len(ir.eqns)
    summary = f"{' ' * indent}{label}: {n} equation{'s' if n != 1 else ''}"
    state = " open" if n <= OPEN_UP_TO else ""
    body = "".join(_ir_blocks(ir, namer, indent, source=False))
    return f"<details{state}><summary>{html.escape(summary)}</summary>{body}</details>"


def _ir_blocks(ir: IR, namer: Namer, indent: int, source: bool) -> list:
    blocks = [_header(ir, namer, indent)]
    widths = [sum(len(namer.decl(v)) + 1 for v in e.outputs) - 1 for e in ir.eqns]
    width = min(max(widths, default=0), MAX_ALIGN)
    for eqn in ir.eqns:
        blocks.extend(_eqn_blocks(eqn, namer, indent + 4, width, source))
    outs = " ".join(_atom(namer, v) for v in ir.outvars)
    blocks.append(_line(indent, f"  {_span('k', 'in')} ({outs}) }}"))
    return blocks


def _name_in_print_order(ir: IR, namer: Namer) -> None:
    """Give every variable the name ``str(ir)`` gives it (the padding needs names first)."""
    for v in (*ir.constvars, *ir.invars):
        namer(v)
    for eqn in ir.eqns:
        for v in eqn.outputs:
            namer(v)
        for value in eqn.params.values():
            for sub in _sub_irs(value):
                _name_in_print_order(as_ir(sub), namer)


def print_order_namer(ir) -> Namer:
    """A Namer that already holds the names ``str(ir)`` shows for ``ir``'s variables."""
    namer = Namer()
    _name_in_print_order(as_ir(ir), namer)
    return namer


def ir_to_html(ir, source: bool = True) -> str:
    """HTML of ``ir`` (an IR or ClosedIR); ``source`` appends each equation's file:line."""
    ir = as_ir(ir)
    namer = print_order_namer(ir)
    body = "".join(_ir_blocks(ir, namer, 0, source))
    return f'{_STYLE}<div class="pto-ir">{body}</div>'
