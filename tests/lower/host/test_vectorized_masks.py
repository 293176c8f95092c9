"""Masks in fused host kernels vectorize: loops that load a bool or convert a bool to a number
were left scalar by GCC 12 (a ReLU gradient's kernel ran 20x slower than numpy). Checked with
GCC's own vectorizer report, on the flags kernels are built with."""
import numpy as np
import pytest

import ptojax as pto
from host_cases import vectorized_lines
from ptojax.lower.host.compiler import find_compiler

TYPES = ("bool", "int8_t", "int32_t", "float", "half", "bfloat16_t")


def _loop(name, src, dst, body):
    return (f"void {name}(const {src}* __restrict in0, {dst}* __restrict out0, int n) {{\n"
            f"  PTO_HOST_IVDEP\n  for (int j = 0; j < n; ++j) {{ {body} }}\n}}\n")


def _unvectorized(tmp_path, loops):
    """The names of the functions in ``loops`` whose loop GCC did not vectorize."""
    compiler = find_compiler()
    if "g++" not in compiler.identity.lower() and "gcc" not in compiler.identity.lower():
        pytest.skip("the vectorizer report read here is GCC's")
    source = tmp_path / "masks.cpp"
    names = [name for name, _ in loops]
    source.write_text('#include "pto_host.h"\n#include "pto_host_fused.h"\n'
                      "using namespace pto;\nusing namespace pto::host;\n"
                      + "".join(code for _, code in loops))
    vectorized = vectorized_lines(compiler, source, without=("-fopenmp",))
    lines = source.read_text().splitlines()
    return [name for name in names
            if not any(f"void {name}(" in lines[n - 3] for n in vectorized if n >= 3)]


def test_loops_loading_a_mask_or_converting_one_vectorize(tmp_path):
    loops = [(f"mask_to_{t}", _loop(f"mask_to_{t}", "bool", t,
                                     f"out0[j] = narrow<{t}>(convert_to<{t}>(load_bool(in0[j])));"))
             for t in TYPES if t != "bool"]
    loops.append(("compare_to_float", _loop(
        "compare_to_float", "float", "float",
        "const bool m = widen(in0[j]) > 0.0f; out0[j] = op_div(convert_to<float>(m), "
        "op_add(convert_to<float>(!m), 1.0f));")))
    assert _unvectorized(tmp_path, loops) == []


def test_fused_kernels_read_masks_as_bytes():
    x = np.linspace(-2, 2, 4096, dtype=np.float32).reshape(64, 64)
    m = x > 0.5

    def f(a, mask):
        return pto.numpy.where(mask, a * 2.0, a) + 1.0

    source = pto.jit(f).lower(x, m, target=pto.targets.host_jit).as_text("fused-cpp")
    assert "load_bool(" in source
    np.testing.assert_array_equal(np.asarray(pto.jit(f)(x, m)), np.where(m, x * 2, x) + 1)
