"""``wofz``, ``sici``, ``fresnel``, ``bessel_jn`` and ``hyp1f1`` against ``jax.scipy.special``
on the same inputs (JAX's test ranges plus the edges of each approximation), float32 and
float64: values, dtypes and weak types, derivatives under ``vmap``, and ``jit``. JAX's side
is one jitted program per dtype, its values stored by jax_golden.py (compiling JAX's
programs is slow on a busy machine)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from jax_golden import expected as stored

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

TOL = {np.float32: 2e-6, np.float64: 1e-13}
COMPLEX = {np.float32: np.complex64, np.float64: np.complex128}

SICI_X = np.array([0.0, 1e-3, 0.5, 1.0, 3.9, 4.0, 4.1, 7.9, 8.0, 8.1, 20.0, 1e5, 1e9, 2e9,
                   1e12, np.inf, -np.inf, -3.0, -10.0, np.nan])
FRESNEL_X = np.array([0.0, 1e-3, 0.5, 1.0, 1.6, 1.61, 2.0, 5.0, 9.9, 20.0, 1e3, 4e4, 1e6,
                      np.inf, -np.inf, -3.0, -10.0, np.nan])
GRAD_X = np.array([1e-3, 0.5, 1.0, 1.61, 3.0, 4.1, 7.9, 8.1, 20.0, -3.0, -10.0])
WOFZ_Z = np.array([0, 1, 1 + 1j, -2 + 0.5j, 3 - 4j, 0.1 - 0.01j, 10 + 10j, -7 - 0.2j, 1e-3j,
                   30 + 1j, -0.5 + 6j])
WOFZ_GRAD_X = np.array([-2.0, 0.0, 0.5, 3.0])
BESSEL_Z = np.array([[0.1, 1.0, 2.5], [5.0, 10.0, 20.0]])
_rng = np.random.default_rng(0)
HYP1F1_ABX = np.concatenate([_rng.uniform(0.5, 30, (3, 12)),        # JAX's test range
                             np.array([[0.0, 2.0, 1.5, 3.0, 0.7], [1.0, 2.0, 0.0, 4.0, 1.3],
                                       [2.0, 3.0, 1.0, 150.0, -5.0]])], axis=1)


def _jax_reference(jax):
    import jax.scipy.special as jsp

    def each(f):
        return jax.vmap(jax.grad(f))

    def reference(x, grad_x, z, wofz_x, bessel_z, a, b, c):
        return dict(
            sici=jsp.sici(x[0]), fresnel=jsp.fresnel(x[1]),
            sici_grad=each(lambda v: sum(jsp.sici(v)))(grad_x),
            fresnel_grad=each(lambda v: sum(jsp.fresnel(v)))(grad_x),
            wofz=jsp.wofz(z), wofz_grad=each(lambda v: jsp.wofz(v).imag)(wofz_x),
            bessel_jn=jsp.bessel_jn(bessel_z, v=4),
            bessel_jn_grad=jax.grad(lambda v: jsp.bessel_jn(v, v=2)[2])(bessel_z[1, 0]),
            hyp1f1=jsp.hyp1f1(a, b, c),
            hyp1f1_grad=[jax.vmap(jax.grad(jsp.hyp1f1, argnums=i))(a[:12], b[:12], c[:12])
                         for i in range(3)])
    return reference


# the number of leaves of each of reference's values, in the order of their names
LEAVES = {"bessel_jn": 1, "bessel_jn_grad": 1, "fresnel": 2, "fresnel_grad": 1, "hyp1f1": 1,
          "hyp1f1_grad": 3, "sici": 2, "sici_grad": 1, "wofz": 1, "wofz_grad": 1}


def _inputs(dtype):
    x = np.stack([np.resize(SICI_X, 20), np.resize(FRESNEL_X, 20)])
    return (x.astype(dtype), GRAD_X.astype(dtype), WOFZ_Z.astype(COMPLEX[dtype]),
            WOFZ_GRAD_X.astype(dtype), BESSEL_Z.astype(dtype),
            *HYP1F1_ABX.astype(dtype))


@pytest.fixture(scope="module")
def expected():
    """JAX's values (stored by jax_golden.py: compiling the program took 4-5 s a dtype), as
    the dict reference returns."""
    def get(dtype):
        leaves = iter(stored(f"special-more/{np.dtype(dtype).name}", list(_inputs(dtype))))
        return {name: next(leaves) if n == 1 else [next(leaves) for _ in range(n)]
                for name, n in LEAVES.items()}
    return get


def _sum_of(name):
    return lambda v: sum(getattr(pto.scipy.special, name)(v))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("row, name", [(0, "sici"), (1, "fresnel")])
def test_sici_fresnel_match_jax(expected, row, name, dtype):
    x, grad_x = (pnp.asarray(a) for a in _inputs(dtype)[:2])
    assert_close(getattr(pto.scipy.special, name)(x[row]), expected(dtype)[name],
                 rtol=TOL[dtype], atol=1e-30)
    assert_close(pto.vmap(pto.grad(_sum_of(name)))(grad_x), expected(dtype)[name + "_grad"],
                 rtol=TOL[dtype] * 10, atol=TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wofz_matches_jax(expected, dtype):
    z, wofz_x = (pnp.asarray(a) for a in _inputs(dtype)[2:4])
    tol = 1e-6 if dtype == np.float32 else 1e-13
    assert_close(pto.scipy.special.wofz(z), expected(dtype)["wofz"], rtol=tol, atol=tol)
    grad = pto.vmap(pto.grad(lambda v: pto.scipy.special.wofz(v).imag))(wofz_x)
    assert_close(grad, expected(dtype)["wofz_grad"], rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bessel_jn_matches_jax(expected, dtype):
    z = pnp.asarray(_inputs(dtype)[4])
    tol = TOL[dtype] * 10
    assert_close(pto.scipy.special.bessel_jn(z, v=4), expected(dtype)["bessel_jn"], rtol=tol,
                 atol=TOL[dtype])   # NaN where float32 overflows (small z), as JAX
    jitted = pto.jit(lambda v: pto.scipy.special.bessel_jn(v, v=4))
    assert_close(jitted(z), expected(dtype)["bessel_jn"], rtol=tol, atol=TOL[dtype])
    grad = pto.grad(lambda v: pto.scipy.special.bessel_jn(v, v=2)[2])(z[1, 0])
    # JAX's float32 derivative through the recurrence is off (-0.82 for J_2'(5) = -0.346):
    # compare float32 with JAX's float64 value
    assert_close(grad, expected(np.float64)["bessel_jn_grad"].astype(dtype), rtol=tol * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hyp1f1_matches_jax(expected, dtype):
    a, b, x = (pnp.asarray(v) for v in _inputs(dtype)[5:])
    assert_close(pto.scipy.special.hyp1f1(a, b, x), expected(dtype)["hyp1f1"],
                 rtol=TOL[dtype] * 5, atol=0)
    for i, want in enumerate(expected(dtype)["hyp1f1_grad"]):
        got = pto.vmap(pto.grad(pto.scipy.special.hyp1f1, argnums=i))(a[:12], b[:12], x[:12])
        assert_close(got, want, rtol=TOL[dtype] * 1e3, atol=0)


def test_errors():
    with pytest.raises(NotImplementedError, match="complex"):
        pto.scipy.special.fresnel(pnp.ones(2, pnp.complex64))
    with pytest.raises(ValueError, match="real-valued"):
        pto.scipy.special.sici(pnp.ones(2, pnp.complex64))
    with pytest.raises(ValueError, match="complex"):
        pto.scipy.special.hyp1f1(1.0, 2.0, pnp.ones(2, pnp.complex64))
    with pytest.raises(ValueError, match="complex"):
        pto.scipy.special.bessel_jn(pnp.ones(2, pnp.complex64), v=1)
    with pytest.raises(TypeError, match="v"):
        pto.scipy.special.bessel_jn(pnp.ones(2), v=1.5)


RESULT_TYPE_CASES = [("hyp1f1", (1.0, 2.0, 0.5)), ("sici", (1.5,)), ("fresnel", (0.5,)),
                     ("wofz", (0.5,)), ("sici", (np.arange(3),)), ("fresnel", (np.int32(2),))]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: the values of
    test_result_types_match_jax's cases, called as the test calls them (Python scalars)."""
    for dtype in (np.float32, np.float64):
        def values(*inputs):
            out = jax.jit(_jax_reference(jax))(*inputs)
            assert sorted(out) == list(LEAVES) and all(
                len(jax.tree_util.tree_leaves(out[k])) == n for k, n in LEAVES.items())
            return jax.tree_util.tree_leaves(out)
        yield f"special-more/{np.dtype(dtype).name}", list(_inputs(dtype)), values
    for i, (name, args) in enumerate(RESULT_TYPE_CASES):
        yield (f"special-more/result-types/{i}-{name}", [np.asarray(a) for a in args],
               lambda *_, name=name, args=args: jax.tree_util.tree_leaves(
                   getattr(jax.scipy.special, name)(*args)))


def test_result_types_match_jax(jax):
    """Python scalars (weak), integers (promoted) and bfloat16 (fresnel in float32): JAX's
    types from tracing its functions (jax.eval_shape), its values stored by jax_golden.py
    (compiling each of JAX's functions eagerly took 1-2 s)."""
    for i, (name, args) in enumerate(RESULT_TYPE_CASES):
        got = pto.tree_util.tree_leaves(getattr(pto.scipy.special, name)(*args))
        types = jax.tree_util.tree_leaves(
            jax.eval_shape(lambda: getattr(jax.scipy.special, name)(*args)))
        values = stored(f"special-more/result-types/{i}-{name}", [np.asarray(a) for a in args])
        assert len(got) == len(types) == len(values), name
        for g, t, w in zip(got, types, values):
            assert (g.dtype, g.aval.weak_type) == (t.dtype, t.weak_type), name
            assert w.dtype == t.dtype, name
            assert_close(g, w, rtol=1e-13, atol=0)


def test_jit_matches_eager():
    x = pnp.linspace(0.1, 12.0, 7)
    for name in ("sici", "fresnel", "wofz"):
        fn = getattr(pto.scipy.special, name)
        assert_close(pto.jit(fn)(x), fn(x))
    assert_close(pto.jit(pto.scipy.special.hyp1f1)(1.5, 2.5, x),
                 pto.scipy.special.hyp1f1(1.5, 2.5, x))


def test_float64_values_match_scipy():
    """The same functions (and hyp2f1) against SciPy in float64 where the algorithms are
    accurate (``|x| <= 10`` for the Cephes fits; ``x >= -0.8`` for 2F1, whose Taylor series
    stops at 250 terms, as JAX's, and loses digits towards ``x = -1``)."""
    special = pytest.importorskip("scipy.special")
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-10, 10, 30), [0.0, 1e-3, 4.0, 8.0, 50.0, 1e3]])
    si, ci = pto.scipy.special.sici(pnp.asarray(x))
    want_si, want_ci = special.sici(np.abs(x))
    assert_close(si, np.sign(x) * want_si, rtol=1e-14, atol=1e-300)
    assert_close(ci, want_ci, rtol=1e-14, atol=1e-300)   # Ci(|x|): the real part, as JAX
    assert_close(pto.scipy.special.fresnel(pnp.asarray(x)), special.fresnel(x), rtol=1e-14,
                 atol=1e-300)
    z = rng.uniform(-8, 8, 30) + 1j * rng.uniform(-8, 8, 30)
    assert_close(pto.scipy.special.wofz(pnp.asarray(z)), special.wofz(z), rtol=1e-12)
    zz = rng.uniform(3, 30, 20)
    assert_close(pto.scipy.special.bessel_jn(pnp.asarray(zz), v=5),
                 np.stack([special.jv(v, zz) for v in range(6)]), rtol=0, atol=1e-9)
    a, b, c = rng.uniform(0.5, 30, (3, 30))
    assert_close(pto.scipy.special.hyp1f1(*map(pnp.asarray, (a, b, c))),
                 special.hyp1f1(a, b, c), rtol=1e-13)
    a, b, c = rng.uniform(0.5, 10, (3, 30))
    x = rng.uniform(-0.8, 0.999, 30)
    assert_close(pto.scipy.special.hyp2f1(*map(pnp.asarray, (a, b, c, x))),
                 special.hyp2f1(a, b, c, x), rtol=1e-11)
