"""dot_general on two matrices, each contracting either axis (``x @ w`` and the gradients'
``x.T @ g`` and ``g @ w.T``): the impl's direct matmul path against JAX, in every dtype
family, with and without ``preferred_element_type``."""
import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

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


@pytest.mark.parametrize("lc", [(1,), (0,)], ids=str)
def test_few_rows_times_transposed_matrix_is_computed_swapped(jax, lc):
    """``g @ w.T`` with few rows of ``g`` (a small batch's input gradient) runs as
    ``(w @ g.T).T`` in float32, where OpenBLAS is faster (ops/linalg.py ``_swap_pays``): the
    same values as JAX, a transposed view of a fresh buffer, never one of the operands."""
    from ptojax.ops.linalg import _swap_pays
    rng = np.random.default_rng(1)
    m, k, n = 8, 40, 64
    lhs = _operand(rng, (m, k) if lc == (1,) else (k, m), np.float32)
    w = _operand(rng, (n, k), np.float32)
    assert _swap_pays(lhs if lc == (1,) else lhs.T, w.T)
    assert not _swap_pays(lhs if lc == (1,) else lhs.T, np.ascontiguousarray(w.T))
    assert not _swap_pays(lhs.astype(np.float64) if lc == (1,) else lhs.T.astype(np.float64),
                          w.T.astype(np.float64))
    dn = ((lc, (1,)), ((), ()))
    f = pto.jit(lambda a, b: pto.lax.dot_general(a, b, dn) * 2.0)
    for got in (pto.lax.dot_general(lhs, w, dn), f(lhs, w) / 2.0):
        assert_close(got, jax.lax.dot_general(lhs, w, dn))
    out = np.asarray(pto.lax.dot_general(lhs, w, dn))
    assert not np.may_share_memory(out, lhs) and not np.may_share_memory(out, w)


@pytest.mark.parametrize("lb, rb", [((1, 0), (1, 0)), ((1, 0), (2, 1)), ((2, 1), (1, 0))],
                         ids=str)
def test_batch_pairs_in_another_order_than_memory_run_in_memory_order(jax, lb, rb,
                                                                      monkeypatch):
    """Batch pairs asked in an order both operands hold the other way round (a nested
    vmap's pairwise kernel pairs (1, 0)) multiply the operands as they lie — no transposed
    copy of either — and permute the result's batch axes: JAX's values, bit for bit the
    products of the copying path."""
    from ptojax.ops import linalg
    rng = np.random.default_rng(2)
    lhs = _operand(rng, tuple(7 if d == lb[0] else 6 if d == lb[1] else 5
                              for d in range(3)), np.float32)
    rhs = _operand(rng, tuple(7 if d == rb[0] else 6 if d == rb[1] else 5
                              for d in range(3)), np.float32)
    lc = tuple(d for d in range(3) if d not in lb)
    rc = tuple(d for d in range(3) if d not in rb)
    dn = ((lc, rc), (lb, rb))
    seen = []
    real = linalg.matmul
    monkeypatch.setattr(linalg, "matmul", lambda a, b, out=None: seen.append((a, b)) or
                        real(a, b, out=out))
    got = np.asarray(pto.lax.dot_general(lhs, rhs, dn))
    (a, b), = seen
    assert np.shares_memory(a, lhs) and np.shares_memory(b, rhs)
    want = np.asarray(jax.lax.dot_general(lhs, rhs, dn))
    assert got.shape == want.shape
    assert_close(got, want)
    copied = np.matmul(np.transpose(lhs, (*lb, *lc))[..., None, :],
                       np.transpose(rhs, (*rb, *rc))[..., :, None])[..., 0, 0]
    np.testing.assert_array_equal(got, copied)
