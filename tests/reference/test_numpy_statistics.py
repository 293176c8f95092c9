"""NaN-ignoring reductions and statistics of ptojax.numpy against jax.numpy: nansum ...
nancumprod, average, quantile/percentile/median (every method, nan forms, weights), cov,
corrcoef, and the reduction options promote_integers / include_initial / mean= /
correction= — values, dtypes and shapes eagerly, under jit and through make_ir's IR;
gradients and vmap for a sample."""
import numpy as np
import pytest

import ptojax.numpy as pnp
from ptojax import dtypes
from pnp_reference import (check_grad, check_modes_against, check_vmap, jax_table, random_array,
                           stored, table_inputs)

NAN_REDUCTIONS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]


def _with_nans(rng, shape, dtype, all_nan_row=True):
    x = random_array(rng, shape, dtype)
    if dtypes.is_float(np.dtype(x.dtype)):
        x[rng.random(shape) < 0.25] = np.nan
        if all_nan_row and len(shape) == 2:
            x[1] = np.nan
    return x


def _nan_calls(m, x):
    out = []
    for name in NAN_REDUCTIONS:
        fn = getattr(m, name)
        out += [fn(x), fn(x, axis=1), fn(x, axis=(0, 1), keepdims=True)]
    out += [m.nanargmax(x, axis=1), m.nanargmin(x, axis=0), m.nancumsum(x, axis=1),
            m.nancumprod(x), m.nanmedian(x, axis=1), m.nanpercentile(x, 30.0, axis=0),
            m.nanquantile(x, np.float32(0.7), axis=1, keepdims=True),
            m.nanvar(x, axis=1, ddof=1), m.nanmax(x, axis=1, initial=-5.0),
            m.nansum(x, axis=0, where=np.array([True, False, True, True]))]
    return out


def _check_stored(key, calls, args, **kw):
    """``calls(pnp, *args)`` in every mode against JAX's ``calls(jnp, *args)``, stored by
    jax_golden.py under ``key`` (see jax_reference_tables)."""
    check_modes_against(lambda *xs: calls(pnp, *xs),
                        stored(key, args, calls, repr(NAN_REDUCTIONS)), *args, **kw)


def _nan_int_calls(m, a):
    return [getattr(m, n)(a, axis=1) for n in NAN_REDUCTIONS] + \
        [m.nanargmax(a, axis=0), m.nancumsum(a)]


NAN_DTYPES = [dtypes.float32, dtypes.int16]


def _nan_table(dtype):
    x = _with_nans(np.random.default_rng(0), (3, 4), dtype)
    if dtype == dtypes.int16:
        return _nan_int_calls, [x[:, :3]]
    return _nan_calls, [x]


@pytest.mark.parametrize("dtype", NAN_DTYPES, ids=str)
def test_nan_reductions_match_jax(dtype):
    calls, args = _nan_table(dtype)
    index = {21, 22} if dtype != dtypes.int16 else {7}
    _check_stored(f"numpy-statistics/nan/{dtype}", calls, args, index=index)


def _quantile_calls(m, x, q):
    out = []
    for method in ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]:
        out += [m.quantile(x, q, axis=1, method=method),
                m.quantile(x, np.float32(0.25), axis=None, method=method, keepdims=True),
                m.nanquantile(x, q, axis=(0, 2), method=method)]
    out += [m.median(x), m.median(x, axis=0, keepdims=True), m.percentile(x, q * 100, axis=2),
            m.nanpercentile(x, 50.0), m.nanmedian(x, axis=-1)]
    return out


def _quantile_args():
    rng = np.random.default_rng(1)
    x = random_array(rng, (3, 5, 4), dtypes.float32)
    x[0, 1, 2] = np.nan
    x[2, :, 1] = np.nan
    return [x, np.array([0.0, 0.3, 0.5, 1.0], np.float32)]


def test_quantiles_match_jax():
    _check_stored("numpy-statistics/quantiles", _quantile_calls, _quantile_args())


def _weighted_args():
    rng = np.random.default_rng(2)
    x = random_array(rng, (4, 6), dtypes.float32)
    x[1, 2] = np.nan
    return [x, rng.uniform(0.1, 1.0, size=(4, 6)).astype(np.float32)]


def _weighted_calls(m, a, b):
    return [m.quantile(a, np.float32(0.4), axis=1, method="inverted_cdf", weights=b),
            m.nanquantile(a, np.array([0.2, 0.9], np.float32), axis=1,
                          method="inverted_cdf", weights=b),
            m.quantile(a, np.float32(0.5), axis=0, method="inverted_cdf", weights=b[:, 0])]


def test_weighted_quantiles_match_jax():
    _check_stored("numpy-statistics/weighted", _weighted_calls, _weighted_args())


def _average_cov_calls(m, x, y, w, fw):
    return [m.average(x), m.average(x, axis=1, weights=w), m.average(x, axis=0, returned=True),
            m.average(x, axis=(0, 1), weights=np.ones((3, 5), np.float32), keepdims=True),
            m.cov(x), m.cov(x, rowvar=False), m.cov(x, y), m.cov(x, bias=True),
            m.cov(x, ddof=2), m.cov(x, fweights=fw), m.cov(x, aweights=w, ddof=1),
            m.cov(x, fweights=fw, aweights=w), m.cov(x[0]), m.corrcoef(x), m.corrcoef(x, y),
            m.corrcoef(x, rowvar=False)]


COV_DTYPES = [dtypes.float32, dtypes.int32]


def _average_cov_args(dtype):
    rng = np.random.default_rng(3)
    x, y = random_array(rng, (3, 5), dtype), random_array(rng, (2, 5), dtype)
    w = rng.uniform(0.1, 1, size=5).astype(np.float32)
    return [x, y, w, np.array([1, 0, 2, 1, 3], np.int32)]


@pytest.mark.parametrize("dtype", COV_DTYPES, ids=str)
def test_average_cov_corrcoef_match_jax(dtype):
    _check_stored(f"numpy-statistics/cov/{dtype}", _average_cov_calls, _average_cov_args(dtype))


def _option_calls(m, x, b):
    return [m.sum(x, promote_integers=False), m.prod(x, axis=0, promote_integers=False),
            m.sum(b, promote_integers=False), m.sum(x, axis=1), m.prod(b, axis=0),
            m.cumulative_sum(x, axis=1, include_initial=True),
            m.cumulative_prod(x, axis=0, include_initial=True),
            m.cumulative_sum(b[0], include_initial=True), m.cumulative_prod(b[0]),
            m.cumsum(x, dtype=bool), m.cumulative_sum(x, axis=0, dtype=np.float32),
            m.var(x, axis=1, mean=m.mean(x, axis=1, keepdims=True)),
            m.std(x, correction=1), m.var(x, axis=0, correction=0.5)]


OPTION_DTYPES = [dtypes.int8, dtypes.float16]


def _option_args(dtype):
    rng = np.random.default_rng(4)
    x = random_array(rng, (3, 4), dtype, low=-2, high=2)
    return [x, rng.random((3, 4)) < 0.5]


@pytest.mark.parametrize("dtype", OPTION_DTYPES, ids=str)
def test_reduction_options_match_jax(dtype):
    _check_stored(f"numpy-statistics/options/{dtype}", _option_calls, _option_args(dtype),
                  scale=4.0)


def test_nan_statistics_gradients_and_vmap_match_jax(jnp):
    rng = np.random.default_rng(5)
    x = random_array(rng, (4, 5), dtypes.float32)
    x[1, 3] = np.nan

    def stats(m, a):
        return m.stack([m.nanmean(a, axis=1), m.nanstd(a, axis=1), m.nansum(a, axis=1),
                        m.nanmax(a, axis=1), m.nanmedian(a, axis=1),
                        m.quantile(m.nan_to_num(a), 0.3, axis=1),
                        m.average(m.nan_to_num(a), axis=1, weights=m.arange(1.0, 6.0))])
    check_grad(lambda a: stats(pnp, a), lambda a: stats(jnp, a), x)
    check_vmap(lambda a: stats(pnp, a[None]), lambda a: stats(jnp, a[None]), x)
    clean = np.nan_to_num(x)
    check_grad(lambda a: pnp.cov(a) + pnp.corrcoef(a), lambda a: jnp.cov(a) + jnp.corrcoef(a),
               clean)


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: this module's fixed-input
    check_modes tables (one JAX program each). Inputs end with the source of the calls."""
    tables = [(f"numpy-statistics/nan/{d}", *_nan_table(d)) for d in NAN_DTYPES]
    tables += [("numpy-statistics/quantiles", _quantile_calls, _quantile_args()),
               ("numpy-statistics/weighted", _weighted_calls, _weighted_args())]
    tables += [(f"numpy-statistics/cov/{d}", _average_cov_calls, _average_cov_args(d))
               for d in COV_DTYPES]
    tables += [(f"numpy-statistics/options/{d}", _option_calls, _option_args(d))
               for d in OPTION_DTYPES]
    for key, calls, args in tables:
        yield (key, table_inputs(args, calls, repr(NAN_REDUCTIONS)),
               jax_table(lambda *xs, calls=calls: calls(jax.numpy, *xs)))
