"""The numpy executor's fast forms (eval/numpy_fast.py) give numpy's and ml_dtypes' own results:
bit for bit (select, pad, ml_dtypes arithmetic and comparisons through float32), or the same
sum in another order (leading-axis reductions); and a jitted bfloat16 program using them
matches JAX."""
import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
from ptojax import lax
from ptojax.eval import numpy_fast
from ptojax.eval.executable import Executable

ML_FLOATS = [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]
RNG = np.random.default_rng(0)


def _random_bits(dtype, shape):
    kind = numpy_fast._BITS[np.dtype(dtype).itemsize]
    return RNG.integers(0, np.iinfo(kind).max, shape, dtype=np.uint64,
                        endpoint=True).astype(kind).view(dtype)


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    if not numpy_fast.is_ml_float(want.dtype):     # every byte, NaN payloads too
        assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()
        return
    wide_got, wide_want = got.astype(np.float32), want.astype(np.float32)
    same = (numpy_fast.bits(got) == numpy_fast.bits(want)) | (
        np.isnan(wide_got) & np.isnan(wide_want))
    assert same.all(), f"{np.count_nonzero(~same)} elements differ"


@pytest.mark.parametrize("dtype", ML_FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("ufunc", sorted(numpy_fast._VIA_F32, key=lambda u: u.__name__),
                         ids=lambda u: u.__name__)
def test_ml_float_ufunc_through_float32_is_bit_exact(ufunc, dtype):
    a, b = _random_bits(dtype, (3000,)), _random_bits(dtype, (3000,))
    fast = numpy_fast.ufunc_via_f32(ufunc, dtype)
    with np.errstate(all="ignore"):
        want = ufunc(a, b)
        _same_bits(fast(a, b), want)
        out = np.empty_like(want)
        assert fast(a, b, out=out) is out
        _same_bits(out, want)
        _same_bits(fast(a, b[7]), ufunc(a, b[7]))       # a rank-0 operand broadcasts


def test_ufunc_through_float32_only_where_exact():
    assert numpy_fast.ufunc_via_f32(np.add, np.float32) is None
    assert numpy_fast.ufunc_via_f32(np.add, np.float16) is None     # numpy's own: no faster
    assert numpy_fast.ufunc_via_f32(np.exp, ml_dtypes.bfloat16) is None


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.float16, ml_dtypes.bfloat16,
                                   np.float32, np.int64, np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_select_is_where(dtype):
    shape = (8, 40, 17)
    pred = RNG.random(shape) < 0.5
    a = _random_bits(dtype, shape) if np.dtype(dtype).itemsize <= 8 and \
        np.dtype(dtype) != np.bool_ else RNG.random(shape).astype(dtype)
    b = a[::-1].copy()
    _same_bits(numpy_fast.select(pred, a, b), np.where(pred, a, b))
    zero = np.zeros((), dtype)
    _same_bits(numpy_fast.select(pred, zero, b), np.where(pred, zero, b))
    _same_bits(numpy_fast.select(pred, a, zero), np.where(pred, a, zero))
    _same_bits(numpy_fast.select(pred[0, 0, 0], a, b), np.where(pred[0, 0, 0], a, b))


@pytest.mark.parametrize("shape,axes", [((32, 8, 8, 16), (0, 1, 2)), ((6, 5, 3), (0,)),
                                        ((64, 300), (0,)), ((7, 11, 2), (0, 1)),
                                        ((4, 6, 5), (1, 2)), ((16, 4), (0, 1))])
def test_leading_axis_sum_matches_numpy(shape, axes):
    x = RNG.normal(size=shape).astype(np.float32)
    np.testing.assert_allclose(numpy_fast.add_reduce(x, axes, np.float32),
                               np.add.reduce(x, axis=axes, dtype=np.float64), rtol=1e-5,
                               atol=1e-4)
    strided = x[..., ::2]          # not contiguous: numpy's own reduce
    np.testing.assert_array_equal(numpy_fast.add_reduce(strided, axes, np.float32),
                                  np.add.reduce(strided, axis=axes, dtype=np.float32))


def test_leading_axis_sum_folds_rows():
    x = np.arange(64 * 16, dtype=np.int32).reshape(64, 16)
    np.testing.assert_array_equal(numpy_fast.add_reduce(x, (0,), np.int32), x.sum(0))


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float32], ids=lambda d: np.dtype(d).name)
def test_pad_of_ml_floats_against_jax(dtype):
    jax = pytest.importorskip("jax")
    x = RNG.normal(size=(3, 4, 5)).astype(dtype)
    config = [(1, 0, 1), (0, -1, 2), (-1, 2, 0)]
    got = lax.pad(x, np.asarray(-2.5, dtype), config)
    want = jax.lax.pad(x, np.asarray(-2.5, dtype), config)
    assert got.dtype == want.dtype
    _same_bits(np.asarray(got), np.asarray(want))


def test_jitted_bfloat16_program_against_jax():
    """ReLU, a max pool, its gradient and batch statistics in bfloat16, run by the numpy
    executor (the fast forms) against JAX."""
    jax = pytest.importorskip("jax")

    def loss(lax_, sum_, x):
        y = lax_.max(x, lax_.full_like(x, 0))
        pooled = lax_.reduce_window(y, -np.inf, lax_.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        wide = lax_.convert_element_type(pooled, np.float32)
        mean = sum_(wide, axis=(0, 1, 2)) / 64
        return sum_((wide - mean) ** 2)

    x = RNG.normal(size=(4, 8, 8, 8)).astype(ml_dtypes.bfloat16)
    ours = pto.make_ir(pto.value_and_grad(lambda a: loss(lax, pto.numpy.sum, a)))(x)
    got = Executable(ours)(x)
    want = jax.value_and_grad(lambda a: loss(jax.lax, jax.numpy.sum, a))(x)
    np.testing.assert_allclose(np.float32(got[0]), np.float32(want[0]), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got[1]).astype(np.float32),
                               np.asarray(want[1]).astype(np.float32), rtol=1e-2, atol=1e-2)


def test_select_between_scalars_is_a_fresh_copy():
    for pred in (np.bool_(True), np.bool_(False), np.asarray(True), np.asarray(False)):
        for a, b in ((np.int32(3), np.int32(-4)), (np.asarray(np.float32(1.5)),
                                                   np.asarray(np.float32(-0.0))),
                     (np.uint32(7), np.asarray(np.uint32(9)))):
            got = numpy_fast.select(pred, a, b)
            _same_bits(got, np.where(pred, a, b))
            assert got is not a and got is not b and got.shape == ()


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e8m0fnu", "float4_e2m1fn",
                                  "float6_e3m2fn", "int4", "uint2"])
def test_widening_by_table_is_ml_dtypes_cast(name):
    """Every value of a one-byte ml_dtypes type widens as ml_dtypes' own cast does."""
    wide = np.int32 if "int" in name else np.float32
    values = np.arange(256, dtype=np.uint8).view(name)
    if "int" in name:   # only the bit patterns the type produces
        values = np.arange(-8, 16).astype(name)
    values = values.reshape(-1, 4 if values.size % 4 == 0 else 1)
    got = numpy_fast.widened(values, wide)
    assert got.dtype == wide and got.shape == values.shape
    np.testing.assert_array_equal(got, values.astype(wide))
