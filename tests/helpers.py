"""Shared test helpers: the one closeness check, with the per-dtype tolerances of
``ptojax.tools.numerics`` (the table ``check_numerics`` uses too)."""
import types

import numpy as np

import ptojax  # noqa: F401  (defines every primitive)
from ptojax.tools.numerics import tolerance
from ptojax.trace import PRIMITIVES
from ptojax.tree_util import tree_leaves

# every primitive as ``P.<name>_p``
P = types.SimpleNamespace(**{f"{name}_p": prim for name, prim in PRIMITIVES.items()})


def tol(dtype, scale=1.0):
    """The relative tolerance for ``dtype`` (0 for exact dtypes), times ``scale``."""
    return tolerance(dtype) * scale


def assert_close(actual, expected, rtol=None, atol=None, check_dtype=True, scale=1.0):
    """``actual`` equals ``expected`` (arrays or pytrees of them, leaf by leaf) within the
    dtype's tolerance times ``scale`` (or ``rtol``/``atol``); integers and bools exactly."""
    actual_leaves, expected_leaves = tree_leaves(actual), tree_leaves(expected)
    assert len(actual_leaves) == len(expected_leaves), \
        f"{len(actual_leaves)} leaves != expected {len(expected_leaves)}"
    for got, want in zip(actual_leaves, expected_leaves):
        _assert_leaf_close(np.asarray(got), np.asarray(want), rtol, atol, check_dtype, scale)


def _assert_leaf_close(a, e, rtol, atol, check_dtype, scale):
    if check_dtype:
        assert a.dtype == e.dtype, f"dtype {a.dtype} != expected {e.dtype}"
    assert a.shape == e.shape, f"shape {a.shape} != expected {e.shape}"
    if a.dtype.kind in "biu" or a.dtype == np.bool_:
        np.testing.assert_array_equal(a, e)
        return
    r = tol(a.dtype, scale) if rtol is None else rtol
    at = r if atol is None else atol
    wide = np.complex128 if e.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(a.astype(wide), e.astype(wide), rtol=r, atol=at)
