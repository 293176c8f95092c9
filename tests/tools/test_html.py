"""The Jupyter view of IR: highlighted, aligned, sub-IRs folded, names as in str(ir)."""
import html
import re

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.ir.core import ir_to_html
from ptojax.ir.pretty import OPEN_UP_TO

F32 = np.float32


def lines_of(markup: str) -> list:
    """The visible text of each line of the view (summaries dropped)."""
    body = markup.split("</style>", 1)[1]
    body = re.sub(r"<summary>.*?</summary>", "", body)
    return [html.unescape(re.sub(r"<[^>]+>", "", line))
            for line in re.findall(r"<div>(.*?)</div>", body)]


def scan_ir():
    def f(xs, w):
        def body(c, x):
            return pnp.tanh(c @ w + x), c.sum()
        return pto.lax.scan(body, xs[0], xs)
    return pto.make_ir(f)(np.ones((4, 3), F32), np.ones((3, 3), F32))


def test_equals_signs_of_a_block_line_up():
    ir = pto.make_ir(lambda x, y: (pnp.exp(x) @ y).sum())(np.ones((2, 3), F32),
                                                        np.ones((3, 4), F32))
    eqn_lines = lines_of(ir._repr_html_())[1:-1]
    assert len(eqn_lines) == len(ir.eqns)
    assert len({line.index(" = ") for line in eqn_lines}) == 1


def test_names_and_types_match_the_text_form():
    ir = scan_ir()
    declared = re.findall(r"\b[a-z]+:f32\[[0-9,]*\]", str(ir))
    shown = re.findall(r"\b[a-z]+:f32\[[0-9,]*\]", "\n".join(lines_of(ir._repr_html_())))
    assert shown == declared


def test_sub_irs_fold_into_details_blocks():
    ir = scan_ir()
    markup = ir._repr_html_()
    body = ir.eqns[-1].params["body"]
    assert markup.count("<details") == 1
    assert f"body: {len(body.eqns)} equations</summary>" in markup
    assert "body=&lt;1 sub-IR below&gt;" in markup
    assert ("<details open>" in markup) == (len(body.eqns) <= OPEN_UP_TO)


def test_large_sub_irs_start_folded():
    x = np.ones((64, 128), F32)
    ir = pto.make_ir(pto.tile(lambda x: pto.nn.softmax(x, axis=-1)))(x)
    kernel = next(e for e in ir.eqns if e.prim.name == "tile_kernel")
    bodies = kernel.params["bodies"]
    markup = ir._repr_html_()
    assert markup.count("<details>") == sum(len(b.eqns) > OPEN_UP_TO for b in bodies) > 0


def test_tokens_are_highlighted_and_escaped():
    def f(x):
        return pnp.where(x < 0.5, pnp.exp(x), 2.0)
    markup = ir_to_html(pto.make_ir(f)(np.ones(3, F32)))
    assert '<span class="p">exp</span>' in markup
    assert '<span class="t">:f32[3]</span>' in markup
    assert '<span class="l">0.5:f32[]</span>' in markup
    assert '<span class="k">lambda</span>' in markup
    assert re.search(r'<span class="c"># test_html\.py:\d+</span>', markup)
    assert "<" not in re.sub(r"<[^>]+>", "", markup.split("</style>", 1)[1])


def test_kernel_source_view_highlights_instructions_and_comments():
    lowered = pto.jit(lambda x: pto.nn.softmax(x, axis=-1)).lower(np.ones((64, 128), F32))
    cpp = lowered.as_text("pto-cpp")._repr_html_()
    assert '<span class="o">TROWMAX</span>' in cpp and '<span class="k">__global__</span>' in cpp
    assert '<span class="c">/* vector core */</span>' in cpp
    assert "max-height" in cpp  # long kernels scroll instead of flooding the notebook
    pto_as = lowered.as_text("pto")._repr_html_()
    assert '<span class="o">pto.trowmax</span>' in pto_as
