"""IR dataflow graphs as DOT text; draw() renders with Graphviz, or says what to install."""
import builtins
import importlib.util
import shutil

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import UnsupportedError

HAVE_GRAPHVIZ = importlib.util.find_spec("graphviz") is not None and shutil.which("dot")


def small_ir():
    return pto.make_ir(lambda x, y: pnp.exp(x) * y + 1.0)(np.ones(2, np.float32),
                                                         np.ones(2, np.float32))


def test_dot_has_a_node_per_equation_and_edges_for_values():
    ir = small_ir()
    dot = pto.tools.to_dot(ir)
    assert dot.startswith("digraph ir {") and dot.endswith("}")
    for i, eqn in enumerate(ir.eqns):
        assert f'e{i} [label="{eqn.prim.name}' in dot
    assert "e0 -> e1" in dot and "e2 -> out0" in dot and "1.0:f32[]" in dot


@pytest.mark.skipif(not HAVE_GRAPHVIZ, reason="needs the graphviz package and the dot program")
def test_draw_renders_an_svg_with_graphviz():
    svg = pto.tools.draw(small_ir()).pipe(format="svg").decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "exp" in svg


def test_draw_without_the_graphviz_package_says_what_to_install(monkeypatch):
    real_import = builtins.__import__

    def no_graphviz(name, *args, **kwargs):
        if name == "graphviz":
            raise ImportError("No module named 'graphviz'")
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_graphviz)
    with pytest.raises(UnsupportedError, match="Python package.*pip install graphviz"):
        pto.tools.draw(small_ir())


@pytest.mark.skipif(importlib.util.find_spec("graphviz") is None,
                    reason="the dot check runs after the graphviz package is found")
def test_draw_without_the_dot_program_says_what_to_install(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(UnsupportedError, match="`dot` program on PATH.*apt install graphviz"):
        pto.tools.draw(small_ir())
