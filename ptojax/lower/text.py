"""Generated program text that is a ``str`` and shows syntax-highlighted in Jupyter."""
from __future__ import annotations

import html
import re

_STYLE = ("<style>.pto-src{font-family:monospace;font-size:12px;line-height:1.35;"
          "max-height:48em;overflow:auto}"
          ".pto-src .k{color:#cf222e}.pto-src .o{color:#0550ae;font-weight:600}"
          ".pto-src .t{color:#8250df}.pto-src .c{color:#6e7781}.pto-src .n{color:#0a3069}"
          "</style>")

_RULES = {
    "pto": re.compile(r"(?P<c>//.*$)|(?P<t>!pto\.[a-z_]+<[^>]*>|\b(?:index|i1|i8|i16|i32|i64|"
                      r"f16|bf16|f32)\b)|(?P<o>\bpto\.[a-z_.]+|\barith\.[a-z_]+|\bscf\.[a-z]+"
                      r"|\bfunc\.func\b)|(?P<k>\b(?:module|return|ins|outs|to|step|attributes"
                      r")\b)|(?P<n>%[A-Za-z0-9_]+)"),
    "pto-cpp": re.compile(r"(?P<c>//.*$|/\*.*?\*/|^#.*$)|(?P<k>\b(?:const|for|if|else|void|"
                          r"struct|return|using|namespace|static_cast|reinterpret_cast|continue|"
                          r"__global__|__gm__|AICORE|constexpr)\b)|(?P<t>\b(?:Tile|TileLeft|"
                          r"TileRight|TileAcc|GlobalTensor|Shape|Stride|int32_t|uint32_t|uint8_t|"
                          r"int8_t|int16_t|float|half|bfloat16_t|event_t)\b)|(?P<o>\b(?:T[A-Z_]+|"
                          r"set_flag|wait_flag|pipe_barrier|ffts_cross_core_sync|wait_flag_dev"
                          r")(?=\s*[(<]))"),
}


class ProgramText(str):
    """A str of generated code (``dialect`` is 'pto' or 'pto-cpp') with an HTML view."""

    def __new__(cls, text: str, dialect: str):
        obj = super().__new__(cls, text)
        obj.dialect = dialect
        return obj

    def _repr_html_(self):
        rule = _RULES.get(self.dialect)
        lines = []
        for line in str(self).split("\n"):
            if rule is None:
                lines.append(html.escape(line))
                continue
            out, pos = [], 0
            for m in rule.finditer(line):
                out.append(html.escape(line[pos:m.start()]))
                out.append(f'<span class="{m.lastgroup}">{html.escape(m.group())}</span>')
                pos = m.end()
            out.append(html.escape(line[pos:]))
            lines.append("".join(out))
        return _STYLE + '<pre class="pto-src">' + "\n".join(lines) + "</pre>"
