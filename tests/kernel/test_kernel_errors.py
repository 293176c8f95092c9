"""pto.kernel errors name the user's line and say how to fix it: blocks that overflow a
buffer (UB, L0A/L0B), index maps that leave the array, dtypes a unit lacks, operations tiles
cannot do. (Buffer spaces are chosen by the lowering — matmul operands always go through
L1 to L0A/L0B — so a tile in the wrong space cannot be written.)"""
import numpy as np
import pytest

import ptojax as pto
from kernels import matmul_bias_relu, rand, softmax_rows
from ptojax.errors import DtypeError, IndexingError, TileError, UnsupportedError

K = pto.kernel
S = pto.ShapeDtypeStruct
HERE = __file__


def _lower(fn, *args):
    return pto.jit(fn).lower(*args).tile_ir


def _line_of(text):
    return next(i for i, line in enumerate(open(HERE), 1) if text in line)


def test_a_block_overflowing_ub_names_the_buffer_and_the_line():
    with pytest.raises(TileError, match=r"buffer UB needs [\d,]+ bytes but ascend910b has "
                                        r"196,608.*smaller blocks") as e:
        _lower(softmax_rows(1024, 1024, 512), rand(1024, 1024))
    assert e.value.source.file.endswith("kernels.py")


def test_a_matmul_block_too_large_for_l0_names_l0():
    with pytest.raises(TileError, match="L0A/L0B.*at most 256 rows"):
        _lower(matmul_bias_relu(1024, 1024, 64, 1024, 1024), rand(1024, 64), rand(64, 1024),
               rand(1, 1024))


def test_an_index_map_out_of_bounds_names_the_index_map():
    @K(out_shape=S((64, 48), np.float32), grid=(2,),
       in_specs=[pto.BlockSpec((32, 48), lambda i: (i + 1, 0))],   # index map: one too far
       out_specs=pto.BlockSpec((32, 48), lambda i: (i, 0)))
    def shifted(x_ref, o_ref):
        o_ref[...] = x_ref[...]
    with pytest.raises(IndexingError, match=r"input 0 sends program \(1,\) out of bounds.*"
                                            r"Fix: return block indices in \[0, 2\)") as e:
        shifted(rand(64, 48))
    assert e.value.source.line == _line_of("# index map: one too far")


def test_a_dtype_the_tiles_lack_names_the_op_line():
    @K(out_shape=S((32, 32), np.float64), grid=(1,))
    def double(a_ref, o_ref):
        o_ref[...] = a_ref[...] * 2           # float64 tiles
    with pytest.raises(DtypeError, match="f64 values.*astype") as e, pto.enable_x64(True):
        _lower(double, np.ones((32, 32), np.float64))   # float64 exists in x64 mode only
    assert e.value.source.line == _line_of("# float64 tiles")


def test_a_matmul_dtype_the_cube_lacks():
    @K(out_shape=S((32, 32), np.int32), grid=(1,))
    def int_matmul(a_ref, b_ref, o_ref):
        o_ref[...] = K.dot(a_ref[...], b_ref[...], preferred_element_type=np.int32)
    ones = np.ones((32, 32), np.int32)
    with pytest.raises(DtypeError, match="cube multiplies"):
        _lower(int_matmul, ones, ones)


def test_an_operation_tiles_cannot_do_says_what_they_can():
    @K(out_shape=S((1, 32), np.float32), grid=(1,))
    def column_max(a_ref, o_ref):
        o_ref[...] = a_ref[...].max(axis=0, keepdims=True)
    with pytest.raises(UnsupportedError, match="reduce 2-d tiles over their last axis"):
        _lower(column_max, rand(32, 32))


def test_closing_over_an_array_asks_for_an_input():
    w = rand(32, 32)

    @pto.jit
    def f(x):
        @K(out_shape=S((32, 32), np.float32), grid=(1,))
        def closes(x_ref, o_ref):
            o_ref[...] = x_ref[...] * (x * 2)
        return closes(x)
    with pytest.raises(UnsupportedError, match="pass it as an input"):
        f(w)
