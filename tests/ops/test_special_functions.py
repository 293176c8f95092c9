"""erfc, lgamma and digamma against JAX (values, non-finite inputs, gradients, batching), and
the tile expansions of erfc, lgamma and erf_inv: tiled kernels match the untiled program within the
expansions' measured float32 bounds, in the numpy tile interpreter and compiled for the host."""
import math

import numpy as np
import pytest

import ptojax as pto
from ptojax import lax
from ptojax.lower.host.backend import CpuBackend, HostExecutable
from ptojax.lower.host.compiler import compiler_or_none
from helpers import assert_close
from jax_golden import expected as stored

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

SPECIAL = ["erfc", "lgamma", "digamma"]
EDGES = [0.0, 1.0, 2.0, -1.0, -2.0, 0.5, -0.5, 1e-8, -1e-8, -3.5, 30.0, 1e30, np.inf, -np.inf,
         np.nan]
# float32 bounds of the tile expansions, measured over [-20, 20] and the tails
ERFC_ULP = 8          # normal results; subnormal tails flush the way float32 exp does
LGAMMA_SCALED = 4e-6  # |error| <= 4e-6 * max(1, |lgamma(x)|)


def _inputs(dtype, n=4000):
    rng = np.random.default_rng(0)
    return np.concatenate([rng.uniform(-20, 20, n), rng.uniform(0.5, 3, n // 4),
                           EDGES]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", SPECIAL)
def test_values_match_jax(name, dtype, jax, jnp):
    x = _inputs(dtype)
    ours = np.asarray(getattr(lax, name)(x))
    theirs = np.asarray(getattr(jax.lax, name)(jnp.asarray(x)))
    assert ours.dtype == theirs.dtype
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(ours[~finite & ~np.isnan(theirs)],
                                  theirs[~finite & ~np.isnan(theirs)])
    scale = np.maximum(np.abs(theirs[finite]), 1.0)
    rtol = 1e-11 if dtype == np.float64 else 4e-6   # XLA's float32 kernels: a few ulp
    assert np.max(np.abs(ours[finite] - theirs[finite]) / scale) < rtol


@pytest.mark.parametrize("name", SPECIAL)
def test_gradients_and_second_derivatives_match_jax(name, jax):
    x = np.linspace(0.3, 7.0, 23)
    f, jf = getattr(lax, name), getattr(jax.lax, name)
    assert_close(pto.grad(lambda v: f(v).sum())(x), jax.grad(lambda v: jf(v).sum())(x),
                 rtol=1e-9)
    assert_close(pto.vmap(pto.grad(pto.grad(f)))(x), jax.vmap(jax.grad(jax.grad(jf)))(x),
                 rtol=1e-7)


def test_gradients_on_the_negative_axis_use_the_reflection(jax):
    x = np.array([-0.3, -1.7, -2.5, -4.2])
    for name in ("lgamma", "digamma"):
        f, jf = getattr(lax, name), getattr(jax.lax, name)
        assert_close(pto.vmap(pto.grad(f))(x), jax.vmap(jax.grad(jf))(x), rtol=1e-8)


@pytest.mark.parametrize("name", SPECIAL)
def test_vmap_matches_a_loop(name):
    x = _inputs(np.float32, 40)[:48].reshape(6, 8)
    f = getattr(lax, name)
    out = pto.vmap(f, in_axes=1)(x)
    np.testing.assert_array_equal(np.asarray(out), np.stack([f(x[:, i]) for i in range(8)]))


def _tiled_error(name, x, tiled):
    e = np.array([getattr(math, "erfc" if name == "erfc" else "lgamma")(float(v))
                  if np.isfinite(v) and not (name == "lgamma" and v <= 0 and v == int(v))
                  else np.nan for v in x])
    ours = np.asarray(getattr(lax, name)(x))
    t = np.asarray(tiled)
    defined = np.isfinite(ours)
    np.testing.assert_array_equal(t[~defined], ours[~defined])
    if name == "erfc":
        normal = defined & (e > np.finfo(np.float32).tiny)
        return np.max(np.abs(t[normal] - e[normal]) / np.spacing(np.float32(e[normal])))
    return np.max(np.abs(t[defined] - e[defined]) / np.maximum(np.abs(e[defined]), 1.0))


@pytest.mark.usefixtures("ptojax_default_mode")
@pytest.mark.parametrize("name, bound", [("erfc", ERFC_ULP), ("lgamma", LGAMMA_SCALED)])
def test_tile_expansions_stay_within_their_bounds(name, bound):
    x = _inputs(np.float32)
    tiled = pto.tile(getattr(lax, name))
    closed = pto.make_ir(tiled)(x)
    assert [e.prim.name for e in closed.eqns] == ["tile_kernel"]
    assert _tiled_error(name, x, tiled(x)) <= bound


@pytest.mark.usefixtures("ptojax_default_mode")
@pytest.mark.parametrize("name", ["erfc", "lgamma"])
def test_low_precision_expansions_compute_in_float32(name):
    x = _inputs(np.float16, 400)
    x = x[np.isfinite(x) & (np.abs(x) < 100)]
    tiled = np.asarray(pto.tile(getattr(lax, name))(x))
    exact = np.asarray(getattr(lax, name)(x.astype(np.float32))).astype(np.float16)
    ok = np.isfinite(exact)
    np.testing.assert_allclose(tiled[ok].astype(np.float32), exact[ok].astype(np.float32),
                               rtol=2e-3, atol=2e-3)


def test_float64_is_not_expanded_and_says_why():
    lowered = pto.jit(lax.erfc).lower(np.ones(64), target="ascend910b")
    assert "erfc of f64 has no tile form" in str(lowered.unfused())


@pytest.mark.usefixtures("ptojax_default_mode")
@pytest.mark.skipif(compiler_or_none() is None, reason="needs a C++ compiler")
@pytest.mark.parametrize("name, bound", [("erfc", ERFC_ULP), ("lgamma", LGAMMA_SCALED)])
def test_host_kernels_of_the_expansions_stay_within_their_bounds(name, bound):
    x = _inputs(np.float32)
    executable = HostExecutable(pto.make_ir(getattr(lax, name))(x),
                                CpuBackend(min_elements=1, tiered=False))
    assert executable.status == "compiled"
    (out,) = executable(x)
    assert _tiled_error(name, x, out) <= bound


ERF_INV_ULP = 4       # Giles' float32 approximation vs the float64 impl, over [-1, 1]
ERF_INV_EDGES = [1.0, -1.0, 1.5, -2.0, np.inf, np.nan, 0.0, -0.0, 1 - 2 ** -24, 1e-30]


def _erf_inv_error(x, tiled):
    """The largest float32 ulp distance of ``tiled`` from the float64 erf_inv; the values it
    does not define (+-inf at +-1, NaN beyond) exactly as the impl."""
    exact = np.asarray(lax.erf_inv(x.astype(np.float64))).astype(np.float32)
    t = np.asarray(tiled)
    defined = np.isfinite(exact) & (exact != 0)
    np.testing.assert_array_equal(t[~defined], exact[~defined])
    return np.max(np.abs(t[defined] - exact[defined].astype(np.float64)) /
                  np.spacing(np.abs(exact[defined])))


def _erf_inv_inputs():
    rng = np.random.default_rng(2)
    return np.concatenate([rng.uniform(-1, 1, 3000), 1 - np.geomspace(1e-7, 0.5, 300),
                           ERF_INV_EDGES]).astype(np.float32)


def test_erf_inv_expansion_is_giles_approximation_within_its_bound():
    x = _erf_inv_inputs()
    tiled = pto.tile(lax.erf_inv)
    assert [e.prim.name for e in pto.make_ir(tiled)(x).eqns] == ["tile_kernel"]
    assert _erf_inv_error(x, tiled(x)) <= ERF_INV_ULP
    x16 = x.astype(np.float16)
    np.testing.assert_array_equal(np.asarray(tiled(x16)),
                                  np.asarray(tiled(x16.astype(np.float32))).astype(np.float16))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_narrow_erf_inv_is_the_float64_value_rounded(jax, dtype):
    """float32/float16 erf_inv (Giles' double-precision polynomials, no Newton step) rounds
    to the Newton-refined float64 impl's value and to JAX's float64 erf_inv's, over every
    4099th positive float32 bit pattern below 1 and its negation, the edges and the tails."""
    pos = np.arange(0, 0x3F800000, 4099, dtype=np.uint32).view(np.float32)
    x = np.concatenate([pos, -pos, _erf_inv_inputs()]).astype(dtype)
    got = np.asarray(lax.erf_inv(x))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.asarray(lax.erf_inv(x.astype(np.float64))).astype(dtype))
    with np.errstate(invalid="ignore"):
        jax_f64 = np.asarray(jax.lax.erf_inv(x.astype(np.float64))).astype(dtype)
    np.testing.assert_array_equal(got, jax_f64)
    square = np.resize(_erf_inv_inputs().astype(dtype), (96, 96))[::2].T  # tails, edges
    np.testing.assert_array_equal(np.asarray(lax.erf_inv(square)),
                                  np.asarray(lax.erf_inv(square.ravel())).reshape(square.shape))


@pytest.mark.skipif(compiler_or_none() is None, reason="needs a C++ compiler")
@pytest.mark.parametrize("kernels", ["fused", "pto"])
def test_host_kernels_of_erf_inv_stay_within_its_bound(kernels):
    x = _erf_inv_inputs()
    executable = HostExecutable(pto.make_ir(lax.erf_inv)(x),
                                CpuBackend(min_elements=1, tiered=False, kernels=kernels))
    assert executable.status == "compiled"
    (out,) = executable(x)
    assert _erf_inv_error(x, out) <= ERF_INV_ULP


@pytest.mark.usefixtures("ptojax_default_mode")
def test_expansions_lower_to_pto_vector_instructions():
    text = pto.jit(lax.lgamma).lower(np.ones((16, 64), np.float32)).as_text("pto")
    for op in ("pto.tlog", "pto.tdiv", "pto.tsel", "pto.tcvt"):
        assert op in text


# incomplete gamma and beta, exponentially scaled Bessel functions --------------------------------
def _gamma_operands(dtype):
    rng = np.random.default_rng(1)
    a = np.concatenate([rng.uniform(0.01, 30, 300), [0.0, 1.0, 2.0, -1.0, np.inf, 1.0, 0.5,
                                                     0.0, 3.0, np.nan]])
    x = np.concatenate([rng.uniform(0, 40, 300), [1.0, 0.0, np.inf, 1.0, 1.0, -1.0, 0.0, 0.0,
                                                  np.inf, 1.0]])
    return a.astype(dtype), x.astype(dtype)


def _assert_like_jax(ours, theirs, rtol):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(ours[~finite & ~np.isnan(theirs)],
                                  theirs[~finite & ~np.isnan(theirs)])
    scale = np.maximum(np.abs(theirs[finite]), 1.0)
    assert np.max(np.abs(ours[finite] - theirs[finite]) / scale) < rtol


GAMMA = ("igamma", "igammac", "igamma_grad_a")


GRADIENT_OPERANDS = [np.linspace(0.5, 6, 12), np.linspace(0.2, 9, 12),   # a, x
                     np.linspace(0.7, 4, 12), np.linspace(0.05, 0.95, 12)]  # b, t


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py (JAX's compiles of the
    incomplete gamma and beta loops take seconds)."""
    for dtype in (np.float32, np.float64):
        yield (f"ops-special/incomplete-gamma/{np.dtype(dtype).name}", list(_gamma_operands(
            dtype)), jax.jit(lambda u, v: [getattr(jax.lax, n)(u, v) for n in GAMMA]))
    yield "ops-special/gradients", GRADIENT_OPERANDS, jax.jit(lambda a, x, b, t: [
        *jax.grad(lambda u, v: jax.lax.igamma(u, v).sum(), (0, 1))(a, x),
        jax.grad(lambda v: jax.lax.betainc(a, b, v).sum())(t)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_incomplete_gamma_matches_jax_with_its_edge_values(dtype):
    """Against JAX's values stored by jax_golden.py."""
    a, x = _gamma_operands(dtype)
    theirs = stored(f"ops-special/incomplete-gamma/{np.dtype(dtype).name}", [a, x])
    rtol = 1e-10 if dtype == np.float64 else 2e-5
    for name, expected in zip(GAMMA, theirs):
        _assert_like_jax(getattr(lax, name)(a, x), expected, rtol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_betainc_matches_jax_with_its_edge_values(dtype, jax):
    rng = np.random.default_rng(2)
    a = np.concatenate([rng.uniform(0.05, 20, 500), [1, 0, 2, -1, 1, 1, 0.5, 0, np.inf, 2]])
    b = np.concatenate([rng.uniform(0.05, 20, 500), [1, 1, 0, 1, 1, 1, 0.5, 0, 1, np.inf]])
    x = np.concatenate([rng.uniform(0, 1, 500), [0.5, 0.5, 0.5, 0.5, 0, 1, 1.5, 0.5, 0.5, 0.5]])
    a, b, x = (v.astype(dtype) for v in (a, b, x))
    _assert_like_jax(lax.betainc(a, b, x), jax.lax.betainc(a, b, x),
                     1e-10 if dtype == np.float64 else 2e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["bessel_i0e", "bessel_i1e"])
def test_scaled_bessel_functions_match_jax(name, dtype, jax):
    x = np.concatenate([_inputs(dtype), np.linspace(-50, 50, 101), [19.999, 20.001, 1e4,
                                                                    -1e4]]).astype(dtype)
    _assert_like_jax(getattr(lax, name)(x), getattr(jax.lax, name)(x),
                     1e-13 if dtype == np.float64 else 2e-6)


def test_incomplete_gamma_and_beta_gradients_match_jax():
    """igammac's rule is igamma's negated (checked against finite differences in
    tests/autodiff): JAX's compilation of these loops is slow, so igamma alone here (JAX's
    values stored by jax_golden.py)."""
    a, x, b, t = GRADIENT_OPERANDS
    *want_igamma, want_betainc = stored("ops-special/gradients", GRADIENT_OPERANDS)
    assert_close(pto.grad(lambda u, v: lax.igamma(u, v).sum(), (0, 1))(a, x),
                 tuple(want_igamma), rtol=1e-8)
    assert_close(pto.grad(lambda v: lax.betainc(a, b, v).sum())(t), want_betainc, rtol=1e-9)
    with pytest.raises(pto.errors.UnsupportedError, match="with respect to a and b"):
        pto.grad(lambda u: lax.betainc(u, b, t).sum())(a)


def test_bessel_gradients_match_jax_including_zero(jax):
    x = np.concatenate([np.linspace(-30, 30, 41), [0.0, 1e-20]])
    for name in ("bessel_i0e", "bessel_i1e"):
        f, jf = getattr(lax, name), getattr(jax.lax, name)
        assert_close(pto.vmap(pto.grad(f))(x), jax.vmap(jax.grad(jf))(x), rtol=1e-9)
