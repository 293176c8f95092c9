"""pto.nn.initializers against jax.nn.initializers on the same keys: values (exact where the
draws are bit-exact), shapes, dtypes, fans and the moments of large draws."""
import math

import numpy as np
import pytest

import ptojax as pto
from ptojax.nn import initializers as init
from ptojax.errors import DtypeError, ShapeError
from helpers import assert_close

FAMILY = ["glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal",
          "lecun_uniform", "lecun_normal", "he_uniform", "he_normal", "kaiming_uniform",
          "kaiming_normal"]
UNIFORM_DRAWS = {"glorot_uniform", "xavier_uniform", "lecun_uniform", "he_uniform",
                 "kaiming_uniform"}


def _both(jax, makers, shape, dtype=np.float32, seed=0):
    """Each maker's initializer drawn with pto and with JAX (all JAX draws in one jit)."""
    ours = [np.asarray(make(init)(pto.random.key(seed), shape, dtype)) for make in makers]
    theirs = jax.jit(lambda key: [make(jax.nn.initializers)(key, shape, dtype)
                                  for make in makers])(jax.random.PRNGKey(seed))
    return ours, [np.asarray(t) for t in theirs]


@pytest.mark.parametrize("shape", [(6, 5), (3, 3, 4, 8)])
def test_variance_scaling_family_matches_jax(jax, shape):
    ours, theirs = _both(jax, [lambda lib, n=n: getattr(lib, n)() for n in FAMILY], shape)
    for name, o, t in zip(FAMILY, ours, theirs):
        assert o.shape == shape and o.dtype == np.float32
        if name in UNIFORM_DRAWS:  # uniform bits are JAX's bit for bit, and so is the scaling
            np.testing.assert_array_equal(o, t, err_msg=name)
        else:                      # erf_inv differs in the last ulps
            assert_close(o, t, rtol=1e-5, atol=1e-6)


def test_variance_scaling_modes_and_axes_match_jax(jax):
    combos = [(m, d) for m in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
              for d in ("truncated_normal", "normal", "uniform")]
    makers = [lambda lib, m=m, d=d: lib.variance_scaling(0.7, m, d, in_axis=(0, 1),
                                                         out_axis=-1, batch_axis=2)
              for m, d in combos]
    ours, theirs = _both(jax, makers, (2, 3, 4, 5), np.float64, seed=1)
    for o, t in zip(ours, theirs):
        assert o.dtype == np.float64
        assert_close(o, t, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name, args", [("uniform", (3.0,)), ("normal", (2.0,)),
                                        ("truncated_normal", (2.0,)),
                                        ("constant", (-7.0,))])
def test_simple_initializers_match_jax(jax, name, args):
    ours, theirs = _both(jax, [lambda lib: getattr(lib, name)(*args)], (4, 3))
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_zeros_ones_and_default_dtypes(jax):
    key = pto.random.key(0)
    assert_close(init.zeros(key, (2, 3)), np.zeros((2, 3), np.float32))
    assert_close(init.ones(key, (2,), np.float16), np.ones(2, np.float16))
    assert init.glorot_normal(dtype=np.float16)(key, (4, 4)).dtype == np.float16
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


def test_initializers_trace_under_jit(jax):
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


def test_every_jax_initializer_exists(jax):
    ours = {n for n in dir(init) if not n.startswith("_")}
    not_here = {"Initializer", "orthogonal", "delta_orthogonal"}  # no QR yet
    assert {n for n in dir(jax.nn.initializers) if not n.startswith("_")} - not_here <= ours
