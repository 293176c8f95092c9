"""A TileConfig that overflows a buffer or breaks an alignment rule is rejected before any
code is generated, with an error naming the kernel, the op, the buffer, the bytes needed and
available, and a fix."""
import re

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import TileError

X = np.zeros((256, 2048), np.float32)


def _make(fn, config, *args):
    return pto.make_ir(pto.tile(fn, config))(*args)


def test_overflowing_ub_names_kernel_op_buffer_bytes_and_fix():
    with pytest.raises(TileError) as info:
        _make(pto.nn.softmax, pto.TileConfig(vec=(128, 2048)), X)
    msg = str(info.value)
    assert "kernel k0_" in msg and "op `tile_" in msg and "buffer UB" in msg
    assert "196,608 bytes" in msg and "needs" in msg
    assert "Fix: TileConfig(vec=(" in msg
    assert "test_tile_errors.py" in msg        # the user's line
    fix = msg.split("Fix: TileConfig(vec=(")[1].split(")")[0]
    rows, cols = (int(v) for v in fix.split(","))
    _make(pto.nn.softmax, pto.TileConfig(vec=(rows, cols)), X)    # the fix works


def test_misaligned_columns_are_rejected_with_the_rule():
    with pytest.raises(TileError, match=r"breaks alignment.*32-byte.*Fix: cols=16"):
        _make(lambda x: pnp.exp(x), pto.TileConfig(vec=(8, 12)), X)
    with pytest.raises(TileError, match=r"multiple of 16.*Fix: cols=32"):
        _make(lambda x: pnp.exp(x), pto.TileConfig(vec=(8, 24)), X.astype(np.float16))


def test_row_reductions_need_whole_rows():
    with pytest.raises(TileError, match=r"reduce_max.*whole rows of 2048.*cols >= 2048"):
        _make(pto.nn.softmax, pto.TileConfig(vec=(8, 512)), X)


def test_cube_tiles_must_follow_the_fractal():
    w = np.zeros((2048, 64), np.float32)
    with pytest.raises(TileError, match=r"16x16x16 cube fractal.*Fix: cube=\(32, 64, 16\)"):
        _make(lambda a, b: pnp.matmul(a, b), pto.TileConfig(cube=(24, 64, 16)), X, w)


def test_cube_tiles_must_fit_l1_and_l0():
    w = np.zeros((2048, 256), np.float32)
    with pytest.raises(TileError, match=r"buffer (L1|L0[ABC]) needs .* Fix: TileConfig\(cube="):
        _make(lambda a, b: pnp.matmul(a, b), pto.TileConfig(cube=(256, 256, 256)), X, w)


def test_malformed_configs():
    with pytest.raises(TileError, match="rows, cols"):
        pto.TileConfig(vec=(0, 8))
    with pytest.raises(TileError, match="m, k, n"):
        pto.TileConfig(cube=(16, 16))
    with pytest.raises(TileError, match="buffers"):
        pto.TileConfig(buffers=0)
    with pytest.raises(TileError, match="TileConfig"):
        pto.tile(pnp.exp, config=(8, 8))(X)


@pytest.mark.parametrize("field, value", [
    ("vec", (8.5, 64)), ("vec", "ab"), ("vec", 8), ("vec", (8, True)), ("vec", (8, None)),
    ("cube", (16.0, 16, 16)), ("cube", "abc"), ("buffers", 2.0), ("buffers", "2"),
    ("buffers", True),
])
def test_configs_of_the_wrong_type_are_tile_errors_naming_the_field(field, value):
    with pytest.raises(TileError, match=f"TileConfig.{field} must be .* got "
                                        f"{re.escape(repr(value))}"):
        pto.TileConfig(**{field: value})


def test_config_fields_are_normalized_to_plain_ints():
    config = pto.TileConfig(vec=[np.int64(8), 64], buffers=np.int32(3))
    assert config.vec == (8, 64) and type(config.vec[0]) is int and config.buffers == 3
