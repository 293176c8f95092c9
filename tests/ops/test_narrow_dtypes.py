"""JAX's narrow dtypes (ml_dtypes'): float8_e4m3, e3m4, e4m3fnuz, e5m2fnuz, e4m3b11fnuz,
e8m0fnu, float6_e2m3fn/e3m2fn, float4_e2m1fn, int1/2/4, uint1/2/4 — names, promotion (a
records table ported from JAX's lattice, checked against JAX live too), finfo/iinfo, casts
and the arithmetic JAX's CPU backend runs, eagerly and under jit, against JAX.

XLA:CPU does not compute everything on these types: float6 values and 1/2-bit integers are
refused or abort the process, so their values are compared with ml_dtypes' casts only."""
import warnings

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes
from ptojax.errors import TypePromotionError

NARROW_FLOATS = ["float8_e4m3", "float8_e3m4", "float8_e4m3fnuz", "float8_e5m2fnuz",
                 "float8_e4m3b11fnuz", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn",
                 "float6_e3m2fn", "float8_e4m3fn", "float8_e5m2"]
NARROW_INTS = ["int1", "int2", "int4", "uint1", "uint2", "uint4"]
STANDARD_INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]

# JAX's lattice for them (jnp.promote_types, JAX 0.10): each narrow type promotes to itself
# with the dtypes listed and with the weak Python scalars listed; any other pair has no
# common type (TypePromotionError).
PROMOTION_RECORDS = {
    **{f: {"dtypes": ["bool", *STANDARD_INTS], "weak": [bool, int, float]}
       for f in NARROW_FLOATS},
    **{i: {"dtypes": ["bool"], "weak": [bool, int]} for i in NARROW_INTS},
}

# the types whose arithmetic XLA:CPU runs (values compared with JAX)
# (one of each family: the float8s share ml_dtypes' code, the casts test covers them all)
COMPUTED_FLOATS = ["float8_e4m3", "float8_e4m3fnuz", "float4_e2m1fn"]
COMPUTED_INTS = ["int4", "uint4"]


def test_every_jax_numpy_dtype_name_exists(jnp):
    names = [n for n in NARROW_FLOATS + NARROW_INTS if hasattr(jnp, n)]
    assert names == NARROW_FLOATS + NARROW_INTS
    for name in names:
        assert pnp.dtype(getattr(pnp, name)) == jnp.dtype(getattr(jnp, name)) \
            == pnp.dtype(name)
        assert getattr(pnp, name).dtype == getattr(dtypes, name)


@pytest.mark.parametrize("name", NARROW_FLOATS + NARROW_INTS)
def test_promotion_follows_the_records(name):
    record = PROMOTION_RECORDS[name]
    for other in sorted(dtypes.SUPPORTED, key=str):
        if other.name in record["dtypes"] or other.name == name:
            assert pnp.promote_types(name, other) == np.dtype(name), other
            assert pnp.promote_types(other, name) == np.dtype(name), other
        else:
            with pytest.raises(TypePromotionError) as error:
                pnp.promote_types(name, other)
            assert isinstance(error.value, ValueError)   # as JAX's TypePromotionError
    x = pnp.zeros(2, name)
    for scalar in (True, 1, 1.0, 1j):
        if type(scalar) in record["weak"]:
            assert pnp.result_type(x, scalar) == np.dtype(name)
        else:
            with pytest.raises(TypePromotionError):
                pnp.result_type(x, scalar)


def test_records_are_jax_promotion(jax, jnp):
    for name, record in PROMOTION_RECORDS.items():
        for other in sorted(dtypes.SUPPORTED, key=str):
            try:
                theirs = jnp.promote_types(name, other)
            except jax.dtypes.TypePromotionError:
                theirs = None
            expected = np.dtype(name) if other.name in record["dtypes"] + [name] else None
            assert theirs == expected, (name, other)
        for scalar in (True, 1, 1.0, 1j):
            try:
                theirs = jnp.result_type(np.zeros(2, name), scalar)
            except jax.dtypes.TypePromotionError:
                theirs = None
            assert (theirs is not None) == (type(scalar) in record["weak"]), (name, scalar)


@pytest.mark.parametrize("name", NARROW_FLOATS)
def test_finfo_matches_jax(jnp, name):
    ours, theirs = pnp.finfo(name), jnp.finfo(name)
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_subnormal", "nmant", "nexp"):
        assert getattr(ours, field) == getattr(theirs, field), field


@pytest.mark.parametrize("name", NARROW_INTS)
def test_iinfo_matches_jax(jnp, name):
    ours, theirs = pnp.iinfo(name), jnp.iinfo(name)
    assert (ours.bits, ours.min, ours.max) == (theirs.bits, theirs.min, theirs.max)


_FLOAT_SAMPLES = np.array([0.0, -0.0, 0.3, 1.3, 2.5, -3.7, 6.0, 7.0, 100.0, -1e5, 1e30, 1e-3,
                           1e-8, np.inf, -np.inf, np.nan], np.float32)


def _same(ours, theirs, what):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, what
    np.testing.assert_array_equal(ours.astype(np.float32), theirs.astype(np.float32),
                                  err_msg=str(what))


@pytest.mark.parametrize("name", NARROW_FLOATS)
def test_casts_from_float32_round_as_jax(jnp, name):
    """Round to nearest even, saturating or NaN as the type has it (ml_dtypes, as XLA)."""
    if name.startswith("float6"):   # XLA:CPU has no float6: ml_dtypes is JAX's reference
        want = _FLOAT_SAMPLES.astype(name)
    else:
        want = jnp.asarray(_FLOAT_SAMPLES).astype(name)
    _same(pnp.asarray(_FLOAT_SAMPLES).astype(name), want, name)
    _same(pto.jit(lambda v: v.astype(name))(_FLOAT_SAMPLES), want, name)


@pytest.mark.parametrize("name", COMPUTED_INTS)
def test_integer_casts_saturate_floats_and_wrap_integers_as_jax(jnp, name):
    floats = np.array([7.6, -8.5, 100.0, -100.0, np.nan, 3.2], np.float32)
    ints = np.array([300, -300, 17, -9, 5], np.int32)
    for values in (floats, ints):
        want = jnp.asarray(values).astype(name)
        _same(pnp.asarray(values).astype(name), want, (name, values))
        _same(pto.jit(lambda v: v.astype(name))(values), want, (name, values))


def test_casts_between_narrow_types_match_jax(jax, jnp):
    values = np.array([0.25, 1.5, 2.0, 3.0, -0.5, 6.0], np.float32)
    sources = ["float4_e2m1fn", "float8_e4m3", "float8_e8m0fnu", "int4", "uint4"]
    targets = ["float8_e8m0fnu", "float4_e2m1fn", "float8_e4m3fnuz", "int4", "uint4",
               "float32", "bfloat16"]
    # XLA:CPU turns float4 6.0 into int4 7 and uint4 15: those two pairs are checked alone
    pairs = [(a, b) for a in sources for b in targets
             if not (a == "float4_e2m1fn" and b in ("int4", "uint4"))]

    def casts(m, v):
        return [v.astype(a).astype(b) for a, b in pairs]
    with jax.enable_x64(False):
        want = jax.jit(lambda v: casts(jnp, v))(values)
    for ours, theirs, pair in zip(casts(pnp, pnp.asarray(values)), want, pairs):
        _same(ours, theirs, pair)
    for target in ("int4", "uint4"):
        ours = pnp.asarray(values).astype("float4_e2m1fn").astype(target)
        assert np.asarray(ours).astype(np.float32)[-1] == 6


# not sum/cumsum/prod: JAX adds in the narrow type itself (each partial sum rounded), ptojax
# in float32 (dtypes.accumulates_in_f32), which is more accurate
def _float_ops(m):
    return lambda x: (x + x, x * 3, -x, x - 1, x / x, x // 2, x % 3, abs(x), m.maximum(x, 0),
                      x > 0, x == x, m.where(x > 0, x, 0), m.sign(x), m.square(x),
                      m.clip(x, -2, 2), m.max(x), m.min(x), m.sort(x), m.argmax(x), x @ x, x.reshape(2, 3)[1:], m.exp(x),
                      m.floor(x), x.astype(m.float32))


def _int_ops(m):
    return lambda x: (x + 1, x + x, x * 3, -x, x - x, x // 2, x % 3, x >> 1, x << 1, ~x,
                      x & x, m.maximum(x, x), x > 0, x == x, m.where(x > 0, x, x),
                      m.max(x), m.min(x), m.sort(x), x @ x, m.clip(x, -2, 2),
                      x.reshape(2, 3)[1:], m.concatenate([x, x]), x.astype(m.float32))


_INPUTS = {"float": [1.5, 2.0, 3.0, -0.5, 0.25, -3.0], "int": [7, -8, 3, -1, 0, 5],
           "uint": [15, 0, 3, 1, 8, 5]}


def _compare_ops(jax, jnp, name, ops):
    kind = "uint" if name.startswith("uint") else "int" if name.startswith("int") else "float"
    x = np.array(_INPUTS[kind], np.float32).astype(name)
    with warnings.catch_warnings(), jax.enable_x64(False):
        warnings.simplefilter("ignore")
        want = jax.jit(ops(jnp))(x)
    for mode, fn in (("eager", ops(pnp)), ("jit", pto.jit(ops(pnp)))):
        got = fn(pnp.asarray(x))
        for i, (o, t) in enumerate(zip(got, want)):
            if t.dtype == np.float32:   # exp of an exact value: numpy's and XLA's differ by an ulp
                np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)
                assert o.dtype == t.dtype
            else:
                _same(o, t, (name, mode, i))


@pytest.mark.parametrize("name", COMPUTED_FLOATS)
def test_float_arithmetic_matches_jax(jax, jnp, name):
    _compare_ops(jax, jnp, name, _float_ops)


@pytest.mark.parametrize("name", COMPUTED_INTS)
def test_integer_arithmetic_matches_jax(jax, jnp, name):
    if name == "uint4":   # XLA:CPU shifts uint4 right arithmetically (15 >> 1 == 15)
        assert np.asarray(pnp.asarray(np.array([15], np.uint8)).astype(name) >> 1)[0] == 7
    ops = _int_ops if name != "uint4" else (
        lambda m: lambda x: tuple(v for i, v in enumerate(_int_ops(m)(x)) if i != 7))
    _compare_ops(jax, jnp, name, ops)


def test_max_of_float8_without_inf_is_its_largest_value_not_nan(jnp):
    """Their max starts at the lowest finite value (-inf would be NaN in them)."""
    for name in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz", "float4_e2m1fn"):
        x = np.array([1.0, 2.0, -3.0], np.float32).astype(name)
        _same(pnp.max(x), jnp.max(x), name)
        _same(pnp.min(x), jnp.min(x), name)
        _same(pto.jit(pnp.max)(x), jnp.max(x), name)


@pytest.mark.parametrize("name", ["float8_e4m3", "float4_e2m1fn"])
def test_gradient_and_vmap_through_a_narrow_float(jax, jnp, name):
    x = np.array([0.3, 1.7, -2.2, 5.0], np.float32)
    w = np.array([0.7, -1.3, 2.9, 0.1], np.float32)

    def f(m):
        return lambda v: ((v * w).astype(name).astype(m.float32) * v).sum()
    np.testing.assert_allclose(pto.grad(f(pnp))(x), jax.grad(f(jnp))(x), rtol=1e-6)
    np.testing.assert_allclose(pto.jit(pto.grad(f(pnp)))(x), jax.grad(f(jnp))(x), rtol=1e-6)
    stacked = np.stack([x, 2 * x])
    _same(pto.vmap(lambda v: v.astype(name) * 2)(stacked),
          jax.vmap(lambda v: v.astype(name) * 2)(stacked), name)


@pytest.mark.parametrize("name", NARROW_INTS + ["float4_e2m1fn", "float6_e3m2fn"])
def test_bitcasts_of_sub_byte_types_are_refused(name):
    """JAX packs values narrower than a byte by their bit width; numpy keeps one a byte."""
    with pytest.raises(NotImplementedError, match="narrower than a byte"):
        pto.lax.bitcast_convert_type(pnp.zeros((2, 2), pnp.uint8), name)


@pytest.mark.parametrize("name", ["int1", "int2", "uint2", "float6_e2m3fn"])
def test_types_xla_cpu_cannot_compute_still_add_and_cast_here(name):
    """ptojax computes them with ml_dtypes (JAX's CPU backend refuses or aborts)."""
    values = np.array([1, 0, 1, 0], np.float32)
    x = pnp.asarray(values).astype(name)
    expected = (values.astype(name).astype(np.float32) * 2).astype(name)
    _same(x + x, expected, name)
    _same(pto.jit(lambda v: v + v)(x), expected, name)


@pytest.mark.parametrize("name", NARROW_FLOATS + NARROW_INTS + ["bfloat16"])
def test_issubdtype_and_isdtype_place_them_as_jax(jnp, name):
    for kind in (np.generic, np.number, np.inexact, np.floating, np.integer,
                 np.signedinteger, np.unsignedinteger):
        assert pnp.issubdtype(getattr(pnp, name), kind) == jnp.issubdtype(name, kind), kind
        assert pnp.issubdtype(name, kind) == jnp.issubdtype(name, kind), kind
    for kind in ("signed integer", "unsigned integer", "integral", "real floating",
                 "numeric"):
        assert pnp.isdtype(getattr(pnp, name), kind) == jnp.isdtype(name, kind), kind


# (dtype, Python scalar, JAX's result of array([1, 2], dtype) + scalar)
WEAK_SCALAR_RECORDS = [
    ("int4", 100, [5, 6]), ("int4", 9, [-6, -5]), ("uint4", -1, [0, 1]),
    ("float4_e2m1fn", 100.0, [6, 6]), ("float8_e4m3fn", 1e6, [np.nan, np.nan]),
    ("float8_e4m3", 1e6, [np.inf, np.inf]),
]


@pytest.mark.parametrize("name, scalar, expected", WEAK_SCALAR_RECORDS, ids=str)
def test_python_scalars_take_the_narrow_type_as_jax(name, scalar, expected):
    """A Python int wraps into the type, a float rounds (saturating or NaN as the type)."""
    x = pnp.array([1, 2], name)
    for out in (x + scalar, pto.jit(lambda v: v + scalar)(x)):
        assert out.dtype == np.dtype(name) and not out.weak_type
        np.testing.assert_array_equal(np.asarray(out).astype(np.float32), expected)


def test_weak_scalar_records_are_jax(jax, jnp):
    for name, scalar, expected in WEAK_SCALAR_RECORDS:
        out = jnp.array([1, 2], name) + scalar
        np.testing.assert_array_equal(np.asarray(out).astype(np.float32), expected)
