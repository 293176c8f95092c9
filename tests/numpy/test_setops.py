"""Set operations (unique and its array-API forms, isin, union1d, intersect1d, setdiff1d,
setxor1d) against jax.numpy: values, dtypes, shapes, padding with size=/fill_value= eagerly,
under jit and as IR; the data-dependent forms eagerly, and their ConcretizationError under
jit; a gradient and a vmap."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes
from ptojax.errors import ConcretizationError
from ptojax.tree_util import tree_leaves
from pnp_reference import check, check_grad, check_modes, check_vmap, jax_compiled
from jax_golden import expected


def _indices(jax_fn, *args):
    """The outputs that are indices: int64 from JAX with x64 (the inputs here are narrower),
    expected as ptojax's int32. (Their types, traced: check_modes compiles jax_fn.)"""
    import jax
    return {k for k, out in enumerate(jax.tree_util.tree_leaves(jax.eval_shape(jax_fn, *args)))
            if out.dtype == np.int64}


def compare(pto_fn, jax_fn, *args):
    check_modes(pto_fn, jax_fn, *args, index=_indices(jax_fn, *args))


def _sized_unique_calls(m, x):
    return [*m.unique(x, True, True, True, size=6), *m.unique(x, True, True, True, size=2),
            m.unique(x, size=9, fill_value=-5), *m.unique_all(x, size=7, fill_value=0),
            *m.unique_inverse(x[0], size=3), m.unique_values(x, size=5),
            *m.unique(x, True, True, True, axis=1, size=3, fill_value=1)]


@pytest.mark.parametrize("dtype", [dtypes.float32], ids=str)
def test_sized_unique_matches_jax(jnp, dtype):
    x = np.array([[3, 1, 3, 0, 2], [3, 1, 3, 0, 2], [1, 1, 4, 4, 2]]).astype(dtype)
    compare(lambda a: _sized_unique_calls(pnp, a), lambda a: _sized_unique_calls(jnp, a), x)


def _unsized_unique_calls(m, x):
    return [*m.unique(x, True, True, True), m.unique(x[:0])]


UNIQUE_X = np.array([[3, 1, 3, 0, 2], [3, 1, 3, 0, 2], [1, 1, 4, 4, 2]], np.int32)


def test_unsized_unique_matches_jax_eagerly():
    """Against JAX's values stored by jax_golden.py (eager JAX compiled every operation of
    its unsized unique, ~4 s)."""
    x = UNIQUE_X
    want_all = expected("setops-unsized-unique", [x])
    assert len(want_all) == len(_unsized_unique_calls(pnp, x))
    for k, (got, want) in enumerate(zip(_unsized_unique_calls(pnp, x), want_all)):
        check(got, want, (x,), index=np.asarray(want).dtype == np.int64, what=f"output {k}")


def test_complex_unique_matches_numpy():
    """Complex values sort by real part, then imaginary part (JAX compiles its complex
    unique slowly, so NumPy, which orders them alike, is the reference here)."""
    x = np.array([1 + 2j, 1 - 1j, 3, 1 + 2j, -1j, 3], np.complex64)
    for got, want in zip(pnp.unique(x, True, True, True), np.unique(x, True, True, True)):
        np.testing.assert_array_equal(got, want)
    rows = np.stack([x[:3], x[3:]])
    np.testing.assert_array_equal(pnp.unique(rows, axis=1), np.unique(rows, axis=1))


NAN_X = np.array([np.nan, 1.0, np.nan, 1.0, -2.0], np.float32)
NAN_Y = np.array([np.nan, 2.0], np.float32)


def _nan_calls(m, x, y):
    return [*pto.tree_util.tree_leaves(m.unique(x, return_counts=True)),
            *pto.tree_util.tree_leaves(m.unique(x, equal_nan=False, return_inverse=True)),
            m.unique_values(x), m.setxor1d(x, y, size=6), m.intersect1d(x, y, size=3)]


def test_unique_nans_follow_equal_nan():
    """Against JAX's values stored by jax_golden.py (eager JAX, ~5 s)."""
    got_all = _nan_calls(pnp, NAN_X, NAN_Y)
    want_all = expected("setops-unique-nans", [NAN_X, NAN_Y])
    assert len(got_all) == len(want_all)
    for got, want in zip(got_all, want_all):
        np.testing.assert_array_equal(got, want)


def _set_calls(m, a, b):
    return [m.isin(a, b), m.isin(b, a, invert=True, method="binary_search"),
            m.isin(a, b[:0]), m.union1d(a, b, size=12), m.union1d(a, b, size=3, fill_value=9),
            *m.intersect1d(a, b, return_indices=True, size=4),
            m.intersect1d(a, b[:0], size=2), m.setdiff1d(a, b, size=5),
            m.setdiff1d(b, a, size=6, fill_value=8), m.setdiff1d(a, b, assume_unique=True, size=4),
            m.setxor1d(a, b, size=7), m.setxor1d(a, b, size=3, fill_value=0)]


@pytest.mark.parametrize("dtype", [dtypes.int8], ids=str)
def test_sized_set_operations_match_jax(jnp, dtype):
    a = np.array([[4, 1, 2], [7, 1, 9]]).astype(dtype)
    b = np.array([2, 5, 4, 4, 6, 0]).astype(dtype)
    compare(lambda x, y: _set_calls(pnp, x, y), lambda x, y: _set_calls(jnp, x, y), a, b)


def _unsized_set_calls(m, a, b):
    return [*m.intersect1d(a, b, return_indices=True), m.setdiff1d(a, b), m.setxor1d(a, b)]


SET_A = np.array([[4, 1, 2], [7, 1, 9]], np.int32)
SET_B = np.array([2, 5, 4, 4, 6, 0], np.int32)


def test_unsized_set_operations_match_jax_eagerly_and_ask_for_size_under_jit():
    """Against JAX's values stored by jax_golden.py (eager JAX, ~6 s)."""
    a, b = SET_A, SET_B
    want_all = expected("setops-unsized-sets", [a, b])
    assert len(want_all) == len(_unsized_set_calls(pnp, a, b))
    for k, (got, want) in enumerate(zip(_unsized_set_calls(pnp, a, b), want_all)):
        check(got, want, (a, b), index=np.asarray(want).dtype == np.int64, what=f"output {k}")
    for fn in [pnp.unique, lambda x: pnp.union1d(x, x), lambda x: pnp.intersect1d(x, x),
               lambda x: pnp.setdiff1d(x, x), lambda x: pnp.setxor1d(x, x),
               lambda x: pnp.unique_counts(x)]:
        with pytest.raises(ConcretizationError, match="size="):
            pto.jit(fn)(b)


def test_unique_errors_match_jax(jnp):
    empty = np.zeros(0, np.float32)
    with pytest.raises(ValueError, match="fill_value"):
        jnp.unique(empty, size=2)
    with pytest.raises(ValueError, match="fill_value"):
        pnp.unique(empty, size=2)
    with pytest.raises(ValueError, match="method"):
        pnp.isin(empty, empty, method="hash")


def test_unique_gradient_and_isin_vmap_match_jax(jnp):
    x = np.array([0.5, -1.0, 0.5, 2.0, -1.0], np.float32)
    check_grad(lambda a: pnp.unique(a, size=4, fill_value=0.0) ** 2,
               lambda a: jnp.unique(a, size=4, fill_value=0.0) ** 2, x)
    rows = np.array([[1, 2, 3], [3, 4, 5]], np.int32)
    check_vmap(lambda r: pnp.isin(r, np.array([2, 3], np.int32)),
               lambda r: jnp.isin(r, np.array([2, 3], np.int32)), rows)
    check_vmap(lambda r: pnp.unique(r, size=3, return_counts=True),
               lambda r: jnp.unique(r, size=3, return_counts=True), rows, index={0, 1})


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: the fixed-input eager
    (unsized) tables above."""
    jnp = jax.numpy
    yield "setops-unsized-unique", [UNIQUE_X], lambda x: _unsized_unique_calls(jnp, x)
    yield "setops-unsized-sets", [SET_A, SET_B], lambda a, b: _unsized_set_calls(jnp, a, b)
    yield "setops-unique-nans", [NAN_X, NAN_Y], lambda x, y: _nan_calls(jnp, x, y)
