"""Structural checks on the emitted PTO-AS and PTO C++ of many programs (see pto_checks),
and checks that the checks catch broken text."""
import re

import pytest

import ptojax as pto
from lower_cases import STRUCTURE, lowered
from pto_checks import (all_checks, check_balanced, check_flags, check_no_live_overlap,
                        check_tiles_fit)

TARGET = pto.targets.ascend910b


@pytest.fixture(scope="module")
def texts():
    out = {}
    for name in STRUCTURE:
        lo = lowered(name)
        out[name] = (str(lo.as_text("pto-cpp")), str(lo.as_text("pto")))
    return out


@pytest.mark.parametrize("name", sorted(STRUCTURE))
def test_cpp_structure(texts, name):
    all_checks(texts[name][0], "cpp", TARGET)


@pytest.mark.parametrize("name", sorted(STRUCTURE))
def test_pto_as_structure(texts, name):
    all_checks(texts[name][1], "pto", TARGET)


def test_cpp_has_one_global_entry_per_kernel_and_a_launcher(texts):
    cpp = texts["matmul_bias_gelu"][0]
    assert cpp.count("__global__ AICORE void") == 1
    assert "get_block_idx()" in cpp and "block_num" in cpp
    assert re.search(r"\w+<<<\d+, nullptr, stream>>>\(", cpp)
    assert "#if defined(__DAV_CUBE__)" in cpp and "#if defined(__DAV_VEC__)" in cpp
    assert "TMATMUL_ACC(" in texts["matmul_ragged_k"][0]
    for needle in ("TLOAD(", "TEXTRACT(", "TMATMUL(", "TSTORE(",
                   "set_flag(PIPE_MTE2, PIPE_MTE1", "set_flag(PIPE_M, PIPE_FIX",
                   "wait_flag(PIPE_MTE2, PIPE_V", "TCOLEXPANDADD(", "TASSIGN("):
        assert needle in cpp, needle


def test_pto_as_uses_the_pto_dialect(texts):
    pto_text = texts["softmax"][1]
    for needle in ("pto.alloc_tile", "!pto.tile_buf<loc=vec", "pto.tload ins(",
                   "pto.trowmax", "pto.trowexpandsub", "pto.texp", "pto.trowsum",
                   "pto.tstore ins(", "scf.for", "pto.make_tensor_view",
                   "pto.partition_view", "pto.set_flag[<PIPE_MTE2>, <PIPE_V>"):
        assert needle in pto_text, needle
    mm = texts["matmul_bias_gelu"][1]
    assert "pto.tmatmul ins(" in mm and "pto.section.cube" in mm and "loc=left" in mm


def test_batched_matmul_offsets_operand_windows_by_the_batch_element(texts):
    cpp, pto_text = texts["batched_matmul_transposed"]
    # M = 512 rows per batch element, several row tiles each: b = r0 / M, row r0 % M
    assert re.search(r"const int32_t s\d+ = s\d+ / 512;", cpp)
    assert re.search(r"const int32_t s\d+ = s\d+ % 512;", cpp)
    assert re.search(r"arith\.divui %s\d+_\d+, %c512 : index", pto_text)
    assert re.search(r"arith\.remui %s\d+_\d+, %c512 : index", pto_text)
    # both operands are read transposed from views of all batch elements stacked
    assert "Stride<1, 1, 1, 1, 512>, Layout::DN>" in cpp        # lhs (3*100, 512)
    assert "Stride<1, 1, 1, 1, 100>, Layout::DN>" in cpp        # rhs (3*72, 100)
    assert cpp.count("TMATMUL_ACC(") >= 1


def test_text_says_it_is_untested_on_hardware(texts):
    for cpp, pto_text in texts.values():
        assert "UNTESTED ON ASCEND HARDWARE" in cpp and "UNTESTED ON ASCEND HARDWARE" in pto_text


# --- the checks catch broken text ------------------------------------------------------------
def test_flag_check_catches_a_missing_wait(texts):
    cpp = texts["softmax"][0]
    broken = cpp.replace("wait_flag(PIPE_MTE2, PIPE_V, ev);", "", 1)
    with pytest.raises(AssertionError, match="unbalanced|never waited"):
        check_flags(broken, "cpp")
    pto_text = texts["softmax"][1]
    broken = pto_text.replace("pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]", "", 1)
    with pytest.raises(AssertionError):
        check_flags(broken, "pto")


def test_fit_check_catches_a_tile_past_its_buffer(texts):
    cpp = texts["layer_norm"][0]
    broken = re.sub(r"TASSIGN\(t0, 0x0u", "TASSIGN(t0, 0x2f000u", cpp, count=1)
    with pytest.raises(AssertionError, match="capacity"):
        check_tiles_fit(broken, "cpp", TARGET)


def test_overlap_check_catches_live_tiles_sharing_memory(texts):
    cpp = texts["layer_norm"][0]
    target_line = re.search(r"TASSIGN\((t1\d), 0x([0-9a-f]+)u", cpp)
    name = target_line.group(1)
    broken = re.sub(rf"TASSIGN\({name}, 0x[0-9a-f]+u[^;]*;", f"TASSIGN({name}, 0x0u);", cpp)
    with pytest.raises(AssertionError, match="share memory"):
        check_no_live_overlap(broken)


def test_balance_check_catches_a_missing_brace(texts):
    with pytest.raises(AssertionError):
        check_balanced(texts["add"][0].replace("}", "", 1))
