"""Bits, integers, floating-point anatomy, comparisons and the array-API names of
ptojax.numpy against jax.numpy: bitwise_count, gcd, lcm, packbits, unpackbits, frexp,
ldexp, modf, spacing, i0, fabs, isposinf/isneginf, isclose/allclose/array_equal/array_equiv,
acos ... atan2, bitwise_invert/left_shift/right_shift — eagerly, under jit and through
make_ir's IR; gradients and vmap for the differentiable ones."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes
from pnp_reference import check_grad, check_modes, check_vmap, random_array

INTS = [dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.int32, dtypes.uint32]


def _integer_calls(m, x, y):
    return [m.bitwise_count(x), m.gcd(x, y), m.lcm(x, y), m.bitwise_invert(x),
            m.bitwise_left_shift(x, 2), m.bitwise_right_shift(x, 1), m.gcd(x, 6),
            m.packbits(x, axis=1), m.packbits(x != 0, bitorder="little")]


@pytest.mark.parametrize("dtype", INTS, ids=str)
def test_integer_functions_match_jax(jnp, dtype):
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, size=(3, 11), endpoint=True).astype(dtype)
    # JAX's gcd never ends on the most negative integer (its absolute value wraps): that
    # case is checked against NumPy below
    x[0, :3] = [info.min + (info.min < 0), info.max, 0]
    x = np.where(x == info.min, info.min + 1, x).astype(dtype) if info.min < 0 else x
    y = rng.integers(max(info.min, -60), min(info.max, 60), size=(3, 11)).astype(dtype)
    y[1, :2] = 0
    check_modes(lambda a, b: _integer_calls(pnp, a, b), lambda a, b: _integer_calls(jnp, a, b),
                x, y)


def test_gcd_of_the_most_negative_integer_terminates_like_numpy():
    x = np.array([-128, -128, 12, 0], np.int8)
    y = np.array([18, 0, -128, 0], np.int8)
    np.testing.assert_array_equal(pnp.gcd(x, y), np.gcd(x, y))
    np.testing.assert_array_equal(pnp.bitwise_count(x), np.bitwise_count(x))


def test_unpackbits_matches_jax(jnp):
    x = np.random.default_rng(1).integers(0, 256, size=(2, 3, 4)).astype(np.uint8)

    def calls(m, a):
        return [m.unpackbits(a), m.unpackbits(a, axis=1), m.unpackbits(a, axis=-1, count=20),
                m.unpackbits(a, axis=0, count=-3, bitorder="little"),
                m.unpackbits(a, count=100), m.packbits(m.unpackbits(a, axis=2), axis=2)]
    check_modes(lambda a: calls(pnp, a), lambda a: calls(jnp, a), x)


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 0.5, 8.0, 3e-5, -7.25, 1e30, 65504.0]


def _float_calls(m, x, n):
    return [*m.frexp(x), m.ldexp(x, n), m.ldexp(x, 3), *m.modf(x), m.spacing(x), m.fabs(x),
            m.isposinf(x), m.isneginf(x), m.i0(m.where(m.isfinite(x), x, 0.0) % 10)]


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16,
                                   dtypes.float64], ids=str)
def test_floating_point_functions_match_jax(jnp, dtype):
    rng = np.random.default_rng(2)
    with np.errstate(over="ignore"):  # 1e30 is inf in 16 bits
        values = np.concatenate([rng.normal(size=20) * 10.0 ** rng.integers(-3, 4, size=20),
                                 SPECIALS]).astype(dtype)
    exponents = rng.integers(-40, 40, size=values.shape).astype(np.int32)
    with pto.enable_x64(dtype == dtypes.float64):   # float64 math: x64 mode
        check_modes(lambda a, b: _float_calls(pnp, a, b), lambda a, b: _float_calls(jnp, a, b),
                    values, exponents, scale=4.0)


def test_integer_inputs_become_floats_like_jax(jnp):
    x = np.array([-3, 0, 5, 7], np.int16)

    def calls(m, a):
        return [m.fabs(a), *m.modf(a), *m.frexp(a), m.ldexp(a, np.int32(2)), m.spacing(a),
                m.i0(a), m.isposinf(a), m.acos(m.true_divide(a, 8)), m.atan2(a, 2)]
    check_modes(lambda a: calls(pnp, a), lambda a: calls(jnp, a), x)


def _comparison_calls(m, a, b):
    return [m.isclose(a, b), m.isclose(a, b, rtol=0.1, atol=0.5, equal_nan=True),
            m.allclose(a, a), m.allclose(a, b, atol=10.0), m.allclose(a, b, equal_nan=True),
            m.array_equal(a, a), m.array_equal(a, a, equal_nan=True), m.array_equal(a, b[:2]),
            m.array_equiv(a[:1], a), m.array_equiv(a, b)]


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int32, dtypes.bool_], ids=str)
def test_comparisons_match_jax(jnp, dtype):
    rng = np.random.default_rng(3)
    a = random_array(rng, (3, 4), dtype)
    b = (a + (rng.random((3, 4)) < 0.5)).astype(dtype) if dtype != dtypes.bool_ else ~a
    if dtype == dtypes.float32:
        a[0, 0] = b[0, 0] = np.nan
        a[1, 1] = b[1, 1] = np.inf
    check_modes(lambda x, y: _comparison_calls(pnp, x, y),
                lambda x, y: _comparison_calls(jnp, x, y), a, b)
    # shapes that do not broadcast are not equivalent: False as NumPy (JAX 0.10 means to
    # return False too, but its check catches ValueError where lax raises a TypeError)
    assert not pnp.array_equiv(a, b[:, :2]) and not np.array_equiv(a, b[:, :2])


def _trig_calls(m, x, y):
    return [m.acos(x), m.asin(x), m.atan(x), m.acosh(1 + m.abs(x)), m.asinh(x),
            m.atanh(x * 0.9), m.atan2(x, y)]


def test_array_api_trig_names_match_jax_with_gradients_and_vmap(jnp):
    rng = np.random.default_rng(4)
    x = rng.uniform(-0.95, 0.95, size=(3, 5)).astype(np.float32)
    y = rng.uniform(0.5, 2.0, size=(3, 5)).astype(np.float32)
    check_modes(lambda a, b: _trig_calls(pnp, a, b), lambda a, b: _trig_calls(jnp, a, b), x, y)
    stack = lambda m: (lambda a, b: m.stack(_trig_calls(m, a, b)))
    check_grad(stack(pnp), stack(jnp), x, y)


def test_float_anatomy_gradients_and_vmap_match_jax(jnp):
    x = np.array([[0.0, 0.3, -2.5, 7.0], [1.5, -0.75, 12.0, 3e-3]], np.float32)

    def smooth(m, a):
        return m.stack([m.frexp(a)[0], m.ldexp(a, 3), m.modf(a)[0], m.fabs(a), m.i0(a)])
    check_grad(lambda a: smooth(pnp, a), lambda a: smooth(jnp, a), x)
    check_vmap(lambda a: smooth(pnp, a), lambda a: smooth(jnp, a), x)
    i = np.array([[12, 18, 7], [0, 5, 9]], np.int32)
    check_vmap(lambda a: pnp.gcd(a, a[::-1]), lambda a: jnp.gcd(a, a[::-1]), i)
