"""pto.jit(f).lower(..., target=...): tile_ir, as_text('pto' / 'pto-cpp'), cost(), unfused()
for plain and pto.tile-d functions."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.lower.text import ProgramText
from ptojax.tile.kernel import tile_kernel_p

S = pto.ShapeDtypeStruct
X = S((64, 200), np.float32)


def test_untiled_functions_are_tiled_automatically():
    lo = pto.jit(pto.nn.softmax).lower(X)
    assert [e.prim for e in lo.tile_ir.ir.eqns] == [tile_kernel_p]
    assert lo.as_text("ir") == str(lo.ir)      # the traced IR is unchanged


def test_tiled_functions_keep_their_kernels_and_config():
    f = pto.tile(pto.nn.softmax, pto.TileConfig(vec=(16, 200)))
    lo = pto.jit(f).lower(X)
    (k,) = [e for e in lo.tile_ir.ir.eqns if e.prim is tile_kernel_p]
    assert k.params["grid"].tile == (16, 200)


def test_as_text_returns_highlighted_program_text():
    lo = pto.jit(pto.nn.softmax).lower(X)
    for dialect in ("pto", "pto-cpp"):
        text = lo.as_text(dialect)
        assert isinstance(text, ProgramText) and isinstance(text, str)
        html = text._repr_html_()
        assert html.startswith("<style>") and "<span" in html
    with pytest.raises(ValueError, match="pto-cpp"):
        lo.as_text("llvm")


def test_target_selects_the_plan():
    npu = pto.jit(pto.nn.softmax).lower(S((4096, 4096), np.float32))
    cpu = pto.jit(pto.nn.softmax).lower(S((4096, 4096), np.float32),
                                        target=pto.targets.host_cpu)
    assert "target ascend910b" in npu.as_text("pto-cpp")
    assert "target host_cpu" in cpu.as_text("pto-cpp")
    assert cpu.cost().target is pto.targets.host_cpu


def test_target_mismatch_with_a_tiled_function_is_an_error():
    f = pto.tile(pto.nn.softmax, target=pto.targets.ascend910b)
    lo = pto.jit(f).lower(X, target=pto.targets.host_cpu)
    with pytest.raises(pto.errors.TileError, match="tiled for ascend910b"):
        lo.tile_ir


def test_unfused_lists_tensor_ops_with_reasons():
    f = lambda x: pnp.tanh(pnp.sort(pnp.exp(x), axis=-1))
    lo = pto.jit(f).lower(X)
    (u,) = lo.unfused()
    assert u.eqn.prim.name == "sort" and "sort" in u.reason
    assert "sort" in str(lo.unfused())
    lo_tiled = pto.jit(pto.tile(f)).lower(X)
    (u,) = lo_tiled.unfused()
    assert u.eqn.prim.name == "sort"
    assert str(pto.jit(pto.nn.softmax).lower(X).unfused()) == "every equation is in a tile kernel"


def test_targets_are_plain_data_with_sources():
    t = pto.targets.ascend910b
    assert (t.cube_cores, t.vector_cores) == (24, 48)
    assert t.capacity("UB") == 192 * 1024 and t.capacity("L1") == 512 * 1024
    assert t.capacity("L0A") == t.capacity("L0B") == 64 * 1024
    assert t.capacity("L0C") == 128 * 1024 and t.row_alignment == 32
    assert t.cube_fractal == (16, 16, 16) and t.clock_hz == 1.8e9
    source = open(pto.targets.__file__).read()
    assert source.count("estimate") >= 10 and "[cann-hw]" in source
    assert pto.targets.get_target("host_cpu") is pto.targets.host_cpu
