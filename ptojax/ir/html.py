"""Rich display of IR in Jupyter: the printed text with primitive names, types and literals
highlighted; nested sub-IRs fold into <details> blocks."""
from __future__ import annotations

import html
import re

from ptojax.ir.printer import print_ir

_STYLE = ("<style>.pto-ir{font-family:monospace;font-size:12px;line-height:1.35;}"
          ".pto-ir .p{color:#0550ae;font-weight:600}.pto-ir .t{color:#8250df}"
          ".pto-ir .k{color:#cf222e}.pto-ir .c{color:#6e7781}"
          ".pto-ir details{margin-left:2em}</style>")

_TOKEN = re.compile(r"(?P<type>:(?:[a-z0-9]+)(?:<[A-Z0-9]+>)?\[[0-9,]*(?: valid=[0-9x]+)?\])"
                    r"|(?P<prim>(?<== )[a-z_0-9]+)"
                    r"|(?P<kw>\b(?:lambda|let|in)\b)"
                    r"|(?P<comment>#.*$)")


def _highlight_line(line: str) -> str:
    out, pos = [], 0
    for m in _TOKEN.finditer(line):
        out.append(html.escape(line[pos:m.start()]))
        cls = {"type": "t", "prim": "p", "kw": "k", "comment": "c"}[m.lastgroup]
        out.append(f'<span class="{cls}">{html.escape(m.group())}</span>')
        pos = m.end()
    out.append(html.escape(line[pos:]))
    return "".join(out)


def ir_to_html(ir, source: bool = True) -> str:
    lines = print_ir(ir, source=source).split("\n")
    parts, depth = [], 0
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("{ lambda") and line.startswith(" "):
            parts.append("<details open><summary>sub-IR</summary>")
            depth += 1
        parts.append(_highlight_line(line))
        if stripped.endswith("}") and stripped.startswith("in (") and depth and \
                line.startswith(" " * 4):
            parts.append("</details>")
            depth -= 1
    return _STYLE + '<pre class="pto-ir">' + "\n".join(parts) + "</pre>"
