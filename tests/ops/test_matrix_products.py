"""dot_general on two matrices, each contracting either axis (``x @ w`` and the gradients'
``x.T @ g`` and ``g @ w.T``): the impl's direct matmul path against JAX, in every dtype
family, with and without ``preferred_element_type``."""
import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close

LAYOUTS = [((1,), (0,)), ((0,), (0,)), ((1,), (1,)), ((0,), (1,))]
DTYPES = [(np.float32, None), (np.float64, None), (np.int32, None), (np.float32, np.float32),
          (np.float16, None), (ml_dtypes.bfloat16, np.float32), (np.int8, np.int32),
          (np.int32, np.float32), (np.bool_, None), (np.complex64, None),
          (np.complex64, np.float32)]


def _operand(rng, shape, dtype):
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-9, 9, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype,preferred", DTYPES, ids=str)
@pytest.mark.parametrize("lc,rc", LAYOUTS, ids=str)
def test_matrix_products_match_jax(jax, dtype, preferred, lc, rc):
    rng = np.random.default_rng(0)
    m, k, n = 5, 7, 3
    lhs = _operand(rng, (m, k) if lc == (1,) else (k, m), dtype)
    rhs = _operand(rng, (k, n) if rc == (0,) else (n, k), dtype)
    dn = ((lc, rc), ((), ()))
    got = pto.lax.dot_general(lhs, rhs, dn, preferred_element_type=preferred)
    want = jax.lax.dot_general(lhs, rhs, dn, preferred_element_type=preferred)
    assert_close(got, want)
