"""pto_host.h implements every instruction the PTO C++ emitter may use (the emitter's list is
ptojax.lower.pto_ops.INSTRUCTIONS), and every function the primitives' host facts call (the
fused build): adding one without a host version fails here, before any kernel fails to
compile."""
import re

import numpy as np

from ptojax.lower.host.compiler import INCLUDE_DIR
from ptojax.lower.pto_ops import INSTRUCTIONS
from ptojax.tile.ops import ELEMENTWISE_TILE_PRIMS

DEFINITION = (r"(?:PTO_INST|inline)\s+void\s+{name}\s*\(",      # a function definition
              r"PTO_HOST_[A-Z_]+\(\s*{name}\s*,")                # a definition macro


def _header_text():
    return "\n".join(p.read_text() for p in sorted(INCLUDE_DIR.glob("*.h")))


def test_every_emitted_instruction_is_defined_by_the_host_header():
    text = _header_text()
    missing = [name for name in INSTRUCTIONS
               if not any(re.search(d.format(name=name), text) for d in DEFINITION)]
    assert not missing, f"pto_host.h lacks {missing}"


# a parameter value for each primitive whose host fact is a function of its params
HOST_FACT_PARAMS = {"convert_element_type": dict(new_dtype=np.dtype(np.float16),
                                                 weak_type=False),
                    "integer_pow": dict(y=-2)}


def test_every_host_fact_calls_functions_the_headers_define():
    """Fused host kernels compute each elementwise tile op with its primitive's host fact: a
    function it names that no header defines fails here, before any kernel fails to
    compile."""
    text = _header_text()
    defined = set(re.findall(r"\binline\b[^;{}]*?\b([a-z_][a-z0-9_]*)\s*\(", text))
    for prim in ELEMENTWISE_TILE_PRIMS:
        fact = prim.fact("host")
        operands = [f"x{i}" for i in range(3)]
        if callable(fact):
            assert prim.name in HOST_FACT_PARAMS, f"give `{prim.name}` sample params here"
            expr = fact(*operands[:1], **HOST_FACT_PARAMS[prim.name])
        else:
            expr = fact.format(*operands)
        called = set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*(?:<[^<>()]*>)?\s*\(", expr))
        assert called <= defined, f"`{prim.name}`'s host fact {expr!r} calls " \
                                  f"{sorted(called - defined)}, which no host header defines"
