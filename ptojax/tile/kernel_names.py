"""A program's kernel names: each is the symbol of the kernel's function in the emitted C++
(the PTO and fused host builds) and PTO-AS, so it is made a readable C++ identifier that no
other kernel of the program shares -- a name of any text (``pto.kernel(name=...)``, a
function named ``double``) keeps its letters, digits and underscores, other characters become
underscores, and a C++ keyword or a name the emitted code or its headers declare gets a
trailing underscore. A tiled kernel's name (``k0_add``) is one too."""
from __future__ import annotations

import functools
import re
from pathlib import Path

CPP_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
extern false float for friend goto if inline int long mutable namespace new noexcept not
not_eq nullptr operator or or_eq private protected public register reinterpret_cast requires
return short signed sizeof static static_assert static_cast struct switch template this
thread_local throw true try typedef typeid typename union unsigned using virtual void volatile
wchar_t while xor xor_eq final override import module
""".split())
# names the emitted programs define or use unqualified besides their headers' (namespaces,
# the entry point, the C library the headers include)
EMITTED_NAMES = frozenset({"main", "std", "ptojax_fused", "exp", "log", "tanh", "sqrt",
                           "fabs", "abs", "memcpy", "malloc", "free", "printf", "size_t"})
HEADERS = Path(__file__).resolve().parents[1] / "lower" / "host" / "include"
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")
_DECLARED = (   # a function (after its return type), a type or namespace, a macro
    r"^[ \t]*(?:template\s*<[^>\n]*>\s*)?(?:[A-Za-z_][\w:<>,]*[\s*&]+)+([A-Za-z_]\w*)\s*\(",
    r"\b(?:struct|class|enum(?:\s+class)?|namespace|using|typedef\s+[\w:<> ]+)\s+"
    r"([A-Za-z_]\w*)",
    r"#\s*define\s+([A-Za-z_]\w*)")


@functools.lru_cache(maxsize=1)
def header_names() -> frozenset:
    """Names the host build's headers (the PTO API it models, its runtime and math helpers)
    declare: a kernel of such a name would hide or clash with them (``pto_host.h``'s
    ``Tile``, the fused build's ``convert``, ``exp_f32``)."""
    text = "\n".join(p.read_text() for p in sorted(HEADERS.glob("*.h")))
    text = re.sub(r"//[^\n]*", "", text)
    return frozenset(n for pattern in _DECLARED for n in re.findall(pattern, text, re.M))


def cpp_identifier(name: str) -> str:
    """``name`` as a C++ identifier: characters other than ASCII letters, digits and ``_``
    become ``_``; a leading digit (or nothing) gets a ``k`` before it; leading underscores
    and runs of them (reserved in C++) are one ``_`` after a letter; a keyword, a name the
    emitted code or its headers define, an upper-case name (a macro, a PTO instruction) or a
    ``ptojax`` name (the builds' own) gets ``_`` after it."""
    out = re.sub(r"_{2,}", "_", _NOT_IDENTIFIER.sub("_", name))
    if not out or not out[0].isalpha():
        out = "k" + (out if out.startswith("_") else "_" + out if out else "")
    if out in CPP_KEYWORDS or out in EMITTED_NAMES or out.isupper() or \
            out.startswith("ptojax") or out in header_names():
        out += "_"
    return out


def tiling_struct(name: str) -> str:
    """The C++ struct of a kernel's tiling arguments: ``my_kernel`` -> ``MyKernelTiling``."""
    return "".join(p[:1].upper() + p[1:] for p in name.split("_")) + "Tiling"


def _symbols(name: str) -> set:
    return {name, tiling_struct(name), "launch_" + name}


def kernel_name(name: str, kernels) -> str:
    """``name`` as a C++ identifier (``cpp_identifier``), with ``_2``, ``_3``, ... after it when
    a symbol of it (its function, tiling struct or launcher) is one of an earlier kernel's of
    the program (``kernels``: their tile_kernel equations)."""
    base = cpp_identifier(name)
    taken = set().union(*(_symbols(k.params["name"]) for k in kernels))
    n, out = 1, base
    while _symbols(out) & taken:
        n += 1
        out = f"{base}_{n}"
    return out
