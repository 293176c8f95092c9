"""pto.nn.initializers against jax.nn.initializers on the same keys: values (exact where the
draws are bit-exact), shapes, dtypes, fans and the moments of large draws."""
import math

import numpy as np
import pytest

import ptojax as pto
from ptojax.nn import initializers as init
from ptojax.errors import DtypeError, ShapeError
from helpers import assert_close
from jax_golden import expected

FAMILY = ["glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal",
          "lecun_uniform", "lecun_normal", "he_uniform", "he_normal", "kaiming_uniform",
          "kaiming_normal"]
UNIFORM_DRAWS = {"glorot_uniform", "xavier_uniform", "lecun_uniform", "he_uniform",
                 "kaiming_uniform"}


def _family_makers():
    return [lambda lib, n=n: getattr(lib, n)() for n in FAMILY]


MODE_COMBOS = [(m, d) for m in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
               for d in ("truncated_normal", "normal", "uniform")]


def _mode_makers():
    return [lambda lib, m=m, d=d: lib.variance_scaling(0.7, m, d, in_axis=(0, 1), out_axis=-1,
                                                       batch_axis=2)
            for m, d in MODE_COMBOS]


SIMPLE = [("uniform", (3.0,)), ("normal", (2.0,)), ("truncated_normal", (2.0,)),
          ("constant", (-7.0,))]
# (key of the stored values, makers, shape, dtype, seed)
TABLES = [("init/family/6x5", _family_makers, (6, 5), np.float32, 0),
          ("init/family/3x3x4x8", _family_makers, (3, 3, 4, 8), np.float32, 0),
          ("init/modes", _mode_makers, (2, 3, 4, 5), np.float64, 1),
          *((f"init/{name}", lambda name=name, args=args: [
              lambda lib: getattr(lib, name)(*args)], (4, 3), np.float32, 0)
            for name, args in SIMPLE)]


def _inputs(shape, dtype, seed):
    """What the stored values depend on: the key's seed, the shape and the dtype."""
    return [np.array([seed, *shape]), np.zeros((), dtype)]


def _ours_and_theirs(key):
    _, makers, shape, dtype, seed = next(t for t in TABLES if t[0] == key)
    ours = [np.asarray(make(init)(pto.random.key(seed), shape, dtype)) for make in makers()]
    return ours, expected(key, _inputs(shape, dtype, seed))


@pytest.mark.parametrize("key", ["init/family/6x5", "init/family/3x3x4x8"])
def test_variance_scaling_family_matches_jax(key):
    ours, theirs = _ours_and_theirs(key)
    for name, o, t in zip(FAMILY, ours, theirs):
        assert o.shape == t.shape and o.dtype == np.float32
        if name in UNIFORM_DRAWS:  # uniform bits are JAX's bit for bit, and so is the scaling
            np.testing.assert_array_equal(o, t, err_msg=name)
        else:                      # erf_inv differs in the last ulps
            assert_close(o, t, rtol=1e-5, atol=1e-6)


def test_variance_scaling_modes_and_axes_match_jax():
    with pto.enable_x64(True):   # float64 draws (JAX's golden ones in x64 mode)
        ours, theirs = _ours_and_theirs("init/modes")
    for o, t in zip(ours, theirs):
        assert o.dtype == np.float64
        assert_close(o, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", [n for n, _ in SIMPLE])
def test_simple_initializers_match_jax(name):
    ours, theirs = _ours_and_theirs(f"init/{name}")
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py."""
    for key, makers, shape, dtype, seed in TABLES:
        def draw(*_, makers=makers, shape=shape, dtype=dtype, seed=seed):
            return jax.jit(lambda k: [make(jax.nn.initializers)(k, shape, dtype)
                                      for make in makers()])(jax.random.PRNGKey(seed))
        yield key, _inputs(shape, dtype, seed), draw


def test_zeros_ones_and_default_dtypes():
    key = pto.random.key(0)
    assert_close(init.zeros(key, (2, 3)), np.zeros((2, 3), np.float32))
    assert_close(init.ones(key, (2,), np.float16), np.ones(2, np.float16))
    assert init.glorot_normal(dtype=np.float16)(key, (4, 4)).dtype == np.float16
    with pytest.warns(UserWarning, match="float64 .* not available"):   # as JAX without x64
        assert init.constant(1.5, np.float64)(key, 3).dtype == np.float32
    with pto.enable_x64(True):
        assert init.constant(1.5, np.float64)(key, 3).dtype == np.float64


@pytest.mark.parametrize("name, std", [("he_normal", math.sqrt(2 / 256)),
                                       ("glorot_uniform", math.sqrt(2 / (256 + 128))),
                                       ("lecun_normal", math.sqrt(1 / 256))])
def test_large_draws_have_the_target_moments(name, std):
    w = np.asarray(getattr(init, name)()(pto.random.key(3), (256, 128)), np.float64)
    assert abs(w.mean()) < 4 * std / math.sqrt(w.size)
    assert abs(w.std() / std - 1) < 0.02


def test_truncated_normal_stays_inside_its_bounds():
    w = np.asarray(init.truncated_normal(1.0, lower=-1.0, upper=0.5)(pto.random.key(4),
                                                                      (4000,)))
    assert w.min() > -1.0 and w.max() < 0.5


def test_initializers_trace_under_jit():
    fn = pto.jit(lambda key: init.he_uniform()(key, (8, 4)))
    np.testing.assert_array_equal(fn(pto.random.key(5)), init.he_uniform()(pto.random.key(5),
                                                                            (8, 4)))


def test_initializers_reject_bad_input():
    key = pto.random.key(0)
    with pytest.raises(ShapeError, match="in_axis"):
        init.glorot_uniform()(key, (5,))
    with pytest.raises(DtypeError, match="floating"):
        init.normal()(key, (2, 2), np.int32)
    with pytest.raises(ValueError, match="mode"):
        init.variance_scaling(1.0, "fan_sum", "normal")
    with pytest.raises(ValueError, match="distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")


COMPLEX_MAKERS = {
    "glorot_uniform": lambda lib: lib.glorot_uniform(),
    "he_normal": lambda lib: lib.he_normal(),
    "lecun_normal truncated": lambda lib: lib.variance_scaling(1.0, "fan_in",
                                                               "truncated_normal"),
    "normal": lambda lib: lib.normal(0.5),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_MAKERS))
def test_complex_initializers_match_jax(jax, name):
    """A complex dtype: a complex normal, a uniform disk, a normal of truncated modulus, each
    scaled to the family's variance, as JAX's."""
    make = COMPLEX_MAKERS[name]
    got = make(init)(pto.random.key(3), (4, 5), np.complex64)
    with jax.enable_x64(False):
        want = make(jax.nn.initializers)(jax.random.key(3), (4, 5), np.complex64)
    assert_close(got, np.asarray(want), rtol=2e-5, atol=2e-5)


def test_a_dtype_of_the_wrong_kind_is_a_value_error_as_jax(jax):
    for dtype in (np.int32, np.bool_):
        with pytest.raises(ValueError):
            jax.nn.initializers.glorot_uniform()(jax.random.key(0), (2, 2), dtype)
        with pytest.raises(ValueError, match="variance_scaling"):
            init.glorot_uniform()(pto.random.key(0), (2, 2), dtype)


def test_every_jax_initializer_exists(jax):
    ours = {n for n in dir(init) if not n.startswith("_")}
    not_here = {"Initializer"}  # a type
    assert {n for n in dir(jax.nn.initializers) if not n.startswith("_")} - not_here <= ours


@pytest.mark.parametrize("shape,column_axis", [((3, 3), -1), ((4, 6), -1), ((6, 4), -1),
                                               ((2, 3, 4), -1), ((2, 3, 4), 0)])
def test_orthogonal_matches_jax(jax, shape, column_axis):
    got = init.orthogonal(2.0, column_axis)(pto.random.key(1), shape)
    with jax.enable_x64(False):
        want = jax.nn.initializers.orthogonal(2.0, column_axis)(jax.random.key(1), shape)
    assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-5)
    flat = np.moveaxis(np.asarray(got), column_axis, -1).reshape(-1, shape[column_axis]) / 2
    gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(gram, np.eye(len(gram)), atol=1e-5)


@pytest.mark.parametrize("shape,column_axis", [((3, 4, 4), -1), ((3, 2, 3, 5), -1),
                                               ((2, 3, 1, 4, 4), -2)])
def test_delta_orthogonal_matches_jax(jax, shape, column_axis):
    got = init.delta_orthogonal(1.5, column_axis)(pto.random.key(2), shape)
    with jax.enable_x64(False):
        want = jax.nn.initializers.delta_orthogonal(1.5, column_axis)(jax.random.key(2), shape)
    assert got.dtype == want.dtype
    assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-5)


def test_delta_orthogonal_rejects_bad_shapes():
    with pytest.raises(ShapeError, match="3-, 4- or 5-D"):
        init.delta_orthogonal()(pto.random.key(0), (3, 3))
    with pytest.raises(ShapeError, match="fan_in <= fan_out"):
        init.delta_orthogonal()(pto.random.key(0), (3, 5, 4))


def test_orthogonal_rejects_vectors():
    with pytest.raises(ShapeError, match="at least 2"):
        init.orthogonal()(pto.random.key(0), (3,))
