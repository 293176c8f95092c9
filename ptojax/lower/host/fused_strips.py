"""Strip-mined passes: an element chain of dependent vector-math calls as one loop per call.

A fused pass computes its whole element chain per column in one vectorized loop. When the chain
calls the header's vector-math functions (``pto_host_vmath.h``: exp, log1p, tanh, ...) one
after another -- ``softplus`` is ``log1p(exp(-|x|))``, and the gradient of a Bernoulli
log-likelihood takes ``exp`` of that -- one iteration is a dependent chain of a hundred or more
vector operations, longer than the out-of-order window of a core: the loop runs at the chain's
latency, not at the core's throughput. Measured on the VAE's 32x784 likelihood gradient
(exp, log1p, exp; AMD Zen 3, one thread): 128 us as one loop, 56 us strip-mined; the three
calls alone take 0.4, 0.85 and 0.4 ns an element.

So such a pass is cut into *segments*, each holding at most one vector-math call of any chain,
run as one loop each over a strip of ``kStripColumns`` columns (``pto_host_fused.h``: 256, so
the strip buffers stay in L1): a value one segment computes and a later one reads goes through
a strip buffer. Each element is computed by the same expressions in the same order, so the
results are the same bits. Independent calls (``tanh(2x+1) * exp(-x*x)``) overlap within one
iteration already and stay one loop (cut by hand, the 4M-element chain took 7.6 ms on one
thread instead of 7.2).
"""
from __future__ import annotations

import re
from typing import NamedTuple

# the header's vector-math functions: polynomial chains of dependent operations
VECTOR_MATH = re.compile(r"\b(exp|expm1|log|log1p|tanh|logistic|erf|erfc|sin|cos|lgamma)_f32\(")


class Statement(NamedTuple):
    """One C++ statement of a pass's element body: ``name`` the value it defines (None for a
    store or an accumulation), ``ctype`` that value's C++ type, ``uses`` the names of the
    body's values it reads, ``reduces`` whether it adds into a row reduction's partial results
    (lane ``l``)."""
    text: str
    name: str | None
    ctype: str | None
    uses: frozenset
    reduces: bool = False

    @property
    def calls_vector_math(self) -> bool:
        return VECTOR_MATH.search(self.text) is not None


def segments(body: list) -> list | None:
    """Each statement's segment, or None when the body needs only one loop (no chain of two
    vector-math calls). A vector-math call runs in the segment after the calls it depends on;
    any other statement runs as late as its first reader allows (a store in the last segment),
    but not before its operands, and never after the chain's last call; row reductions in the
    last segment, so that their partial results add the elements in the order of one loop."""
    depth = {}          # value name -> vector-math calls on its longest chain, itself included
    earliest = []
    for s in body:
        before = max((depth[u] for u in s.uses if u in depth), default=0)
        earliest.append(before)
        if s.name is not None:
            depth[s.name] = before + s.calls_vector_math
    calls = max(depth.values(), default=0)
    if calls < 2:
        return None
    last = calls - 1
    placed = [last if s.reduces else min(e, last) for s, e in zip(body, earliest)]
    readers = {}        # value name -> the segments reading it
    for i in reversed(range(len(body))):
        s = body[i]
        if not s.calls_vector_math and s.name is not None:
            first_read = min(readers.get(s.name, [last]))
            placed[i] = max(placed[i], first_read)
        for u in s.uses:
            readers.setdefault(u, []).append(placed[i])
    return placed


def strip_mined(body: list, placed: list, indent: str) -> list:
    """The C++ lines of the pass's element loop over ``cols`` as strips of segment loops (the
    last one in lane groups when the pass reduces: ``lane_loops``)."""
    home = {s.name: seg for s, seg in zip(body, placed) if s.name is not None}
    ctype = {s.name: s.ctype for s in body if s.name is not None}
    carried = {u: ctype[u] for s, seg in zip(body, placed) for u in s.uses
               if home.get(u, seg) < seg}   # values read in a later segment: their C++ type
    lines = [f"{_stored(t)} strip_{name}[kStripColumns];" for name, t in carried.items()]
    lines += ["for (int s0 = 0; s0 < cols; s0 += kStripColumns) {",
              f"{indent}const int strip = cols - s0 < kStripColumns ? cols - s0 : kStripColumns;"]
    last = max(placed)
    for seg in range(last + 1):
        reads = sorted({u for s, p in zip(body, placed) if p == seg for u in s.uses
                        if u in carried and home[u] < seg})
        inner = [f"const {carried[u]} {u} = {_read(u, carried[u])};" for u in reads]
        for s, p in zip(body, placed):
            if p == seg:
                inner.append(s.text)
                if s.name in carried:
                    inner.append(f"strip_{s.name}[js] = {s.name};")
        if seg == last and any(s.reduces for s in body):
            loops = lane_loops("s0", "s0 + strip", "strip", "const int j = j0 + l, js = j - s0;",
                               inner, indent)
        else:
            loops = ["PTO_HOST_IVDEP", "for (int js = 0; js < strip; ++js) {",
                     f"{indent}const int j = s0 + js;", *(indent + t for t in inner), "}"]
        lines += [indent + line for line in loops]
    lines.append("}")
    return lines


def lane_loops(start: str, end: str, span: str, first: str, inner: list, indent: str) -> list:
    """The element loop of a reducing pass over columns ``start`` to ``end`` (``span`` of
    them; ``start`` a multiple of kReduceLanes): lane groups of kReduceLanes columns, element
    ``l`` of each adding into partial result ``l``, then the last ``span % kReduceLanes``
    columns into partial results 0, 1, ... -- the order of the PTO build's TROWSUM."""
    body = [first, *inner]
    return [f"for (int j0 = {start}; j0 + kReduceLanes <= {end}; j0 += kReduceLanes) {{",
            f"{indent}PTO_HOST_IVDEP",
            f"{indent}for (int l = 0; l < kReduceLanes; ++l) {{",
            *(indent * 2 + t for t in body), f"{indent}}}", "}",
            f"for (int l = 0, j0 = {end} - {span} % kReduceLanes; j0 + l < {end}; ++l) {{",
            *(indent + t for t in body), "}"]


def _stored(ctype: str) -> str:
    """The element type of a strip buffer (a bool as its byte: GCC 12 does not vectorize a
    loop that loads a bool)."""
    return "alignas(64) " + ("uint8_t" if ctype == "bool" else ctype)


def _read(name: str, ctype: str) -> str:
    return f"load_bool(strip_{name}[js])" if ctype == "bool" else f"strip_{name}[js]"
