"""IR dataflow graphs as DOT text; draw() explains what to install when graphviz is absent."""
import importlib.util

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import UnsupportedError


def test_dot_has_a_node_per_equation_and_edges_for_values():
    ir = pto.make_ir(lambda x, y: pnp.exp(x) * y + 1.0)(np.ones(2, np.float32),
                                                       np.ones(2, np.float32))
    dot = pto.tools.to_dot(ir)
    assert dot.startswith("digraph ir {") and dot.endswith("}")
    for i, eqn in enumerate(ir.eqns):
        assert f'e{i} [label="{eqn.prim.name}' in dot
    assert "e0 -> e1" in dot and "e2 -> out0" in dot and "1.0:f32[]" in dot


@pytest.mark.skipif(importlib.util.find_spec("graphviz") is not None,
                    reason="graphviz is installed here; the missing-package message is moot")
def test_draw_without_graphviz_says_what_to_install():
    ir = pto.make_ir(lambda x: x + 1.0)(np.ones(2, np.float32))
    with pytest.raises(UnsupportedError, match="pip install graphviz"):
        pto.tools.draw(ir)
