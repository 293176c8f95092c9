"""pto_host.h implements every instruction the PTO C++ emitter may use (the emitter's list is
ptojax.lower.pto_ops.INSTRUCTIONS): adding one to the emitter without a host version fails
here, before any kernel fails to compile."""
import re

from ptojax.lower.host.compiler import INCLUDE_DIR
from ptojax.lower.pto_ops import INSTRUCTIONS

DEFINITION = (r"(?:PTO_INST|inline)\s+void\s+{name}\s*\(",      # a function definition
              r"PTO_HOST_[A-Z_]+\(\s*{name}\s*,")                # a definition macro


def _header_text():
    return "\n".join(p.read_text() for p in sorted(INCLUDE_DIR.glob("*.h")))


def test_every_emitted_instruction_is_defined_by_the_host_header():
    text = _header_text()
    missing = [name for name in INSTRUCTIONS
               if not any(re.search(d.format(name=name), text) for d in DEFINITION)]
    assert not missing, f"pto_host.h lacks {missing}"
