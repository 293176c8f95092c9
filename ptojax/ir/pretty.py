"""The two renderings of an IR's display tree (built by ``ir/core.py``): jaxpr-style text and
the highlighted HTML that Jupyter shows.

Text::

    { lambda ; a:f32[4,5] b:f32[5,3]. let
        c:f32[4,3] = dot_general[dimension_numbers=(((1,), (0,)), ((), ()))] a b
      in (c) }

HTML: the same with primitive names, types, literals and source lines highlighted, the ``=``
of each block's equations aligned, and every sub-IR (loop and branch bodies, tile-kernel
bodies, custom rule bodies) folded into its own ``<details>`` block under its equation.
"""
from __future__ import annotations

import html
from typing import NamedTuple

# sub-IRs with at most this many equations start unfolded
OPEN_UP_TO = 8
# the output column is padded to the widest declaration of its block, up to this many chars
MAX_ALIGN = 40


class Decl(NamedTuple):
    name: str
    type: str


class Atom(NamedTuple):
    text: str
    literal: bool


class EqnLine(NamedTuple):
    outs: list                  # Decl
    prim: str
    params: list                # (key, str | Block | tuple of Blocks)
    ins: list                   # Atom
    source: object = None       # "file:line", or None


class Block(NamedTuple):
    consts: list                # Decl
    invars: list                # Decl
    eqns: list                  # EqnLine
    outs: list                  # Atom


def _sub_blocks(value) -> list:
    if isinstance(value, Block):
        return [value]
    if isinstance(value, tuple):
        return [v for v in value if isinstance(v, Block)]
    return []


# text ------------------------------------------------------------------------------------------
def _decls(decls) -> str:
    return " ".join(f"{d.name}:{d.type}" for d in decls)


def _param_text(value, indent: int) -> str:
    if isinstance(value, Block):
        return "\n" + to_text(value, indent + 4) + "\n" + " " * (indent + 2)
    if isinstance(value, tuple):
        return "(" + "".join(_param_text(v, indent) for v in value) + ")"
    return value


def eqn_text(e: EqnLine, indent: int = 0, source: bool = False) -> str:
    params = ""
    if e.params:
        params = "[" + " ".join(f"{k}={_param_text(v, indent)}" for k, v in e.params) + "]"
    ins = " ".join(a.text for a in e.ins)
    lhs = f"{_decls(e.outs)} = " if e.outs else ""   # no results: run for its effect
    line = f"{lhs}{e.prim}{params} {ins}".rstrip()
    if source and e.source is not None:
        line += f"    # {e.source}"
    return line


def to_text(block: Block, indent: int = 0, source: bool = False) -> str:
    pad = " " * indent
    consts = _decls(block.consts)
    head = f"{pad}{{ lambda {consts}{' ' if consts else ''}; {_decls(block.invars)}. let"
    body = [pad + "    " + eqn_text(e, indent + 4, source) for e in block.eqns]
    outs = " ".join(a.text for a in block.outs)
    return "\n".join([head, *body, f"{pad}  in ({outs}) }}"])


# html ------------------------------------------------------------------------------------------
STYLE = ("<style>.pto-ir{font-family:monospace;font-size:12px;line-height:1.4;"
         "white-space:pre}.pto-ir .p{color:#0550ae;font-weight:600}"
         ".pto-ir .t{color:#8250df}.pto-ir .l{color:#953800}.pto-ir .k{color:#cf222e}"
         ".pto-ir .a{color:#57606a}.pto-ir .c{color:#6e7781;font-style:italic}"
         ".pto-ir summary{cursor:pointer;color:#57606a}</style>")


def _span(cls: str, text: str) -> str:
    return f'<span class="{cls}">{html.escape(text)}</span>'


def _decl_html(d: Decl) -> str:
    return html.escape(d.name) + _span("t", f":{d.type}")


def _atom_html(a: Atom) -> str:
    return _span("l", a.text) if a.literal else html.escape(a.text)


def _line(indent: int, content: str) -> str:
    return f'<div>{" " * indent}{content}</div>'


def _params_html(e: EqnLine) -> str:
    shown = []
    for key, value in e.params:
        count = len(_sub_blocks(value))
        text = f"<{count} sub-IR{'s' if count > 1 else ''} below>" if count else value
        shown.append(f"{key}={text}")
    return _span("a", "[" + " ".join(shown) + "]") if shown else ""


def _eqn_html(e: EqnLine, indent: int, width: int, source: bool) -> list:
    outs = " ".join(_decl_html(d) for d in e.outs)
    used = sum(len(d.name) + 1 + len(d.type) for d in e.outs) + len(e.outs) - 1
    pad = " " * max(0, width - used)
    ins = " ".join(_atom_html(a) for a in e.ins)
    where = "    " + _span("c", f"# {e.source}") if source and e.source is not None else ""
    lhs = f"{outs}{pad} = " if e.outs else " " * (width + 3)   # no results: an effect
    blocks = [_line(indent, f"{lhs}{_span('p', e.prim)}{_params_html(e)}"
                            f"{' ' if ins else ''}{ins}{where}")]
    for key, value in e.params:
        subs = _sub_blocks(value)
        for i, sub in enumerate(subs):
            label = f"{key}[{i}]" if len(subs) > 1 else key
            blocks.append(_folded(label, sub, indent + 4))
    return blocks


def _folded(label: str, block: Block, indent: int) -> str:
    n = len(block.eqns)
    summary = f"{' ' * indent}{label}: {n} equation{'s' if n != 1 else ''}"
    state = " open" if n <= OPEN_UP_TO else ""
    body = "".join(_block_html(block, indent, source=False))
    return f"<details{state}><summary>{html.escape(summary)}</summary>{body}</details>"


def _block_html(block: Block, indent: int, source: bool) -> list:
    consts = " ".join(_decl_html(d) for d in block.consts)
    ins = " ".join(_decl_html(d) for d in block.invars)
    lines = [_line(indent, f"{{ {_span('k', 'lambda')} {consts}{' ' if consts else ''}; "
                           f"{ins}. {_span('k', 'let')}")]
    widths = [sum(len(d.name) + 1 + len(d.type) + 1 for d in e.outs) - 1 for e in block.eqns]
    width = min(max(widths, default=0), MAX_ALIGN)
    for e in block.eqns:
        lines.extend(_eqn_html(e, indent + 4, width, source))
    outs = " ".join(_atom_html(a) for a in block.outs)
    lines.append(_line(indent, f"  {_span('k', 'in')} ({outs}) }}"))
    return lines


def to_html(block: Block, source: bool = True) -> str:
    body = "".join(_block_html(block, 0, source))
    return f'{STYLE}<div class="pto-ir">{body}</div>'
