"""pto.random: Threefry known answers, bit-exactness against jax.random, distribution
statistics, reproducibility and tracing."""
import math

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import random as pr
from ptojax.errors import DtypeError, PtoError, ShapeError
from ptojax.ops.random_bits import threefry2x32_p
from helpers import assert_close

U32 = np.uint32
SEED = 1701


def key_words(x):
    """The uint32 words of typed keys (ptojax's or JAX's), else ``x``."""
    if str(getattr(x, "dtype", "")).startswith("key<"):
        if type(x).__module__.startswith("jax"):
            import jax
            return jax.random.key_data(x)
        return pr.key_data(x)
    return x


def assert_bits_equal(actual, expected):
    a, e = np.asarray(key_words(actual)), np.asarray(key_words(expected))
    assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, a.shape, e.dtype, e.shape)
    np.testing.assert_array_equal(a.view(f"u{a.itemsize}"), e.view(f"u{e.itemsize}"))


@pytest.fixture(scope="module")
def jr(jax):
    return jax.random


@pytest.fixture(scope="module")
def jkey(jr):
    return jr.PRNGKey(SEED)


@pytest.fixture
def key():
    return pr.key(SEED)


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request, jax):
    """ptojax and JAX in the same mode: x64 off (the default: 64-bit seeds, bounds and dtypes
    are 32-bit, as in JAX) or on."""
    with pto.enable_x64(request.param), jax.enable_x64(request.param):
        yield request.param


# the primitive -------------------------------------------------------------------------------
@pytest.mark.parametrize("key_words, counter, expected", [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
])
def test_threefry_known_answers(key_words, counter, expected):
    """Random123's known-answer vectors for Threefry-2x32 with 20 rounds."""
    out = threefry2x32_p.bind(*(U32(v) for v in (*key_words, *counter)))
    assert [int(o) for o in out] == list(expected)


def test_threefry_is_elementwise_with_scalar_broadcast(rng):
    counters = rng.integers(0, 2 ** 32, size=(2, 3, 4), dtype=U32)
    hi, lo = threefry2x32_p.bind(U32(7), U32(9), counters[0], counters[1])
    assert hi.shape == lo.shape == (3, 4) and hi.dtype == U32
    one_hi, one_lo = threefry2x32_p.bind(U32(7), U32(9), counters[0, 1, 2], counters[1, 1, 2])
    assert (int(hi[1, 2]), int(lo[1, 2])) == (int(one_hi), int(one_lo))


def test_threefry_with_array_keys_matches_each_scalar_key(rng):
    """Keys of the block's shape (vmapped keys) and the scalar-key fast path agree."""
    k = rng.integers(0, 2 ** 32, size=(2, 3, 4), dtype=U32)
    counters = rng.integers(0, 2 ** 32, size=(2, 3, 4), dtype=U32)
    hi, lo = threefry2x32_p.bind(k[0], k[1], counters[0], U32(5))
    for i, j in np.ndindex(3, 4):
        one = threefry2x32_p.bind(k[0, i, j], k[1, i, j], counters[0, i, j], U32(5))
        assert (int(hi[i, j]), int(lo[i, j])) == tuple(int(o) for o in one)


def test_threefry_rejects_bad_operands():
    with pytest.raises(DtypeError, match="uint32"):
        threefry2x32_p.bind(np.int32(1), U32(2), U32(3), U32(4))
    with pytest.raises(ShapeError):
        threefry2x32_p.bind(U32(1), U32(2), np.zeros(3, U32), np.zeros(4, U32))


def test_threefry_matches_jax_primitive(jax, rng):
    from jax._src.random.threefry2x32 import threefry2x32_p as jax_threefry
    words = [rng.integers(0, 2 ** 32, size=(5, 7), dtype=U32) for _ in range(4)]
    for ours, theirs in zip(threefry2x32_p.bind(*words), jax_threefry.bind(*words)):
        assert_bits_equal(ours, theirs)


# keys ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 31 - 1, 2 ** 32 + 7, 2 ** 63 - 1,
                                  np.int64(-3), np.uint32(4000000000)])
def test_key_matches_jax(jr, x64, seed):
    assert_bits_equal(pr.PRNGKey(seed), jr.PRNGKey(seed))
    assert_bits_equal(pr.key(seed), jr.key(seed))


@pytest.mark.parametrize("seed", [2 ** 63, 2 ** 64 - 1, -2 ** 63 - 1])
def test_python_int_seed_beyond_int64_is_an_overflow_error_as_jax(jr, x64, seed):
    """JAX converts a Python int seed to a C long; a numpy uint64 seed is accepted by both."""
    for make in ("key", "PRNGKey"):
        with pytest.raises(OverflowError):
            getattr(jr, make)(seed)
        with pytest.raises(OverflowError, match="does not fit int64"):
            getattr(pr, make)(seed)
    assert_bits_equal(pr.PRNGKey(np.uint64(2 ** 64 - 1)), jr.PRNGKey(np.uint64(2 ** 64 - 1)))


def test_key_of_negative_32_bit_seed_has_zero_high_word():
    """A Python int that fits int32 is a 32-bit seed (JAX without x64 agrees)."""
    assert pr.PRNGKey(-1).tolist() == [0, 0xFFFFFFFF]
    assert pr.key_data(pr.key(np.int32(-5))).tolist() == [0, 0xFFFFFFFB]


def test_key_rejects_bad_seeds():
    with pytest.raises(DtypeError, match="the seed must be an integer"):
        pr.key(1.5)
    with pytest.raises(ShapeError, match="scalar"):
        pr.key(np.arange(2))


@pytest.mark.parametrize("num", [2, 5, (2, 3)])
def test_split_matches_jax(jr, jkey, key, num):
    assert_bits_equal(pr.split(key, num), jr.split(jkey, num))


@pytest.mark.parametrize("data", [0, 1, 123456789, 2 ** 32 - 1, np.uint32(2 ** 32 - 2)])
def test_fold_in_matches_jax(jr, jkey, key, data):
    assert_bits_equal(pr.fold_in(key, data), jr.fold_in(jkey, data))


def test_keys_must_be_uint32_pairs(key):
    with pytest.raises(DtypeError, match="expected dtype uint32"):
        pr.uniform(np.array([1, 2], np.int32))
    with pytest.raises(ShapeError, match="single key.*vmap"):
        pr.normal(pr.split(key, 3))
    with pytest.raises(DtypeError, match="data must be an integer"):
        pr.fold_in(key, 1.0)


@pytest.mark.parametrize("data", [-1, 2 ** 32, 2 ** 40])
def test_fold_in_rejects_python_ints_outside_uint32_as_jax(jr, jkey, key, data):
    with pytest.raises(OverflowError):
        jr.fold_in(jkey, data)
    with pytest.raises(OverflowError, match="does not fit uint32"):
        pr.fold_in(key, data)


# bit-exact samplers --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype, shape", [("uint32", ()), ("uint32", (3, 5)), ("uint8", (7,)),
                                          ("uint16", (3, 5)), ("uint64", (3, 5))])
def test_bits_match_jax(jr, jkey, key, x64, dtype, shape):
    assert_bits_equal(pr.bits(key, shape, dtype), jr.bits(jkey, shape, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_uniform_matches_jax(jax, jr, jkey, key, x64, dtype):
    dt = jax.numpy.dtype(dtype)
    assert_bits_equal(pr.uniform(key, (4, 8), dtype, -3.0, 5.0),
                      jr.uniform(jkey, (4, 8), dt, -3.0, 5.0))


def test_uniform_with_broadcast_bounds_matches_jax(jr, jkey, key):
    lo = np.array([[0.0], [10.0], [-5.0]], np.float32)
    hi = lo + np.array([1.0, 2.0, 4.0, 0.5], np.float32)
    out = pr.uniform(key, (3, 4), minval=lo, maxval=hi)
    assert_bits_equal(out, jr.uniform(jkey, (3, 4), np.float32, lo, hi))
    assert np.all((np.asarray(out) >= lo) & (np.asarray(out) < hi))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_uniform_with_any_span_is_within_an_ulp_of_jax(jax, jr, jkey, key, dtype):
    """XLA's CPU backend fuses ``unit * span + minval`` into one rounding; ptojax rounds the
    product and the sum separately, so spans that are not powers of two may differ in the
    last bit."""
    ours = pr.uniform(key, (1000,), dtype, -3.0, 3.7)
    theirs = jr.uniform(jkey, (1000,), jax.numpy.dtype(dtype), -3.0, 3.7)
    ulp_of_bounds = float(np.spacing(np.asarray(4.0, dtype)))
    assert_close(ours, theirs, rtol=0, atol=ulp_of_bounds)


def test_bernoulli_matches_jax(jr, jkey, key):
    assert_bits_equal(pr.bernoulli(key, np.float32(0.3), (100,)),
                      jr.bernoulli(jkey, np.float32(0.3), (100,)))
    p = np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)
    assert_bits_equal(pr.bernoulli(key, p), jr.bernoulli(jkey, p))


@pytest.mark.parametrize("dtype, lo, hi", [
    ("int32", -5, 100), ("int64", np.int64(-2 ** 40), np.int64(2 ** 40)), ("int8", -128, 128),
    ("uint8", 0, 256), ("uint32", 7, np.int64(2 ** 32 - 1)),
    ("int32", np.int64(-2 ** 31), np.int64(2 ** 31)),   # the whole int32 range
    ("int32", 5, 5),                                    # empty range: minval
])
def test_randint_matches_jax(jr, jkey, key, x64, dtype, lo, hi):
    assert_bits_equal(pr.randint(key, (200,), lo, hi, dtype),
                      jr.randint(jkey, (200,), lo, hi, dtype))


def test_randint_with_array_bounds_matches_jax(jr, jkey, key):
    lo = np.array([0, 10, -50], np.int32)[:, None]
    hi = np.array([3, 1000], np.int32)
    assert_bits_equal(pr.randint(key, (3, 2), lo, hi), jr.randint(jkey, (3, 2), lo, hi,
                                                                   np.int32))


@pytest.mark.parametrize("axis, independent", [(0, False), (1, False), (1, True)])
def test_permutation_of_array_matches_jax(jr, jkey, key, axis, independent):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert_bits_equal(pr.permutation(key, x, axis, independent),
                      jr.permutation(jkey, x, axis, independent))


def test_permutation_of_range_matches_jax(jr, jkey, key):
    ours = pr.permutation(key, 50)
    assert ours.dtype == np.int32
    np.testing.assert_array_equal(ours, jr.permutation(jkey, 50))
    np.testing.assert_array_equal(np.sort(np.asarray(ours)), np.arange(50))


def test_choice_matches_jax(jr, jkey, key):
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert_bits_equal(pr.choice(key, x, (3,), replace=False, axis=1),
                      jr.choice(jkey, x, (3,), replace=False, axis=1))
    p = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    np.testing.assert_array_equal(pr.choice(key, 4, (50,), p=p), jr.choice(jkey, 4, (50,),
                                                                            p=p))
    np.testing.assert_array_equal(pr.choice(key, 4, (3,), replace=False, p=p),
                                  jr.choice(jkey, 4, (3,), replace=False, p=p))


# close to JAX, and statistically right -------------------------------------------------------
def _ks_statistic(samples, cdf) -> float:
    """Kolmogorov-Smirnov distance between the samples' empirical CDF and ``cdf``."""
    x = np.sort(np.asarray(samples, np.float64))
    model = cdf(x)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - model), np.max(model - np.arange(n) / n))


_normal_cdf = np.vectorize(lambda v: 0.5 * (1 + math.erf(v / math.sqrt(2))))


@pytest.mark.parametrize("dtype, tol", [("float32", 1e-5), ("float64", 1e-12),
                                        ("bfloat16", 1e-2)])
def test_normal_close_to_jax(jax, jr, jkey, key, x64, dtype, tol):
    dt = jax.numpy.dtype(dtype)
    if dtype == "float64" and not x64:
        tol = 1e-5   # float32 draws without x64
    assert_close(pr.normal(key, (1000,), dtype), jr.normal(jkey, (1000,), dt), rtol=tol,
                 atol=tol)


def test_complex_normal_close_to_jax(jax, jr, jkey, key):
    """A complex dtype: (re + i im) / sqrt(2) from the two halves of split(key), as JAX's."""
    with jax.enable_x64(False):
        want = jr.normal(jkey, (300,), jax.numpy.complex64)
    assert_close(pr.normal(key, (300,), "complex64"), want, rtol=1e-5, atol=1e-5)
    assert_close(pto.jit(lambda k: pr.normal(k, (300,), "complex64"))(key), want, rtol=1e-5,
                 atol=1e-5)


FLOAT_ONLY, INT_ONLY = ("int32", "bool", "complex64"), ("float32", "bool")
# sampler -> the dtypes of the wrong kind for it
WRONG_DTYPES = {
    "normal": (lambda r, k, d: r.normal(k, (2,), d), ("int32", "bool")),
    "uniform": (lambda r, k, d: r.uniform(k, (2,), d), FLOAT_ONLY),
    "truncated_normal": (lambda r, k, d: r.truncated_normal(k, -1.0, 1.0, (2,), d), FLOAT_ONLY),
    "exponential": (lambda r, k, d: r.exponential(k, (2,), d), FLOAT_ONLY),
    "gamma": (lambda r, k, d: r.gamma(k, 2.0, (2,), d), FLOAT_ONLY),
    "binomial": (lambda r, k, d: r.binomial(k, 3.0, 0.5, (2,), d), FLOAT_ONLY),
    "bits": (lambda r, k, d: r.bits(k, (2,), d), ("int32", "float32")),
    "poisson": (lambda r, k, d: r.poisson(k, 3.0, (2,), d), INT_ONLY),
    "geometric": (lambda r, k, d: r.geometric(k, 0.5, (2,), d), INT_ONLY),
}


@pytest.mark.parametrize("name", sorted(WRONG_DTYPES))
def test_sampler_dtype_of_the_wrong_kind_is_a_value_error_as_jax(jr, jkey, key, name):
    """JAX raises a ValueError for a dtype of the wrong kind; ptojax's is also a DtypeError."""
    draw, wrong = WRONG_DTYPES[name]
    for dtype in map(np.dtype, wrong):
        with pytest.raises(ValueError):
            draw(jr, jkey, dtype)
        with pytest.raises(ValueError, match=name) as ours:
            draw(pr, key, dtype)
        assert isinstance(ours.value, DtypeError), (name, dtype)


def test_normal_statistics(key):
    x = np.asarray(pr.normal(key, (20000,)), np.float64)
    assert abs(x.mean()) < 0.03 and abs(x.var() - 1) < 0.04
    assert _ks_statistic(x, _normal_cdf) < 0.015  # 1.36/sqrt(n) is the 5% critical value
    assert np.isfinite(x).all()


def test_truncated_normal(jr, jkey, key):
    lower, upper = -1.0, 2.0
    x = pr.truncated_normal(key, lower, upper, (20000,))
    assert_close(x, jr.truncated_normal(jkey, lower, upper, (20000,), np.float32), rtol=1e-5,
                 atol=1e-5)
    x = np.asarray(x, np.float64)
    assert x.min() > lower and x.max() < upper
    z = _normal_cdf(upper) - _normal_cdf(lower)
    density = np.exp(-np.array([lower, upper]) ** 2 / 2) / math.sqrt(2 * math.pi)
    assert abs(x.mean() - (density[0] - density[1]) / z) < 0.02
    truncated_cdf = lambda v: (_normal_cdf(v) - _normal_cdf(lower)) / z  # noqa: E731
    assert _ks_statistic(x, truncated_cdf) < 0.015


def test_truncated_normal_shape_from_bounds(key):
    out = pr.truncated_normal(key, np.zeros((3, 1), np.float32), np.ones(4, np.float32))
    assert out.shape == (3, 4)
    assert np.all((np.asarray(out) > 0) & (np.asarray(out) < 1))


def test_gumbel(jr, jkey, key):
    x = pr.gumbel(key, (20000,))
    assert_close(x, jr.gumbel(jkey, (20000,), np.float32), rtol=1e-5, atol=1e-5)
    x = np.asarray(x, np.float64)
    assert abs(x.mean() - 0.5772157) < 0.03 and abs(x.var() - math.pi ** 2 / 6) < 0.08


def test_categorical_frequencies(key):
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32))
    draws = np.asarray(pr.categorical(key, logits, shape=(10000, 2)))
    assert draws.shape == (10000, 2) and draws.dtype == np.int32
    for row in range(2):
        freq = np.bincount(draws[:, row], minlength=3) / 10000
        np.testing.assert_allclose(freq, np.exp(logits[row]), atol=0.02)


def test_categorical_along_axis_0(key):
    logits = np.log(np.array([[0.9, 0.05], [0.1, 0.95]], np.float32))
    draws = np.asarray(pr.categorical(key, logits, axis=0, shape=(4000, 2)))
    np.testing.assert_allclose(draws.mean(0), [0.1, 0.95], atol=0.03)
    with pytest.raises(ShapeError, match="axis 2"):
        pr.categorical(key, logits, axis=2)


def test_uniform_statistics(key):
    x = np.asarray(pr.uniform(key, (20000,), minval=2.0, maxval=4.0), np.float64)
    assert x.min() >= 2 and x.max() < 4
    assert _ks_statistic(x, lambda v: (v - 2) / 2) < 0.015


def test_randint_covers_its_range_uniformly(key):
    x = np.asarray(pr.randint(key, (30000,), -3, 7))
    counts = np.bincount(x + 3, minlength=10)
    assert x.min() == -3 and x.max() == 6
    np.testing.assert_allclose(counts / 30000, 0.1, atol=0.01)


def test_choice_uniform_with_replacement(key):
    pool = np.array([10.0, 20.0, 30.0], np.float32)
    draws = np.asarray(pr.choice(key, pool, (9000,)))
    np.testing.assert_allclose([np.mean(draws == v) for v in pool], 1 / 3, atol=0.02)


def test_choice_without_replacement_is_distinct(key):
    draws = np.asarray(pr.choice(key, 10, (2, 5), replace=False))
    assert draws.shape == (2, 5) and sorted(draws.ravel()) == list(range(10))


def test_choice_errors(key):
    with pytest.raises(ShapeError, match="without replacement"):
        pr.choice(key, 3, (4,), replace=False)
    with pytest.raises(ShapeError, match="p must have shape"):
        pr.choice(key, 3, (2,), p=np.ones(4, np.float32) / 4)


def test_bernoulli_frequency_and_dtype(key):
    x = np.asarray(pr.bernoulli(key, 0.25, (20000,)))
    assert x.dtype == np.bool_ and abs(x.mean() - 0.25) < 0.01
    with pytest.raises(DtypeError, match="floating-point"):
        pr.bernoulli(key, 1)


def test_sampler_argument_errors(key):
    with pytest.raises(DtypeError, match="floating-point"):
        pr.uniform(key, (2,), np.int32)
    with pytest.raises(DtypeError, match="unsigned"):
        pr.bits(key, (2,), np.int32)
    with pytest.raises(DtypeError, match="integer dtype"):
        pr.randint(key, (2,), 0, 3, np.float32)
    with pytest.raises(ShapeError, match="broadcast"):
        pr.uniform(key, (3,), minval=np.zeros(4, np.float32))
    with pytest.raises(ShapeError, match="negative"):
        pr.normal(key, (-1,))


# reproducibility and tracing -----------------------------------------------------------------
def test_same_key_same_numbers_new_key_new_numbers(key):
    a, b = pr.split(key)
    np.testing.assert_array_equal(pr.normal(a, (8,)), pr.normal(a, (8,)))
    assert not np.array_equal(pr.normal(a, (8,)), pr.normal(b, (8,)))
    assert not np.array_equal(pr.uniform(pr.fold_in(key, 1), (8,)),
                              pr.uniform(pr.fold_in(key, 2), (8,)))


def test_draws_are_prefix_stable(key):
    """Element i of a draw depends only on the key and i (the counter-based design)."""
    long, short = pr.bits(key, (100,)), pr.bits(key, (10,))
    np.testing.assert_array_equal(np.asarray(long)[:10], short)


def test_samplers_trace_under_jit(key):
    def sample(k, seed):
        k = pr.fold_in(k, seed)
        k1, k2, k3 = pr.split(k, 3)
        return (pr.uniform(k1, (4,)), pr.normal(k2, (2, 3)), pr.randint(k3, (5,), 0, 9),
                pr.permutation(k1, 6), pr.bernoulli(k2, 0.5, (3,)), pr.key(seed))

    jitted = pto.jit(sample)
    for ours, eager in zip(jitted(key, 3), sample(key, 3)):
        assert_bits_equal(ours, eager)
    ir = pto.make_ir(sample)(key, 3)
    assert "threefry2x32" in str(ir)


def test_traced_64_bit_seed(jr, x64):
    seed = np.int64(2 ** 40 + 11)
    assert_bits_equal(pto.jit(pr.key)(seed), jr.PRNGKey(seed))


def test_vmap_over_keys_seeds_and_data_matches_a_loop(key):
    keys = pr.split(key, 4)
    for sample in (lambda k: pr.normal(k, (3,)), lambda k: pr.permutation(k, 6),
                   lambda k: pr.randint(k, (5,), 0, 10)):
        assert_bits_equal(pto.vmap(sample)(keys), np.stack([sample(k) for k in keys]))
    seeds = np.arange(5, dtype=np.int32)
    assert_bits_equal(pto.vmap(lambda s: pr.uniform(pr.key(s), (2,)))(seeds),
                      np.stack([pr.uniform(pr.key(s), (2,)) for s in seeds]))
    folded = pto.vmap(pr.fold_in, in_axes=(None, 0))(key, seeds)
    assert_bits_equal(folded, np.stack([pr.key_data(pr.fold_in(key, s)) for s in seeds]))


def test_sampling_inside_grad(key):
    def noisy_loss(x):
        mask = pr.bernoulli(key, 0.5, x.shape)
        return pnp.sum(pnp.where(mask, x, 0.0) * pr.normal(key, x.shape))

    x = np.ones(16, np.float32)
    expected = np.where(pr.bernoulli(key, 0.5, (16,)), pr.normal(key, (16,)), 0.0)
    assert_close(pto.grad(noisy_loss)(x), expected.astype(np.float32))


def test_key_data_and_wrap_key_data_match_jax(jax):
    """key_data/wrap_key_data convert typed keys to and from their uint32 words, which equal
    JAX's for the same seed; key_data of raw keys checks and returns them."""
    keys = pto.random.split(pto.random.key(7), 3)
    want = jax.random.key_data(jax.random.split(jax.random.key(7), 3))
    np.testing.assert_array_equal(np.asarray(pto.random.key_data(keys)), np.asarray(want))
    rewrapped = pto.random.wrap_key_data(pto.random.key_data(keys))
    np.testing.assert_array_equal(np.asarray(pto.random.normal(rewrapped[0], (2,))),
                                  np.asarray(pto.random.normal(keys[0], (2,))))
    with pytest.raises(DtypeError, match="expected dtype uint32"):
        pto.random.key_data(np.ones(2, np.float32))
    # impl= as JAX's keyword: threefry2x32 (JAX's default) or None; others are refused
    np.testing.assert_array_equal(
        np.asarray(pto.random.key_data(pto.random.key(7, impl="threefry2x32"))),
        np.asarray(jax.random.key_data(jax.random.key(7, impl="threefry2x32"))))
    with pytest.raises(PtoError, match="impl='rbg' is not available"):
        pto.random.key(7, impl="rbg")
