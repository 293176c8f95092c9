"""pto.mixed_precision: policies (casts of float leaves only, compute dtype in the IR, f32
gradients for f32 params), dynamic loss scaling (grow, shrink, skip a non-finite step, under
jit, in an fp16 training loop), and casts with rounding="nearest_even" | "stochastic" and
overflow="inf" | "saturate" (stochastic rounding: always a neighbour, unbiased within a
tolerance derived from the standard error, deterministic per key)."""
import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import mixed_precision as mp
from helpers import assert_close

BF16, F16, F32 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16), np.dtype(np.float32)
E4M3, E5M2 = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)
NARROW_FLOATS = [BF16, F16, E4M3, E5M2]


# --- policies --------------------------------------------------------------------------------
def test_get_policy_parses_names_and_abbreviations():
    p = mp.get_policy("params=float32,compute=bfloat16,output=float32")
    assert (p.param_dtype, p.compute_dtype, p.output_dtype) == (F32, BF16, F32)
    assert mp.get_policy("p=f32,c=f16,o=f16") == mp.Policy(F32, F16, F16)
    assert mp.get_policy("c=bf16") == mp.Policy(F32, BF16, F32)
    assert mp.get_policy("bfloat16") == mp.Policy(BF16, BF16, BF16)
    assert mp.get_policy(str(p)) == p
    with pytest.raises(pto.errors.ConfigError, match="cannot read"):
        mp.get_policy("params=float32,speed=fast")
    with pytest.raises(pto.errors.DtypeError, match="floating-point"):
        mp.Policy(F32, np.int8, F32)


def _mlp(params, x):
    h = pto.nn.relu(x @ params["w1"] + params["b1"])
    return h @ params["w2"], params["steps"]


def _params(rng):
    return {"w1": rng.normal(size=(8, 16)).astype(F32), "b1": np.zeros(16, F32),
            "w2": rng.normal(size=(16, 3)).astype(F32), "steps": np.int32(7)}


def test_policy_casts_float_leaves_only_and_computes_in_the_compute_dtype():
    rng = np.random.default_rng(0)
    params, x = _params(rng), rng.normal(size=(4, 8)).astype(F32)
    policy = mp.get_policy("params=float32,compute=bfloat16,output=float32")
    cast = policy.cast_to_compute(params)
    assert cast["w1"].dtype == BF16 and cast["steps"].dtype == np.int32
    out, steps = policy.apply(_mlp)(params, x)
    assert out.dtype == F32 and steps.dtype == np.int32
    ir = pto.make_ir(policy.apply(_mlp))(params, x)
    dots = [e for e in ir.eqns if e.prim.name == "dot_general"]
    assert dots and all(e.inputs[0].type.dtype == BF16 for e in dots)
    ref = _mlp(policy.cast_to_compute(params), x.astype(BF16))[0].astype(F32)
    assert_close(out, ref)


def test_gradients_of_a_policy_applied_loss_are_in_the_param_dtype():
    rng = np.random.default_rng(1)
    params, x = _params(rng), rng.normal(size=(4, 8)).astype(F32)
    policy = mp.get_policy("c=f16")

    def loss(p):
        out, _ = policy.apply(_mlp)(p, x)
        return pnp.mean(out ** 2)

    grads = pto.grad(loss, allow_int=True)(params)
    assert grads["w1"].dtype == F32 and grads["w2"].dtype == F32
    f32_grads = pto.grad(lambda p: pnp.mean(_mlp(p, x)[0] ** 2), allow_int=True)(params)
    assert_close(grads["w2"], f32_grads["w2"], rtol=2e-2, atol=2e-2)


# --- loss scaling ----------------------------------------------------------------------------
def test_dynamic_loss_scale_grows_after_period_finite_steps_and_halves_on_overflow():
    s = mp.DynamicLossScale(pnp.asarray(2.0 ** 10), period=3)
    for _ in range(2):
        s = s.adjust(pnp.asarray(True))
    assert float(s.loss_scale) == 2.0 ** 10 and int(s.counter) == 2
    s = s.adjust(pnp.asarray(True))
    assert float(s.loss_scale) == 2.0 ** 11 and int(s.counter) == 0
    s = s.adjust(pnp.asarray(True)).adjust(pnp.asarray(False))
    assert float(s.loss_scale) == 2.0 ** 10 and int(s.counter) == 0
    floor = mp.DynamicLossScale(pnp.asarray(1.0), min_loss_scale=1.0)
    assert float(floor.adjust(pnp.asarray(False)).loss_scale) == 1.0


def test_scale_unscale_and_all_finite():
    tree = {"a": np.array([1.0, 2.0], F16), "n": np.int32(3)}
    s = mp.StaticLossScale(4.0)
    scaled = s.scale(tree)
    assert scaled["a"].dtype == F16 and scaled["n"] == 3
    assert_close(s.unscale(scaled)["a"], tree["a"])
    assert bool(mp.all_finite(tree))
    assert not bool(mp.all_finite({"a": np.array([1.0, np.inf], F32)}))
    assert not bool(mp.all_finite([np.array([np.nan], BF16)]))
    assert mp.NoOpLossScale().scale(tree) is tree


def _fp16_step(policy):
    @pto.jit
    def step(params, scale, x, y):
        def loss(p):
            out = policy.apply(lambda p, x: x @ p)(p, x)
            return pnp.mean((out - y) ** 2)

        grads = pto.grad(lambda p: scale.scale(loss(p)))(params)
        grads = scale.unscale(grads)
        finite = mp.all_finite(grads)
        new = mp.select_tree(finite, params - 0.1 * grads, params)
        return new, scale.adjust(finite), finite
    return step


def test_fp16_training_skips_steps_whose_gradients_overflow_and_recovers():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(32, 4)).astype(F32)
    w_true = rng.normal(size=(4, 1)).astype(F32)
    y = x @ w_true
    params = np.zeros((4, 1), F32)
    step = _fp16_step(mp.get_policy("c=f16"))
    scale = mp.DynamicLossScale(pnp.asarray(2.0 ** 20), period=1000)   # f16 overflows
    skipped = 0
    for _ in range(40):
        new, scale, finite = step(params, scale, x, y)
        if not bool(finite):
            skipped += 1
            assert_close(new, params)              # the step was skipped
        params = new
    assert skipped >= 1
    assert float(scale.loss_scale) < 2.0 ** 20
    assert np.mean((x @ np.asarray(params) - y) ** 2) < 0.1 * np.mean(y ** 2)


# --- casts -----------------------------------------------------------------------------------
def _inputs(rng, n=5000):
    x = rng.normal(size=n).astype(F32) * np.exp(rng.uniform(-8, 8, n)).astype(F32)
    return np.concatenate([x, [0.0, -0.0, 1e-30, np.nan, np.inf, -np.inf, 1e6, -1e6]]
                          ).astype(F32)


@pytest.mark.parametrize("dtype", NARROW_FLOATS, ids=str)
def test_nearest_even_cast_is_astype(dtype):
    x = _inputs(np.random.default_rng(3))
    got = np.asarray(mp.cast(x, dtype))
    assert got.dtype == dtype
    with np.errstate(over="ignore", invalid="ignore"):      # numpy warns where IEEE rounds
        want = x.astype(dtype).astype(np.float64)
    np.testing.assert_array_equal(got.astype(np.float64), want)


@pytest.mark.parametrize("dtype", NARROW_FLOATS, ids=str)
def test_saturating_cast_clamps_overflow_and_keeps_nan(dtype):
    big = float(ml_dtypes.finfo(dtype).max)
    over = min(4 * big, 3.4e38)                     # beyond the dtype, within float32
    x = np.array([over, -over, np.inf, -np.inf, np.nan, 1.0], F32)
    got = np.asarray(mp.cast(x, dtype, overflow="saturate")).astype(np.float64)
    np.testing.assert_array_equal(got[:4], [big, -big, big, -big])
    assert np.isnan(got[4]) and got[5] == 1.0
    inf = np.asarray(mp.cast(x[:1], dtype, overflow="inf")).astype(np.float64)
    assert not np.isfinite(inf[0])                 # inf, or NaN for e4m3fn (no inf)


def test_integer_casts_round_half_to_even_and_saturate():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 300.0, -300.0, np.nan], F32)
    got = np.asarray(mp.cast(x, np.int8))
    np.testing.assert_array_equal(got, [0, 2, 2, 0, -2, 127, -128, 0])


def _neighbours(x, dtype):
    """The dtype values just below and above each |x| (finite, in range)."""
    bits = np.arange(2 ** (8 * dtype.itemsize), dtype=f"u{dtype.itemsize}").view(dtype)
    with np.errstate(invalid="ignore"):
        values = bits.astype(np.float64)
    grid = np.unique(values[np.isfinite(values)])
    i = np.searchsorted(grid, x.astype(np.float64), "right") - 1
    return grid[i], grid[np.minimum(i + 1, len(grid) - 1)]


@pytest.mark.parametrize("dtype", NARROW_FLOATS, ids=str)
def test_stochastic_cast_picks_a_neighbour_and_repeats_per_key(dtype):
    rng = np.random.default_rng(4)
    limit = min(100.0, float(ml_dtypes.finfo(dtype).max) / 2)
    x = rng.uniform(-limit, limit, 3000).astype(F32)
    key = pto.random.key(0)
    got = np.asarray(mp.cast(x, dtype, rounding="stochastic", key=key)).astype(np.float64)
    lo, hi = _neighbours(x, dtype)
    assert ((got == lo) | (got == hi)).all()
    again = np.asarray(pto.jit(lambda v, k: mp.cast(v, dtype, rounding="stochastic", key=k))(
        x, key)).astype(np.float64)
    np.testing.assert_array_equal(got, again)
    other = np.asarray(mp.cast(x, dtype, rounding="stochastic", key=pto.random.key(1)))
    assert (other.astype(np.float64) != got).any()


@pytest.mark.parametrize("dtype", NARROW_FLOATS + [np.dtype(np.int8)], ids=str)
def test_stochastic_rounding_is_unbiased(dtype):
    """Each of a few values is rounded n times (one key, n copies); the mean must lie within
    6 standard errors of the value: sd = spacing * sqrt(p (1 - p)), the Bernoulli deviation
    of choosing hi with probability p. With a fixed key the test is deterministic."""
    n = 20000
    for value in (0.3, 1.0 + 1.0 / 3.0, -2.7):
        x = np.full(n, value, F32)
        got = np.asarray(mp.cast(x, dtype, rounding="stochastic", key=pto.random.key(7)))
        got = got.astype(np.float64)
        if dtype.kind == "i":
            lo, hi = np.floor(x[:1].astype(np.float64)), np.floor(x[:1]) + 1.0
        else:
            lo, hi = _neighbours(x[:1], dtype)
        p = (float(x[0]) - lo[0]) / (hi[0] - lo[0])
        stderr = (hi[0] - lo[0]) * np.sqrt(p * (1 - p) / n)
        assert abs(got.mean() - float(x[0])) <= 6 * stderr + 1e-12, (dtype, value)
        nearest = float(x[0].astype(dtype)) if dtype.kind == "f" else np.round(x[0])
        assert nearest != float(x[0])               # the value is not representable


def test_cast_errors_and_gradient():
    x = np.array([1.0, 2.0], F32)
    with pytest.raises(ValueError, match="needs a key"):
        mp.cast(x, BF16, rounding="stochastic")
    with pytest.raises(ValueError, match="rounding must be"):
        mp.cast(x, BF16, rounding="toward_zero")
    with pytest.raises(ValueError, match="overflow must be"):
        mp.cast(x, BF16, overflow="wrap")
    g = pto.grad(lambda v: pnp.sum(mp.cast(v, BF16, rounding="stochastic",
                                           key=pto.random.key(0)).astype(F32)))(x)
    assert_close(g, np.ones(2, F32))
