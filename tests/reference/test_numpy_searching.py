"""Finding, indexing and editing helpers of ptojax.numpy against jax.numpy: nonzero/
flatnonzero/argwhere/where/extract/compress (with size= under jit), bincount, searchsorted
(every method), digitize, lexsort, index_tricks (indices, ix_, diag/tril/triu indices,
unravel/ravel_multi_index, fill_diagonal, diagflat), insert/delete/append/resize/trim_zeros,
rot90/rollaxis/unstack/h-v-dsplit, pad in every mode — eagerly, under jit and through
make_ir's IR; gradients and vmap for a sample."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes
from ptojax.errors import ConcretizationError
from pnp_reference import (check_grad, check_modes, check_modes_against, check_vmap, jax_table,
                           random_array, stored, table_inputs)


def _nonzero_calls(m, x):
    return [*m.nonzero(x, size=4), *m.nonzero(x, size=9, fill_value=-1),
            m.flatnonzero(x, size=3, fill_value=7), m.argwhere(x, size=8),
            m.argwhere(x, size=2, fill_value=(5, 6)), *m.where(x, size=5),
            m.extract(x > 0, x, size=3), m.extract(x != 0, x, size=6, fill_value=9),
            m.compress(np.array([True, False, True]), x, axis=0, size=2),
            m.bincount(m.ravel(m.abs(x)).astype(np.int32), length=8)]


NONZERO_DTYPES = [dtypes.float32, dtypes.int16, dtypes.bool_]


def _nonzero_args(dtype):
    x = random_array(np.random.default_rng(0), (3, 4), dtype)
    x[1] = 0
    return [x]


@pytest.mark.parametrize("dtype", NONZERO_DTYPES, ids=str)
def test_sized_nonzero_family_matches_jax(dtype):
    args = _nonzero_args(dtype)   # JAX's values stored by jax_golden.py
    check_modes_against(lambda a: _nonzero_calls(pnp, a),
                        stored(f"numpy-searching/nonzero/{dtype}", args, _nonzero_calls),
                        *args, index=set(range(9)) | {12})


def test_unsized_nonzero_family_matches_jax_eagerly_and_asks_for_size_under_jit(jnp):
    x = random_array(np.random.default_rng(1), (3, 4), dtypes.float32)
    x[0, 1:3] = 0
    calls = lambda m, a: [*m.nonzero(a), m.extract(a > 0, a),
                          m.trim_zeros(np.array([[0, 0], [0, 1.0]], np.float32))]
    for got, want in zip(calls(pnp, x), calls(jnp, x)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(pnp.argwhere(x), np.argwhere(x))
    np.testing.assert_array_equal(pnp.bincount(np.array([0, 3, 3, 1]), minlength=6),
                                  np.bincount(np.array([0, 3, 3, 1]), minlength=6))
    for fn in [pnp.nonzero, pnp.argwhere, lambda a: pnp.extract(a > 0, a)]:
        with pytest.raises(ConcretizationError, match="size="):
            pto.jit(fn)(x)


def _search_calls(m, a, v):
    out = [m.searchsorted(a, v, side=side, method=method)
           for side in ("left", "right") for method in ("scan", "sort", "compare_all")]
    out += [m.searchsorted(a[::-1], v, sorter=m.argsort(a[::-1])),
            m.digitize(v, a), m.digitize(v, a, right=True), m.digitize(v, a[::-1]),
            m.digitize(v, a[::-1], right=True, method="compare_all"), m.digitize(v, a[:0])]
    return out


SEARCH_DTYPES = [dtypes.float32, dtypes.int32]


def _search_args(dtype):
    rng = np.random.default_rng(2)
    a = np.sort(random_array(rng, (11,), dtype))
    v = random_array(rng, (3, 4), dtype)
    v[0, :3] = a[[0, 4, 10]]  # exact hits: left and right differ
    if dtype == dtypes.float32:
        a[-2:], v[1, 0], v[1, 1] = np.nan, np.nan, -0.0
    return [a, v]


@pytest.mark.parametrize("dtype", SEARCH_DTYPES, ids=str)
def test_searchsorted_and_digitize_match_jax(dtype):
    args = _search_args(dtype)
    check_modes_against(lambda x, y: _search_calls(pnp, x, y),
                        stored(f"numpy-searching/search/{dtype}", args, _search_calls), *args,
                        index=set(range(12)))


def _lexsort_args():
    return [np.random.default_rng(3).integers(0, 3, size=(3, 4, 5)).astype(np.int8)]


def _lexsort_calls(m, k):
    return [m.lexsort(k), m.lexsort(k, axis=0), m.lexsort([k[0], k[1].astype(np.float32)]),
            m.argsort(k[0], axis=1, dtype=np.int16)]


def test_lexsort_and_argsort_dtype_match_jax():
    args = _lexsort_args()
    check_modes_against(lambda k: _lexsort_calls(pnp, k),
                        stored("numpy-searching/lexsort", args, _lexsort_calls), *args,
                        index={0, 1, 2})


def _index_calls(m, x, i):
    return [m.indices((2, 3)), *m.indices((2, 3), sparse=True), *m.ix_(i[:2], i),
            *m.diag_indices(3, 3), *m.diag_indices_from(x[:3, :3]), *m.tril_indices(4, -1),
            *m.triu_indices(3, 1, 5), *m.tril_indices_from(x, 1), *m.triu_indices_from(x),
            *m.unravel_index(i, (2, 3, 2)),
            m.ravel_multi_index((i % 2, i % 3), (2, 3), mode="wrap"),
            m.ravel_multi_index((i, i), (4, 5), mode="clip", order="F"),
            m.fill_diagonal(x, 9.0, inplace=False),
            m.fill_diagonal(x, np.array([1.0, 2.0], np.float32), inplace=False),
            m.diagflat(x[0]), m.diagflat(x[:2, :2], k=-2)]


def _index_args():
    rng = np.random.default_rng(4)
    return [random_array(rng, (4, 5), dtypes.float32), np.array([0, 5, 11, 3, -1, 14], np.int32)]


def test_index_helpers_match_jax():
    args = _index_args()
    check_modes_against(lambda a, b: _index_calls(pnp, a, b),
                        stored("numpy-searching/index", args, _index_calls), *args,
                        index=set(range(23)))


def test_unravel_index_sizes_keep_their_types(jnp):
    i = np.array([0, 5, 11, 13, -3], np.int32)
    calls = lambda m, a: [*m.unravel_index(a, (np.int8(3), np.int8(4))),
                          *m.unravel_index(a.astype(np.int8), (np.int16(2), 6)),
                          *m.unravel_index(a, m.asarray([3, 4]))]
    check_modes(lambda a: calls(pnp, a), lambda a: calls(jnp, a), i, index=set(range(6)))


def test_unravel_index_refuses_float_sizes():
    with pytest.raises(TypeError, match="sizes in shape must be integers"):
        pnp.unravel_index(5, (3.0, 4))
    with pytest.raises(ValueError, match="scalar or 1D"):
        pnp.unravel_index(5, ((3, 4),))


def _editing_calls(m, x, i):
    return [m.delete(x, 1, axis=0), m.delete(x, -1), m.delete(x, slice(0, 4, 2), axis=2),
            m.delete(x, np.array([0, 2]), axis=1),
            m.delete(x, i, axis=2, assume_unique_indices=True),
            m.insert(x, 1, 7.0, axis=1), m.insert(x, i[0], 5.0), m.insert(x, np.array([0, 2]), 3.0, axis=2),
            m.insert(x, slice(0, 2), np.arange(2, dtype=np.float32)[:, None, None], axis=0),
            m.append(x, x[:1], axis=0), m.append(x, 2.0), m.resize(x, (5, 7)), m.resize(x, 3),
            m.rot90(x), m.rot90(x, 3, axes=(2, 0)), m.rot90(x, -2, axes=(1, 2)),
            m.rollaxis(x, 2), m.rollaxis(x, 0, 3), *m.unstack(x, axis=1), *m.hsplit(x, 3),
            *m.vsplit(x, 2), *m.dsplit(x, [1, 3]), m.hstack([x, x], dtype=np.int32),
            m.vstack([x[0], x[1]], dtype=np.float16), m.dstack([x, x])]


def _editing_args():
    return [random_array(np.random.default_rng(5), (2, 3, 4), dtypes.float32),
            np.array([3, 1], np.int32)]


def test_editing_and_shape_helpers_match_jax():
    args = _editing_args()
    check_modes_against(lambda a, b: _editing_calls(pnp, a, b),
                        stored("numpy-searching/editing", args, _editing_calls), *args)


PAD_MODES = [("constant", {}), ("constant", {"constant_values": ((1, 2), (3, 4))}),
             ("edge", {}), ("wrap", {}), ("empty", {}), ("linear_ramp", {}),
             ("linear_ramp", {"end_values": (-2, 5)}), ("maximum", {}), ("minimum", {}),
             ("mean", {"stat_length": 2}), ("median", {"stat_length": ((1, 3), (2, 1))}),
             ("reflect", {}), ("reflect", {"reflect_type": "odd"}), ("symmetric", {}),
             ("symmetric", {"reflect_type": "odd"})]


def _pad_args():
    return [random_array(np.random.default_rng(6), (3, 4), dtypes.float32),
            random_array(np.random.default_rng(6), (3, 4), dtypes.int16)]


def _pad_calls(m, a, b):
    # integer ramps are floored float ramps whose rounding differs (JAX computes them in
    # float64 here, with x64): integers only with the stat modes
    return [m.pad(a, width, mode, **kw) for mode, kw in PAD_MODES
            for width in [((1, 2), (0, 3)), 5]] + \
        [m.pad(b, 2, mode, stat_length=3) for mode in ("maximum", "mean", "median")]


def test_pad_in_every_mode_matches_jax():
    args = _pad_args()
    check_modes_against(lambda a, b: _pad_calls(pnp, a, b),
                        stored("numpy-searching/pad", args, _pad_calls, repr(PAD_MODES)), *args)


def test_pad_with_a_function_matches_jax(jnp):
    def fill(vector, width, axis, kwargs):
        return vector.at[:width[0]].set(kwargs["value"] + axis)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_modes(lambda a: pnp.pad(a, 1, fill, value=7.0), lambda a: jnp.pad(a, 1, fill, value=7.0),
                x)


def test_editing_gradients_and_vmap_match_jax(jnp):
    x = random_array(np.random.default_rng(7), (3, 5), dtypes.float32)

    def edits(m, a):
        return m.concatenate([m.ravel(m.pad(a, 2, "reflect", reflect_type="odd")),
                              m.ravel(m.pad(a, 1, "mean")), m.ravel(m.insert(a, 2, 1.5, axis=1)),
                              m.ravel(m.delete(a, 1, axis=0)), m.ravel(m.rot90(a)),
                              m.extract(a > 0, a, size=4), m.ravel(m.fill_diagonal(
                                  a, 0.0, inplace=False))])
    check_grad(lambda a: edits(pnp, a), lambda a: edits(jnp, a), x)
    check_vmap(lambda a: edits(pnp, a), lambda a: edits(jnp, a), x[None].repeat(2, 0))
    check_vmap(lambda v: pnp.searchsorted(np.arange(5.0, dtype=np.float32), v),
               lambda v: jnp.searchsorted(np.arange(5.0, dtype=np.float32), v),
               x, index={0})


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: this module's fixed-input
    check_modes tables (each a JAX program of tens of calls; ~1 min of compiling on a busy
    machine). Inputs end with the source of the table's definitions."""
    jnp = jax.numpy

    def table(key, args, fn, *definitions):
        return key, table_inputs(args, fn, *definitions), jax_table(lambda *xs: fn(jnp, *xs))

    for dtype in NONZERO_DTYPES:
        yield table(f"numpy-searching/nonzero/{dtype}", _nonzero_args(dtype), _nonzero_calls)
    for dtype in SEARCH_DTYPES:
        yield table(f"numpy-searching/search/{dtype}", _search_args(dtype), _search_calls)
    yield table("numpy-searching/lexsort", _lexsort_args(), _lexsort_calls)
    yield table("numpy-searching/index", _index_args(), _index_calls)
    yield table("numpy-searching/editing", _editing_args(), _editing_calls)
    yield table("numpy-searching/pad", _pad_args(), _pad_calls, repr(PAD_MODES))
