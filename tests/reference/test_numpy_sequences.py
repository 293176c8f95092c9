"""Sequences, polynomials, products and windows of ptojax.numpy against jax.numpy: diff,
ediff1d, gradient, trapezoid, unwrap, interp, convolve, correlate, poly*, vander, vecdot,
matvec, vecmat, cross, kron, logspace, geomspace, meshgrid(sparse), window functions, and the
scalar types (pnp.float32(3) ...) — eagerly, under jit and through make_ir's IR; gradients
and vmap for a sample."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes
from ptojax.eval.array import Array
from pnp_reference import (check_grad, check_modes_against, check_vmap, jax_table, random_array,
                           stored, table_inputs)


def _check_stored(key, calls, args, **kw):
    """``calls(pnp, *args)`` in every mode against JAX's ``calls(jnp, *args)``, stored by
    jax_golden.py under ``key`` (see jax_reference_tables)."""
    check_modes_against(lambda *xs: calls(pnp, *xs), stored(key, args, calls), *args, **kw)


def _difference_calls(m, x, t):
    return [m.diff(x), m.diff(x, n=2, axis=0), m.diff(x, prepend=1.0, append=x[:, :1]),
            m.diff(x, n=0), m.ediff1d(x), m.ediff1d(x, to_begin=-1, to_end=np.array([2, 3])),
            m.gradient(x[0]), *m.gradient(x), m.gradient(x, 2.0, axis=1),
            *m.gradient(x, t[:3], t, axis=(0, 1)), m.trapezoid(x), m.trapezoid(x, dx=0.5, axis=0),
            m.trapezoid(x, t), m.trapezoid(x, x, axis=1),
            m.unwrap(x * 3), m.unwrap(x, discont=1.0, axis=0, period=2.5)]


DIFFERENCE_DTYPES = [dtypes.float32, dtypes.int32]


def _difference_args(dtype):
    rng = np.random.default_rng(0)
    x = random_array(rng, (3, 5), dtype)
    return [x, np.cumsum(rng.uniform(0.5, 1.5, size=5)).astype(np.float32)]


@pytest.mark.parametrize("dtype", DIFFERENCE_DTYPES, ids=str)
def test_differences_and_integrals_match_jax(dtype):
    _check_stored(f"numpy-sequences/differences/{dtype}", _difference_calls,
                  _difference_args(dtype))


def _interp_args():
    rng = np.random.default_rng(1)
    xp = np.cumsum(rng.uniform(0.1, 1.0, size=8)).astype(np.float32)
    fp = rng.normal(size=8).astype(np.float32)
    return [rng.uniform(-1, 7, size=(3, 4)).astype(np.float32), xp, fp]


def _interp_calls(m, a, b, c):
    return [m.interp(a, b, c), m.interp(a, b, c, left=-5.0, right=5.0),
            m.interp(a, b, c, period=2.0), m.interp(a, b, c, left="extrapolate",
                                                     right="extrapolate"),
            m.diff(a > 2), m.interp(np.float32(2.5), b, c)]


def test_bool_diff_and_interp_match_jax():
    _check_stored("numpy-sequences/interp", _interp_calls, _interp_args())


def _convolution_calls(m, a, v):
    return [m.convolve(a, v, mode) for mode in ("full", "same", "valid")] + \
        [m.convolve(v, a), m.correlate(a, v), m.correlate(v, a, "full"), m.correlate(a, v, "same"),
         m.convolve(a, v, preferred_element_type=np.float32)]


CONVOLUTION_DTYPES = [dtypes.float32, dtypes.int16]


def _convolution_args(dtype):
    rng = np.random.default_rng(2)
    return [random_array(rng, (9,), dtype), random_array(rng, (4,), dtype)]


@pytest.mark.parametrize("dtype", CONVOLUTION_DTYPES, ids=str)
def test_convolve_and_correlate_match_jax(dtype):
    _check_stored(f"numpy-sequences/convolution/{dtype}", _convolution_calls,
                  _convolution_args(dtype))


def _polynomial_calls(m, p, q, x):
    return [m.polyval(p, x), m.polyval(m.stack([p, q[:4]], axis=1), x[:, None]),
            m.polyadd(p, q), m.polysub(q, p), m.polymul(p, q), *m.polydiv(q, p),
            m.polyder(q), m.polyder(q, 3), m.polyint(p), m.polyint(p, 2, k=np.array([1.0, 2.0], np.float32)),
            m.poly(p[:3]), m.vander(x), m.vander(x, 3, increasing=True)]


def _polynomial_args():
    rng = np.random.default_rng(3)
    p = random_array(rng, (4,), dtypes.float32)
    p[0] = 2.0
    q = random_array(rng, (6,), dtypes.float32)
    return [p, q, rng.uniform(-1.5, 1.5, size=5).astype(np.float32)]


def test_polynomials_match_jax():
    _check_stored("numpy-sequences/polynomials", _polynomial_calls, _polynomial_args(),
                  scale=10.0)


def _polyfit_calls(m, x, y, w):
    return [m.polyfit(x, y[:, 0], 3), m.polyfit(x, y, 2, rcond=1e-9), m.polyfit(x, y, 1, w=w),
            *m.polyfit(x, y[:, 0], 2, full=True), *m.polyfit(x, y, 3, cov=True),
            *m.polyfit(x, y[:, 1], 2, w=w, cov="unscaled")]


def _polyfit_args():
    rng = np.random.default_rng(8)
    x = rng.normal(size=12).astype(np.float32)
    y = random_array(rng, (12, 5), dtypes.float32)
    return [x, y, rng.uniform(0.5, 1.5, size=12).astype(np.float32)]


def test_polyfit_matches_jax(jnp):
    """Least squares through lstsq: every option, its gradient, and the errors."""
    x, y, w = args = _polyfit_args()
    _check_stored("numpy-sequences/polyfit", _polyfit_calls, args, index=(5,), scale=20.0)
    check_grad(lambda v: pnp.polyfit(x, v, 2), lambda v: jnp.polyfit(x, v, 2), y[:, 0],
               scale=20.0)
    with pytest.raises(ValueError, match="deg must be non-negative"):
        pnp.polyfit(x, y, -1)
    with pytest.raises(ValueError, match="more data points"):
        pnp.polyfit(x[:3], y[:3], 3, cov=True)
    with pytest.raises(ValueError, match="same length"):
        pnp.polyfit(x, y[:5], 1)


def _product_calls(m, a, b, v):
    return [m.vecdot(a, b), m.vecdot(a, b[0], axis=-1), m.vecdot(a[..., :2], b[..., :2], axis=0),
            m.matvec(a[..., :3], v[:3]), m.matvec(a[:, None, :, :3], b[..., :3]),
            m.vecmat(v[:4], a.reshape(2, 4, 3)), m.vecmat(b[:, 0, :1], a[:, :1]),
            m.cross(a[..., :3], b[..., :3]), m.cross(a[..., :2], b[..., :2]),
            m.cross(a[:, 0, :3], b[0, :2, :3], axisa=-1, axisb=1, axisc=0),
            m.cross(a[..., :3], b[..., :2]), m.kron(a[0], b[0]), m.kron(v, a[1])]


PRODUCT_DTYPES = [dtypes.float32, dtypes.int8]


def _product_args(dtype):
    rng = np.random.default_rng(4)
    a, b = random_array(rng, (2, 4, 3), dtype), random_array(rng, (2, 4, 3), dtype)
    return [a, b, random_array(rng, (4,), dtype)]


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES, ids=str)
def test_vector_products_match_jax(dtype):
    _check_stored(f"numpy-sequences/products/{dtype}", _product_calls, _product_args(dtype))


def _creation_calls(m, s, e):
    return [m.logspace(s, e, 5), m.logspace(s, e, 4, endpoint=False, base=2.0, axis=-1),
            m.logspace(0.0, e, 1), m.geomspace(m.abs(s) + 1, m.abs(e) + 2, 6),
            m.geomspace(-m.abs(s) - 1, -m.abs(e) - 2, 3, axis=1),
            *m.meshgrid(s, e[0], sparse=True), *m.meshgrid(s, e[0], s, indexing="ij"),
            *m.meshgrid(s, e[0], s, sparse=True, indexing="ij"),
            m.bartlett(7), m.blackman(6), m.hamming(5), m.hanning(4), m.kaiser(9, 2.5),
            m.kaiser(1, 3.0), m.hanning(0), m.kaiser(6, s[0])]


def _creation_args():
    rng = np.random.default_rng(5)
    s = rng.uniform(-1, 1, size=3).astype(np.float32)
    return [s, rng.uniform(1, 2, size=(2, 3)).astype(np.float32)]


def test_logspace_geomspace_meshgrid_and_windows_match_jax():
    _check_stored("numpy-sequences/creation", _creation_calls, _creation_args(), scale=4.0)


def test_sequence_gradients_and_vmap_match_jax(jnp):
    rng = np.random.default_rng(6)
    x = random_array(rng, (3, 6), dtypes.float32)
    xp = np.linspace(-3, 3, 6, dtype=np.float32)

    def seq(m, a):
        return m.concatenate([m.ravel(m.diff(a, 2)), m.ravel(m.gradient(a, axis=1)),
                              m.trapezoid(a), m.ravel(m.unwrap(a)), m.convolve(a[0], a[1]),
                              m.correlate(a[1], a[2, :3]), m.polyval(a[0], a[1]),
                              m.interp(a[2], xp, a[0]), m.ravel(m.cross(a[:, :3], a[:, 3:])),
                              m.ravel(m.kron(a[:2, :2], a[1:, 4:])), m.vecdot(a, a)])
    check_grad(lambda a: seq(pnp, a), lambda a: seq(jnp, a), x)
    check_vmap(lambda a: seq(pnp, a), lambda a: seq(jnp, a), np.stack([x, x[::-1]]))


@pytest.mark.parametrize("name", ["bool_", "int8", "uint16", "int32", "bfloat16", "float16",
                                  "float32", "float64"])
def test_scalar_types_make_arrays_and_remain_dtypes(jax, jnp, name):
    """As JAX without x64 (ptojax's default mode): ``float64(...)`` makes float32 arrays, the
    type itself stays float64."""
    scalar_type = getattr(pnp, name)
    jnp_type = getattr(jnp, name)
    with jax.enable_x64(False):
        canonical = jnp.zeros(2, jnp_type).dtype
    for value in [3, 1.5, True, [1, 2], np.arange(3, dtype=np.int16)]:
        got = scalar_type(value)
        with jax.enable_x64(False):
            want = jnp_type(value)
        assert type(got) is Array and got.dtype == want.dtype and got.shape == want.shape
        assert not got.weak_type
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    traced = pto.jit(lambda x: scalar_type(x))(np.ones(2, np.float32))
    assert traced.dtype == canonical
    assert np.dtype(scalar_type) == scalar_type == np.dtype(name.rstrip("_"))
    assert pnp.zeros(2, scalar_type).dtype == canonical
    assert pnp.ones(2).astype(scalar_type).dtype == canonical
    assert isinstance(np.zeros((), np.dtype(name.rstrip("_")))[()], scalar_type)
    assert pnp.dtype(scalar_type) == np.dtype(name.rstrip("_"))
    with jax.enable_x64(False):
        assert pnp.result_type(scalar_type, pnp.float16) == jnp.result_type(jnp_type,
                                                                            jnp.float16)


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: this module's fixed-input
    check_modes tables (one JAX program each). Inputs end with the source of the calls."""
    tables = [(f"numpy-sequences/differences/{d}", _difference_calls, _difference_args(d))
              for d in DIFFERENCE_DTYPES]
    tables += [("numpy-sequences/interp", _interp_calls, _interp_args())]
    tables += [(f"numpy-sequences/convolution/{d}", _convolution_calls, _convolution_args(d))
               for d in CONVOLUTION_DTYPES]
    tables += [("numpy-sequences/polynomials", _polynomial_calls, _polynomial_args()),
               ("numpy-sequences/polyfit", _polyfit_calls, _polyfit_args()),
               ("numpy-sequences/creation", _creation_calls, _creation_args())]
    tables += [(f"numpy-sequences/products/{d}", _product_calls, _product_args(d))
               for d in PRODUCT_DTYPES]
    for key, calls, args in tables:
        yield (key, table_inputs(args, calls),
               jax_table(lambda *xs, calls=calls: calls(jax.numpy, *xs)))
