"""pto.nn against jax.nn (values, gradients, special values, low precision) and under jit/vmap.

JAX references are computed once per dtype/axis with one ``jax.jit`` call, to keep compile
time down."""
import math

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
import ptojax.random
import ptojax.tree_util
from ptojax import nn
from ptojax.errors import AxisError
from helpers import assert_close, tol

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

DTYPES = ["float32", "float64", "float16", "bfloat16"]
ACTIVATIONS = [("relu", {}), ("sigmoid", {}), ("silu", {}), ("swish", {}), ("softplus", {}),
               ("log_sigmoid", {}), ("elu", {}), ("elu", {"alpha": 0.5}), ("leaky_relu", {}),
               ("leaky_relu", {"negative_slope": 0.2}), ("gelu", {"approximate": True}),
               ("gelu", {"approximate": False}), ("identity", {}), ("relu6", {}),
               ("soft_sign", {}), ("squareplus", {}), ("squareplus", {"b": 1.5}),
               ("sparse_plus", {}), ("sparse_sigmoid", {}), ("mish", {}), ("tanh", {}),
               ("celu", {}), ("celu", {"alpha": 0.5}), ("selu", {}), ("hard_tanh", {}),
               ("hard_sigmoid", {}), ("hard_silu", {}), ("hard_swish", {}), ("log1mexp", {})]
ACTIVATION_IDS = [f"{n}{kw or ''}" for n, kw in ACTIVATIONS]


def _activation_inputs(dtype):
    rng = np.random.default_rng(0)
    edges = [0.0, -0.0, 1e-3, -1e-3, 12.0, -12.0, 30.0, -30.0]
    return np.concatenate([rng.normal(size=48) * 4, edges]).astype(dtype)


def _low_precision_tol(dtype):
    return tol(dtype, 4 if np.dtype(dtype).itemsize == 2 else 1)


@pytest.fixture(scope="module")
def jax_activations(jax):
    """dtype -> [jax.nn activation of the inputs, in ACTIVATIONS order]."""
    cache = {}

    def compute(dtype):
        if dtype not in cache:
            fn = jax.jit(lambda x: [getattr(jax.nn, n)(x, **kw) for n, kw in ACTIVATIONS])
            cache[dtype] = [np.asarray(v) for v in fn(_activation_inputs(dtype))]
        return cache[dtype]
    return compute


# activations ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index", range(len(ACTIVATIONS)), ids=ACTIVATION_IDS)
def test_activation_matches_jax(jax_activations, index, dtype):
    name, kwargs = ACTIVATIONS[index]
    x = _activation_inputs(dtype)
    r = _low_precision_tol(dtype)
    assert_close(getattr(nn, name)(x, **kwargs), jax_activations(dtype)[index], rtol=r, atol=r)


def test_activations_of_special_values_match_jax(jax):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
    expected = jax.jit(lambda v: [getattr(jax.nn, n)(v, **kw) for n, kw in ACTIVATIONS])(x)
    for (name, kwargs), theirs in zip(ACTIVATIONS, expected):
        assert_close(getattr(nn, name)(x, **kwargs), theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("index", range(len(ACTIVATIONS)), ids=ACTIVATION_IDS)
def test_activation_under_jit_matches_eager(index):
    name, kwargs = ACTIVATIONS[index]
    fn = getattr(nn, name)
    x = _activation_inputs("float32")
    assert_close(pto.jit(lambda v: fn(v, **kwargs))(x), fn(x, **kwargs))


def test_exact_gelu_tail_is_accurate_in_absolute_terms():
    x = np.linspace(-12.0, 0.0, 2001).astype(np.float32)
    exact = [0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)]
    assert_close(nn.gelu(x, approximate=False), np.asarray(exact, np.float32), rtol=0,
                 atol=1e-7)


def test_modules_are_exported():
    assert (pto.nn, pto.random, pto.tree_util) == (nn, ptojax.random, ptojax.tree_util)


def test_activation_dtypes():
    ints = np.array([-2, 0, 3], np.int32)
    assert nn.relu(ints).dtype == np.int32
    np.testing.assert_array_equal(nn.relu(ints), [0, 0, 3])
    assert nn.sigmoid(ints).dtype == np.float32
    assert nn.gelu(np.ones(3, np.float16)).dtype == np.float16


@pytest.mark.parametrize("index", range(len(ACTIVATIONS)), ids=ACTIVATION_IDS)
def test_activation_gradient_matches_jax(jax, index):
    name, kwargs = ACTIVATIONS[index]
    x = np.array([-3.0, -1.0, -0.25, 0.5, 2.0, 7.0])  # away from kinks
    ours = pto.grad(lambda v: pnp.sum(getattr(nn, name)(v, **kwargs)))(x)
    theirs = jax.jit(jax.grad(lambda v: getattr(jax.nn, name)(v, **kwargs).sum()))(x)
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_relu_gradient_at_zero_is_zero(jax):
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    ours = pto.grad(lambda v: pnp.sum(nn.relu(v)))(x)
    np.testing.assert_array_equal(ours, [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(ours, jax.jit(jax.grad(lambda v: jax.nn.relu(v).sum()))(x))


# softmax, log_softmax, logsumexp -------------------------------------------------------------
SOFTMAX_CASES = [("float32", -1), ("float32", 0), ("float32", (0, 2)), ("float32", None),
                 ("float64", -1), ("float16", -1), ("bfloat16", 1)]


def _softmax_family(lib, x, axis):
    return [lib.nn.softmax(x, axis=axis), lib.nn.log_softmax(x, axis=axis),
            lib.nn.logsumexp(x, axis=axis), lib.nn.logsumexp(x, axis=axis, keepdims=True)]


@pytest.mark.parametrize("dtype, axis", SOFTMAX_CASES)
def test_softmax_family_matches_jax(jax, dtype, axis):
    x = (np.random.default_rng(1).normal(size=(3, 4, 5)) * 3).astype(dtype)
    expected = jax.jit(lambda v: _softmax_family(jax, v, axis))(x)
    r = _low_precision_tol(dtype)
    for ours, theirs in zip(_softmax_family(pto, x, axis), expected):
        assert_close(ours, theirs, rtol=r, atol=r)


def test_softmax_family_is_stable_for_large_and_infinite_inputs(jax):
    x = np.random.default_rng(2).normal(size=(5, 6)).astype(np.float32) * 1e4
    x[1] = -np.inf                        # a fully masked row
    x[2, :3] = -np.inf                    # a partly masked row
    x[3, 4] = np.inf
    expected = jax.jit(lambda v: _softmax_family(jax, v, -1))(x)
    for ours, theirs in zip(_softmax_family(pto, x, -1), expected):
        assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    lse = np.asarray(nn.logsumexp(x, axis=-1))
    assert lse[1] == -np.inf and lse[3] == np.inf and np.isfinite(lse[[0, 2, 4]]).all()
    np.testing.assert_array_equal(np.asarray(nn.softmax(x))[2, :3], 0.0)
    assert np.isfinite(np.asarray(nn.log_softmax(x))[[0, 4]]).all()


def test_logsumexp_with_weights_and_sign_matches_jax(jax):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(4, 6))
    b = rng.normal(size=(4, 6))
    for kwargs in ({"axis": 1}, {"axis": 0, "keepdims": True}, {"axis": None}):
        expected = jax.jit(lambda a, b: (jax.nn.logsumexp(a, b=b, return_sign=True, **kwargs),
                                         jax.nn.logsumexp(a, b=b, **kwargs)))(a, b)
        (j_out, j_sign), j_nan_if_negative = expected
        out, sign = nn.logsumexp(a, b=b, return_sign=True, **kwargs)
        assert_close(out, j_out)
        assert_close(sign, j_sign)
        assert_close(nn.logsumexp(a, b=b, **kwargs), j_nan_if_negative)


def test_logsumexp_default_reduces_all_axes():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = nn.logsumexp(x)
    assert out.shape == ()
    assert_close(out, np.float32(np.log(np.exp(np.arange(6.0)).sum())))


def test_softmax_family_rejects_bad_axis():
    with pytest.raises(AxisError):
        nn.softmax(np.ones((2, 3), np.float32), axis=2)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_gradient_matches_jax(jax, name):
    rng = np.random.default_rng(4)
    x, w = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    ours = pto.grad(lambda v: pnp.sum(getattr(nn, name)(v, axis=0) * w))(x)
    theirs = jax.jit(jax.grad(lambda v: (getattr(jax.nn, name)(v, axis=0) * w).sum()))(x)
    assert_close(ours, theirs)


def test_logsumexp_gradient_is_softmax_and_ignores_masked_entries(jax):
    x = np.array([[1.0, 2.0, -np.inf], [1e3, 1e3 + 1, 1e3 - 1]])
    ours = pto.grad(lambda v: pnp.sum(nn.logsumexp(v, axis=1)))(x)
    theirs = jax.jit(jax.grad(lambda v: jax.nn.logsumexp(v, axis=1).sum()))(x)
    assert_close(ours, theirs)
    assert ours[0, 2] == 0.0


def test_softmax_under_jit_and_vmap():
    x = np.random.default_rng(5).normal(size=(4, 7)).astype(np.float32)
    rows = np.stack([np.asarray(nn.softmax(row)) for row in x])
    assert_close(pto.vmap(nn.softmax)(x), rows)
    assert_close(pto.jit(nn.softmax, static_argnames="axis")(x, axis=0), nn.softmax(x, axis=0))
    assert "stop_gradient" in str(pto.make_ir(nn.softmax)(x))


# one_hot -------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_one_hot_matches_jax(jax, axis, dtype):
    labels = np.array([[0, 2, -1], [3, 1, 5]], np.int32)  # -1 and 5 are out of range
    ours = nn.one_hot(labels, 4, dtype=dtype, axis=axis)
    assert_close(ours, jax.nn.one_hot(labels, 4, dtype=dtype, axis=axis))


@pytest.mark.usefixtures("ptojax_default_mode")   # the default float32 result
def test_one_hot_traces_and_rejects_bad_axis():
    labels = np.array([1, 0, 2], np.int32)
    assert_close(pto.jit(lambda v: nn.one_hot(v, 3))(labels), np.eye(3, dtype=np.float32)[labels])
    with pytest.raises(AxisError):
        nn.one_hot(labels, 3, axis=2)


# normalization -------------------------------------------------------------------------------
def _layer_norm_reference(x, scale, bias, axis, eps):
    x = np.asarray(x, np.float64)
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


@pytest.mark.parametrize("algorithm", ["stable", "fast"])
@pytest.mark.parametrize("axis", [-1, (0, 2)])
def test_standardize_matches_jax(jax, algorithm, axis):
    x = np.random.default_rng(6).normal(loc=2.0, size=(3, 4, 5)).astype(np.float32)
    assert_close(nn.standardize(x, axis=axis, algorithm=algorithm),
                 jax.nn.standardize(x, axis=axis, algorithm=algorithm), rtol=1e-5, atol=1e-5)


def test_standardize_with_given_statistics_matches_jax(jax):
    x = np.random.default_rng(7).normal(size=(4, 6))
    mean, variance = np.full((4, 1), 0.5), np.full((4, 1), 2.0)
    assert_close(nn.standardize(x, mean=mean, variance=variance, epsilon=1e-3),
                 jax.nn.standardize(x, mean=mean, variance=variance, epsilon=1e-3))
    with pytest.raises(ValueError, match="algorithm"):
        nn.standardize(x, algorithm="other")


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_matches_reference(dtype):
    rng = np.random.default_rng(8)
    x = (rng.normal(size=(6, 16)) * 3 + 1).astype(dtype)
    scale, bias = rng.normal(size=16).astype(dtype), rng.normal(size=16).astype(dtype)
    out = nn.layer_norm(x, scale, bias)
    assert out.dtype == np.dtype(dtype)
    expected = _layer_norm_reference(x, scale.astype(np.float64), bias.astype(np.float64), -1,
                                     1e-5)
    r = _low_precision_tol(dtype)
    assert_close(out, expected.astype(dtype), rtol=r, atol=r)


def test_layer_norm_over_several_axes_without_affine(jax):
    x = np.random.default_rng(9).normal(size=(2, 3, 4)).astype(np.float32)
    out = nn.layer_norm(x, axis=(-2, -1), eps=1e-3)
    assert_close(out, jax.nn.standardize(x, axis=(-2, -1), epsilon=1e-3, algorithm="stable"),
                 rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_matches_reference(dtype):
    rng = np.random.default_rng(10)
    x = (rng.normal(size=(5, 12)) * 2).astype(dtype)
    scale = rng.normal(size=12).astype(dtype)
    out = nn.rms_norm(x, scale)
    assert out.dtype == np.dtype(dtype)
    x64 = x.astype(np.float64)
    expected = x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * scale.astype(
        np.float64)
    r = _low_precision_tol(dtype)
    assert_close(out, expected.astype(dtype), rtol=r, atol=r)


def test_normalization_of_constant_rows_is_finite():
    x = np.full((2, 8), 3.0, np.float32)
    np.testing.assert_array_equal(nn.layer_norm(x), 0.0)
    assert np.isfinite(np.asarray(nn.rms_norm(np.zeros((2, 8), np.float32)))).all()


def test_layer_norm_gradient_matches_jax(jax):
    rng = np.random.default_rng(11)
    x, scale, bias = rng.normal(size=(3, 6)), rng.normal(size=6), rng.normal(size=6)
    w = rng.normal(size=(3, 6))

    def jax_layer_norm(x, scale, bias):
        return jax.nn.standardize(x, epsilon=1e-5, algorithm="stable") * scale + bias

    ours = pto.grad(lambda *a: pnp.sum(nn.layer_norm(*a) * w), argnums=(0, 1, 2))(x, scale,
                                                                                   bias)
    theirs = jax.jit(jax.grad(lambda *a: (jax_layer_norm(*a) * w).sum(),
                              argnums=(0, 1, 2)))(x, scale, bias)
    for o, t in zip(ours, theirs):
        assert_close(o, t)


def test_rms_norm_gradient_matches_jax(jax):
    rng = np.random.default_rng(12)
    x, scale, w = rng.normal(size=(3, 6)), rng.normal(size=6), rng.normal(size=(3, 6))
    jnp = jax.numpy

    def jax_rms_norm(x, scale):
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * scale

    ours = pto.grad(lambda *a: pnp.sum(nn.rms_norm(*a) * w), argnums=(0, 1))(x, scale)
    theirs = jax.jit(jax.grad(lambda *a: jnp.sum(jax_rms_norm(*a) * w),
                              argnums=(0, 1)))(x, scale)
    for o, t in zip(ours, theirs):
        assert_close(o, t)


def test_normalizations_under_jit():
    x = np.random.default_rng(13).normal(size=(4, 8)).astype(np.float16)
    scale = np.ones(8, np.float16)
    assert_close(pto.jit(nn.layer_norm)(x, scale), nn.layer_norm(x, scale))
    assert_close(pto.jit(nn.rms_norm)(x, scale), nn.rms_norm(x, scale))


# glu, logmeanexp, where masks, named one_hot --------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0])
def test_glu_matches_jax(jax, axis):
    x = np.random.default_rng(14).normal(size=(4, 6)).astype(np.float32)
    assert_close(nn.glu(x, axis=axis), jax.nn.glu(x, axis=axis))
    assert_close(pto.jit(lambda v: nn.glu(v, axis))(x), jax.nn.glu(x, axis=axis))
    with pytest.raises(ValueError, match="even"):
        nn.glu(np.ones((3, 5), np.float32))


@pytest.mark.parametrize("kwargs", [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True}])
def test_logmeanexp_matches_jax(jax, kwargs):
    x = np.random.default_rng(15).normal(size=(2, 3, 4))
    where = np.random.default_rng(16).random((2, 3, 4)) > 0.3
    assert_close(nn.logmeanexp(x, **kwargs), jax.nn.logmeanexp(x, **kwargs))
    assert_close(nn.logmeanexp(x, where=where, **kwargs),
                 jax.nn.logmeanexp(x, where=where, **kwargs))


def _masked_family(lib, x, where, axis):
    return [lib.nn.softmax(x, axis=axis, where=where),
            lib.nn.log_softmax(x, axis=axis, where=where),
            lib.nn.logsumexp(x, axis=axis, where=where),
            lib.nn.standardize(x, axis=axis, where=where, algorithm="stable")]


@pytest.mark.parametrize("axis", [-1, (0, 1)])
def test_where_masks_match_jax(jax, axis):
    rng = np.random.default_rng(17)
    x = rng.normal(size=(3, 5)).astype(np.float32)
    where = rng.random((3, 5)) > 0.4
    where[0] = False  # a fully masked row
    expected = jax.jit(lambda v, w: _masked_family(jax, v, w, axis))(x, where)
    for ours, theirs in zip(_masked_family(pto, x, where, axis), expected):
        assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    grads = pto.grad(lambda v: pnp.sum(nn.softmax(v, where=where) * x))(x)
    jax_grads = jax.grad(lambda v: (jax.nn.softmax(v, where=where) * x).sum())(x)
    assert_close(grads, jax_grads, rtol=1e-5, atol=1e-6)


def test_logsumexp_leaves_out_zero_weights(jax):
    a = np.array([1.0, np.inf, 2.0])
    b = np.array([1.0, 0.0, 2.0])
    assert_close(nn.logsumexp(a, b=b), jax.nn.logsumexp(a, b=b))
    assert np.isfinite(float(nn.logsumexp(a, b=b)))


def test_one_hot_over_a_named_axis(jax):
    labels = np.array([2, 0, 1, 2], np.int32)
    ours = pto.vmap(lambda v: nn.one_hot(v, 4, axis="i", dtype=np.float32), axis_name="i")(labels)
    theirs = jax.vmap(lambda v: jax.nn.one_hot(v, 4, axis="i", dtype=np.float32), axis_name="i")(labels)
    assert_close(ours, theirs)
    with pytest.raises(ValueError, match="size 4"):
        pto.vmap(lambda v: nn.one_hot(v, 3, axis="i"), axis_name="i")(labels)


def test_every_jax_nn_function_exists(jax):
    ours = {n for n in dir(nn) if not n.startswith("_")}
    theirs = {n for n in dir(jax.nn) if not n.startswith("_") and callable(getattr(jax.nn, n))}
    assert theirs - ours == set()
