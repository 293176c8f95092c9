"""shift_right_logical against JAX: shift amounts in and out of range (negative, the bit
width and beyond give 0), as arrays and as the scalar constants random bits shift by."""
import numpy as np
import pytest

import ptojax as pto
from ptojax import lax


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint32])
def test_shift_right_logical_matches_jax(jax, dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, 77, info.max, info.min, info.min + 3], dtype)
    bits = np.dtype(dtype).itemsize * 8
    amounts = [y for y in range(-2, bits + 3) if y >= 0 or info.min < 0]
    for y in amounts:
        y = np.asarray(y, dtype)
        np.testing.assert_array_equal(np.asarray(lax.shift_right_logical(x, y)),
                                      np.asarray(jax.lax.shift_right_logical(x, y)))
    ys = np.resize(np.array(amounts, dtype), x.shape)
    np.testing.assert_array_equal(np.asarray(lax.shift_right_logical(x, ys)),
                                  np.asarray(jax.lax.shift_right_logical(x, ys)))


def test_shift_right_logical_of_int64_matches_jax_in_x64_mode(jax):
    with pto.enable_x64(True):   # without x64 int64 inputs are int32
        test_shift_right_logical_matches_jax(jax, np.int64)
