"""BLAS's C = A @ B + beta * C in C's buffer (eval/blas.py): every transposition and layout,
within the rounding of the unfused numpy sum (OpenBLAS may associate it otherwise); refused
(C left alone) where BLAS cannot do it."""
import numpy as np
import pytest

from ptojax.eval.blas import gemm, _routine

RNG = np.random.default_rng(0)
needs_openblas = pytest.mark.skipif(_routine(np.dtype(np.float32)) is None,
                                    reason="numpy is not linked to OpenBLAS here")


def _operand(shape, dtype, fortran):
    a = RNG.standard_normal(shape).astype(dtype)
    return np.asfortranarray(a) if fortran else a


@needs_openblas
def _assert_rounding_close(got, expected, c, lhs, rhs, lc, rc, beta):
    """Within the float error bound of a K-term dot product plus a scaled term."""
    k = lhs.shape[lc]
    magnitude = np.abs(beta * c) + np.abs(_product(lhs, rhs, lc, rc, np.abs))
    bound = 2 * (k + 2) * np.finfo(got.dtype).eps * magnitude
    assert np.all(np.abs(got - expected) <= bound)


def _product(lhs, rhs, lc, rc, f=lambda x: x):
    return f(lhs.T if lc == 0 else lhs) @ f(rhs.T if rc == 1 else rhs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lc,rc", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("fortran", [False, True])
@pytest.mark.parametrize("m,n,k", [(48, 40, 32), (300, 260, 32), (20, 30, 400)])
def test_gemm_adds_the_product_into_c(dtype, lc, rc, fortran, m, n, k):
    lhs = _operand((k, m) if lc == 0 else (m, k), dtype, fortran)
    rhs = _operand((k, n) if rc == 0 else (n, k), dtype, not fortran)
    c = RNG.standard_normal((m, n)).astype(dtype)
    before, beta = c.copy(), dtype(0.9)
    expected = beta * c + _product(lhs, rhs, lc, rc)
    assert gemm(c, lhs, rhs, lc, rc, float(beta))
    _assert_rounding_close(c, expected, before, lhs, rhs, lc, rc, beta)


@needs_openblas
def test_gemm_reads_strided_operands_through_a_copy():
    lhs = RNG.standard_normal((32, 20)).astype(np.float32)[:, ::2]   # neither C nor F
    rhs = RNG.standard_normal((10, 8)).astype(np.float32)
    c = np.ones((32, 8), np.float32)
    before = c.copy()
    expected = c + lhs @ rhs
    assert gemm(c, lhs, rhs, 1, 0, 1.0)
    _assert_rounding_close(c, expected, before, lhs, rhs, 1, 0, 1.0)


@pytest.mark.parametrize("case", ["int", "overlap", "empty", "read-only", "not contiguous"])
def test_gemm_refuses_what_it_cannot_do_and_leaves_c_alone(case):
    a = RNG.standard_normal((8, 8)).astype(np.float32)
    c = RNG.standard_normal((8, 8)).astype(np.float32)
    lhs, rhs = a, a.copy()
    if case == "int":
        c, lhs, rhs = (x.astype(np.int32) for x in (c, lhs, rhs))
    elif case == "overlap":
        lhs = c
    elif case == "empty":
        lhs, rhs = np.ones((8, 0), np.float32), np.ones((0, 8), np.float32)
    elif case == "read-only":
        c.flags.writeable = False
    else:
        c = np.asfortranarray(c)
    kept = c.copy()
    assert not gemm(c, lhs, rhs, 1, 0, 0.5)
    np.testing.assert_array_equal(c, kept)
