"""Elementwise functions of ptojax.numpy against jax.numpy: every function on every dtype JAX
accepts, NumPy broadcasting of any two or three shapes, weak Python scalars — eagerly, under
jit and through make_ir's IR."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes
from pnp_reference import VALUE_DTYPES as ALL_DTYPES, check_modes, check_type, random_array, run_modes

UNARY = ["negative", "positive", "abs", "sign", "floor", "ceil", "round", "rint", "trunc",
         "square", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt",
         "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
         "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "sinc", "isnan",
         "isinf", "isfinite", "signbit", "logical_not", "bitwise_not", "invert"]
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
          "mod", "fmod", "power", "float_power", "maximum", "minimum", "fmax", "fmin",
          "arctan2", "hypot", "logaddexp", "logaddexp2", "copysign", "nextafter", "heaviside",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
          "bitwise_xor", "left_shift", "right_shift"]
SHIFTS = ("left_shift", "right_shift")


def _accepted(jax, jnp, names, *args):
    """The functions JAX accepts for these operand types (ptojax may accept more)."""
    ok = []
    for name in names:
        try:
            jax.eval_shape(getattr(jnp, name), *args)
            ok.append(name)
        except (TypeError, ValueError, NotImplementedError, jax.dtypes.TypePromotionError):
            pass
    return ok


def _scale(dtype):
    """Rounding of narrow floats may differ by an ulp between numpy and XLA."""
    return 2.0 if dtype in dtypes.FLOAT8 else 1.0


def _batched(module, names, arity):
    return lambda *xs: [getattr(module, n)(*xs[:arity]) for n in names]


# Values are compared on one dtype per kind of arithmetic (JAX compiles every function for
# every dtype, ~20 ms each); the result dtypes of every function on every dtype are compared
# abstractly, which costs no compilation.
VALUE_DTYPES = [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                dtypes.float8_e4m3fn, dtypes.complex64, dtypes.int8, dtypes.int32, dtypes.uint8,
                dtypes.uint32, dtypes.bool_]
INTEGER_UNARY = ["negative", "positive", "abs", "sign", "floor", "ceil", "round", "trunc",
                 "square", "isnan", "isinf", "isfinite", "signbit", "logical_not",
                 "bitwise_not", "exp", "sqrt", "reciprocal", "sinc"]
INTEGER_BINARY = [n for n in BINARY if n not in ("hypot", "logaddexp2", "copysign",
                                                 "nextafter", "heaviside", "fmax", "fmin")]


def _second_operand(rng, dtype, shape, shift):
    if shift:  # shift amounts within the bit width (larger ones are undefined)
        return rng.integers(0, 8 * np.dtype(dtype).itemsize, size=shape).astype(dtype)
    if dtypes.is_integer(dtype):  # small nonzero integers: defined divisions
        low = 1 if dtypes.is_unsigned(dtype) else -3
        values = rng.integers(low, 4, size=shape)
        return np.where(values == 0, 2, values).astype(dtype)
    return random_array(rng, shape, dtype)


POWERS = ("power", "float_power")


def _binary_groups(names, y, shift):
    """(names, second operand) groups: integer powers take |y| (a negative integer exponent
    has no integer result), shifts take in-range amounts."""
    plain = [n for n in names if n not in SHIFTS + POWERS]
    powers = [n for n in names if n in POWERS]
    shifts = [n for n in names if n in SHIFTS]
    return [(plain, y), (powers, np.abs(y) if y.dtype.kind == "i" else y), (shifts, shift)]


def _operands(dtype, seed=1):
    rng = np.random.default_rng(seed)
    x = random_array(rng, (2, 3), dtype)
    return x, _second_operand(rng, dtype, (3,), False), _second_operand(rng, dtype, (3,), True)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_function_gives_jax_result_dtypes_on_every_dtype(jax, jnp, dtype):
    x, y, shift = _operands(dtype)
    for names, args in [(UNARY, (x,))] + [(n, (x, z)) for n, z in
                                          _binary_groups(BINARY, y, shift)]:
        names = _accepted(jax, jnp, names, *args)
        expected = [jax.eval_shape(getattr(jnp, n), *args) for n in names]
        for mode, outs in run_modes(_batched(pnp, names, len(args)), *args).items():
            for name, out, want in zip(names, outs, expected):
                check_type(out, want, args, what=f"{mode} {name}")


# f8 programs are slow to compile (XLA emulates the type): a representative few.
FLOAT8_NAMES = ["negative", "abs", "floor", "round", "square", "exp", "log", "sqrt", "tanh",
                "sin", "isnan", "add", "subtract", "multiply", "divide", "maximum", "less",
                "power", "floor_divide"]


def _value_names(dtype, names, integer_names):
    if dtype in dtypes.FLOAT8:
        return [n for n in names if n in FLOAT8_NAMES]
    return names if dtypes.is_inexact(dtype) else [n for n in names if n in integer_names]


@pytest.mark.parametrize("dtype", VALUE_DTYPES, ids=str)
def test_unary_function_values_match_jax(jax, jnp, dtype):
    x, _, _ = _operands(dtype)
    names = _accepted(jax, jnp, _value_names(dtype, UNARY, INTEGER_UNARY), x)
    check_modes(_batched(pnp, names, 1), _batched(jnp, names, 1), x, labels=names,
                scale=_scale(dtype))


@pytest.mark.parametrize("dtype", VALUE_DTYPES, ids=str)
def test_binary_function_values_match_jax(jax, jnp, dtype):
    x, y, shift = _operands(dtype, seed=2)
    for names, second in _binary_groups(_value_names(dtype, BINARY, INTEGER_BINARY), y, shift):
        names = _accepted(jax, jnp, names, x, second)
        if names:
            check_modes(_batched(pnp, names, 2), _batched(jnp, names, 2), x, second,
                        labels=names, scale=_scale(dtype))


MIXED = [(dtypes.int8, dtypes.uint8), (dtypes.uint32, dtypes.int32),
         (dtypes.bool_, dtypes.bfloat16), (dtypes.int64, dtypes.float16)]
MIXED_NAMES = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "power",
               "maximum", "arctan2", "less", "bitwise_or"]


@pytest.mark.parametrize("pair", MIXED, ids=str)
def test_binary_function_values_with_mixed_dtypes_match_jax(jax, jnp, pair):
    rng = np.random.default_rng(3)
    x, y = random_array(rng, (3, 1), pair[0]), _second_operand(rng, pair[1], (4,), False)
    for names, second in _binary_groups(MIXED_NAMES, y, shift=None):
        names = _accepted(jax, jnp, names, x, second) if names else []
        if names:
            check_modes(_batched(pnp, names, 2), _batched(jnp, names, 2), x, second,
                        labels=names)


BROADCAST_SAMPLE = ["add", "multiply", "divide", "maximum", "less", "power", "arctan2",
                    "logical_and", "floor_divide"]


@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, min_side=0, max_side=3),
       name=st.sampled_from(BROADCAST_SAMPLE), dtype=st.sampled_from([dtypes.float32,
                                                                     dtypes.int32]),
       seed=st.integers(0, 2**16))
def test_binary_functions_broadcast_like_jax(jnp, shapes, name, dtype, seed):
    rng = np.random.default_rng(seed)
    x = random_array(rng, shapes.input_shapes[0], dtype)
    y = _second_operand(rng, dtype, shapes.input_shapes[1], False)
    y = np.abs(y) if name in POWERS else y
    check_modes(getattr(pnp, name), getattr(jnp, name), x, y)


@given(shapes=mutually_broadcastable_shapes(num_shapes=3, max_dims=3, min_side=0, max_side=3),
       seed=st.integers(0, 2**16))
def test_where_broadcasts_all_three_operands_like_jax(jnp, shapes, seed):
    rng = np.random.default_rng(seed)
    cond, x, y = (random_array(rng, s, d) for s, d in zip(
        shapes.input_shapes, (dtypes.bool_, dtypes.float16, dtypes.int8)))
    check_modes(pnp.where, jnp.where, cond, x, y)


@given(dtype=st.sampled_from(ALL_DTYPES), scalar=st.sampled_from([True, 2, -3, 0.5, 1e3]),
       name=st.sampled_from(["add", "multiply", "subtract", "maximum", "where", "less"]),
       left=st.booleans(), seed=st.integers(0, 2**16))
def test_weak_python_scalars_keep_the_array_dtype_like_jax(jax, jnp, dtype, scalar, name, left,
                                                          seed):
    x = random_array(np.random.default_rng(seed), (3,), dtype)
    args = (scalar, x) if left else (x, scalar)
    if name == "where":
        pto_fn, jax_fn = (lambda a, b: pnp.where(True, a, b)), (lambda a, b: jnp.where(True, a, b))
    else:
        pto_fn, jax_fn = getattr(pnp, name), getattr(jnp, name)
    if not _accepted(jax, jnp, [name], *args) or name == "where" and not \
            _accepted(jax, jnp, ["add"], *args):
        return
    check_modes(pto_fn, jax_fn, *args, scale=_scale(dtype))


def test_clip_matches_jax(jnp):
    x = random_array(np.random.default_rng(4), (3, 4), dtypes.float32)
    lo, hi = np.full((4,), -1.0, np.float32), 1.5
    check_modes(lambda a, b: pnp.clip(a, b, hi), lambda a, b: jnp.clip(a, b, hi), x, lo)
    check_modes(lambda a: pnp.clip(a, max=0.5), lambda a: jnp.clip(a, max=0.5), x)
    xi = random_array(np.random.default_rng(5), (5,), dtypes.int8)
    check_modes(lambda a: pnp.clip(a, -1, 2), lambda a: jnp.clip(a, -1, 2), xi)


def test_astype_truncates_saturates_and_maps_nan_to_zero_like_jax(jax, jnp):
    x = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 2.7, -2.7, 300.5, 0.5], np.float32)
    targets = [np.int8, np.int32, np.uint8, np.uint32, np.bool_, np.float16, dtypes.bfloat16,
               dtypes.float8_e4m3fn, np.int64]

    def calls(a):
        a = pnp.asarray(a) if not hasattr(a, "at") else a
        return [a.astype(t) for t in targets]
    with pto.enable_x64(True):      # int64 as JAX with x64
        check_modes(calls, calls, x, inputs=(x, np.int64(0)))
    with jax.enable_x64(False):     # the default mode: int64 is int32 (saturating), as JAX's
        want = [np.asarray(v) for v in jax.jit(calls)(x)]
    for got, expected in zip(calls(x), want):
        got = np.asarray(got)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got.astype(np.float32), expected.astype(np.float32))


def test_round_to_decimals_matches_jax(jnp):
    x = np.array([1.25, 2.35, 125.0, -0.5, 1.5, 2.5, -17.75], np.float32)
    check_modes(lambda a: [pnp.round(a, d) for d in (-1, 0, 1, 2)],
                lambda a: [jnp.round(a, d) for d in (-1, 0, 1, 2)], x)


def test_round_to_decimals_of_float16_and_weak_types_match_jax(jax, jnp):
    """float16 is rescaled in float32, as JAX does (in float16, round(-2.994, 2) was -3.0);
    ``round`` with decimals and ``nan_to_num`` of weakly typed floats are strong (their
    constants take the dtype), as JAX's; ints pass through ``nan_to_num`` unchanged."""
    x = np.linspace(-3, 3, 2001).astype(np.float16)
    for d in (-1, 1, 2, 3):
        with jax.enable_x64(False):
            want = np.asarray(jnp.round(x, d))
        for got in (pnp.round(x, d), pto.jit(lambda a: pnp.round(a, d))(x)):
            assert np.asarray(got).dtype == np.float16
            np.testing.assert_array_equal(np.asarray(got), want)
    calls = [lambda m, v: m.round(v, 1), lambda m, v: m.round(v), lambda m, v: m.nan_to_num(v),
             lambda m, v: m.nan_to_num(v, nan=1.0, posinf=2), lambda m, v: m.nan_to_num(
                 m.full(2, 1))]
    for call in calls:
        with jax.enable_x64(False):
            want = call(jnp, jnp.full(3, 2.5))
        for got in (call(pnp, pnp.full(3, 2.5)), pto.jit(lambda v: call(pnp, v))(
                pnp.full(3, 2.5))):
            assert (got.dtype, got.weak_type) == (want.dtype, want.aval.weak_type)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_logaddexp_derivatives_match_jax_at_ties_and_infinities(jax, jnp):
    """JAX's rule: tangents weighted by exp(x_i - out), so a tie splits evenly (softplus'(0)
    is 1/2, softplus''(0) is 1/4) and infinities give JAX's values."""
    import ptojax as pto
    inf = float("inf")
    pairs = [(0.0, 0.0), (2.0, 1.0), (inf, 0.0), (-inf, 0.0), (-inf, -inf), (inf, inf),
             (3.0, -inf)]
    for name in ("logaddexp", "logaddexp2"):
        for a, b in pairs:
            got = pto.grad(getattr(pnp, name), (0, 1))(np.float32(a), np.float32(b))
            with jax.enable_x64(False):
                want = jax.grad(getattr(jnp, name), (0, 1))(np.float32(a), np.float32(b))
            np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-6)
    second = pto.grad(pto.grad(lambda x: pnp.logaddexp(x, 0.0)))(0.0)
    np.testing.assert_allclose(float(second), 0.25, rtol=1e-6)
    softplus_grad = pto.jit(pto.vmap(pto.grad(lambda x: pnp.logaddexp(x, 0.0))))
    np.testing.assert_allclose(np.asarray(softplus_grad(np.zeros(3, np.float32))), np.full(3, 0.5),
                               rtol=1e-6)


COMPOSITES = ["log2", "log10", "deg2rad", "rad2deg", "radians", "degrees", "sinc", "hypot",
              "heaviside", "logaddexp2"]


@pytest.mark.parametrize("name", COMPOSITES)
def test_composites_with_constants_match_jax_values_and_weak_types(jax, jnp, name):
    """Functions JAX builds from ops and constants of the operand's dtype: their values
    (hypot of huge, tiny, infinite and NaN sides without overflow) and their strongly typed
    results even of weakly typed operands (``full`` with a Python fill), eager and jit."""
    fn = lambda m: getattr(m, name)
    binary = name in ("hypot", "heaviside", "logaddexp2")
    a = np.float32([1e20, 3e-30, 0.0, np.inf, 3.0, -4.0, np.nan, -np.inf, 0.5])
    b = np.float32([1e20, 4e-30, 0.0, 1.0, np.nan, 3.0, np.inf, np.nan, -2.0])
    args = (a, b) if binary else (np.abs(a),)
    with jax.enable_x64(False):
        want = np.asarray(fn(jnp)(*args))
        want_weak = fn(jnp)(*[jnp.full(3, 0.5)] * len(args))
    for got in (fn(pnp)(*args), pto.jit(fn(pnp))(*args)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6)
    for got in (fn(pnp)(*[pnp.full(3, 0.5)] * len(args)),
                pto.jit(lambda *v: fn(pnp)(*v))(*[pnp.full(3, 0.5)] * len(args))):
        assert (got.dtype, got.weak_type) == (want_weak.dtype, want_weak.aval.weak_type)
