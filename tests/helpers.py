"""Shared test helpers: tolerances per dtype and comparison against references."""
import types

import numpy as np

import ptojax  # noqa: F401  (defines every primitive)
import ptojax.dtypes as dtypes
from ptojax.trace import PRIMITIVES

# every primitive as ``P.<name>_p``
P = types.SimpleNamespace(**{f"{name}_p": prim for name, prim in PRIMITIVES.items()})

TOLERANCE = {
    dtypes.float64: 1e-12, dtypes.float32: 1e-5, dtypes.float16: 1e-3, dtypes.bfloat16: 1e-2,
    dtypes.float8_e4m3fn: 1e-1, dtypes.float8_e5m2: 2e-1,
}


def tol(dtype, scale=1.0):
    return TOLERANCE.get(np.dtype(dtype), 0) * scale


def assert_close(actual, expected, rtol=None, atol=None, check_dtype=True):
    a, e = np.asarray(actual), np.asarray(expected)
    if check_dtype:
        assert a.dtype == e.dtype, f"dtype {a.dtype} != expected {e.dtype}"
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    if a.dtype.kind in "biu" or a.dtype == np.bool_:
        np.testing.assert_array_equal(a, e)
        return
    r = tol(a.dtype) if rtol is None else rtol
    at = r if atol is None else atol
    np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=r, atol=at)
