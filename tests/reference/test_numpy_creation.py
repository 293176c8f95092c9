"""Array creation of ptojax.numpy against jax.numpy: array/asarray from scalars, lists and
numpy arrays; zeros/ones/full/empty and their *_like forms; arange, linspace, eye, identity,
tri, meshgrid — with and without dtypes, eagerly, under jit and through make_ir's IR."""
import ml_dtypes
import numpy as np
import pytest

import ptojax.numpy as pnp
from pnp_reference import check_modes

LIST_VALUES = [[1, 2], [1.0, 2], [[1, 2], [3, 4]], [True, False], 3, 3.5, True,
               np.float16(2), [np.float16(1), 2], (1, 2.5), np.array([1, 2], np.uint16), [],
               [[1.5], [2]], [np.int8(1), np.uint8(2)], np.array(2, ml_dtypes.bfloat16)]


def _from_values(m):
    out = []
    for v in LIST_VALUES:
        out += [m.array(v), m.asarray(v), m.array(v, dtype=np.float16),
                m.asarray(v, dtype=np.int8)]
    return out + [m.array([1, 2], ndmin=3), m.array([m.ones(2), m.zeros(2)])]


def test_array_and_asarray_match_jax(jnp):
    check_modes(lambda: _from_values(pnp), lambda: _from_values(jnp))


def _filled(m):
    like = np.arange(6, dtype=np.int16).reshape(2, 3)
    return [
        m.zeros(3), m.zeros((2, 3), np.int8), m.zeros((), bool), m.ones((2,), ml_dtypes.bfloat16),
        m.ones(4, dtype=int), m.empty((1, 2)).shape == (1, 2), m.full((2, 3), 1.5),
        m.full((2, 3), 2), m.full((2, 3), True), m.full((2,), 2, np.float16),
        m.full((3, 2), np.array([1, 2], np.int8)), m.full((2,), 1.5, np.int32),
        m.zeros_like(like), m.ones_like(like, dtype=np.float32), m.full_like(like, 2.5),
        m.full_like(like, 7, shape=(4,)), m.empty_like(like).shape == (2, 3),
        m.zeros_like(2.5), m.ones_like(like, shape=(1, 2)),
    ]


def test_filled_arrays_match_jax(jnp):
    check_modes(lambda: _filled(pnp), lambda: _filled(jnp))


def _ranges(m):
    return [
        m.arange(5), m.arange(2, 7), m.arange(1, 10, 3), m.arange(0.5, 3), m.arange(10, 2, -3),
        m.arange(5, dtype=np.float32), m.arange(1.5, 4.5, 0.5), m.arange(0), m.arange(3, 1),
        m.arange(np.int8(5)), m.arange(0, 5, np.float16(1)), m.arange(2, 8, dtype=np.int16),
        m.linspace(0, 1, 5), m.linspace(0, 1, 5, endpoint=False), m.linspace(2, 3, 1),
        m.linspace(0, 1, 0), m.linspace(-5, 5, 7, dtype=np.int32),
        m.linspace(np.array([0.0, 1.0], np.float32), np.array([1.0, 3.0], np.float32), 4),
        m.linspace(np.array([0.0, 1.0], np.float32), 5.0, 4, axis=1),
        m.linspace(0, 1, 4, dtype=np.float16), *m.linspace(0, 1, 5, retstep=True),
        m.linspace(2, 3, 1, retstep=True)[1], m.linspace(0, 10, 3, retstep=True,
                                                         dtype=np.int32)[1],
        m.eye(3), m.eye(3, 4), m.eye(3, 4, 1), m.eye(3, 4, -2), m.eye(4, 4, 5),
        m.eye(3, dtype=np.int8), m.identity(3, np.int32), m.tri(3, 4, 1), m.tri(3),
        *m.meshgrid(np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)),
        *m.meshgrid(np.arange(3, dtype=np.int32), np.arange(2, dtype=np.int32),
                    indexing="ij"),
    ]


def test_ranges_and_grids_match_jax(jnp):
    check_modes(lambda: _ranges(pnp), lambda: _ranges(jnp))


@pytest.mark.parametrize("make", [
    lambda m: m.asarray(np.arange(3.0)), lambda m: m.array([np.float64(1), 2]),
    lambda m: m.arange(np.int64(5)), lambda m: m.full((2,), np.float64(1)),
    lambda m: m.linspace(1, 2, 3, dtype=np.float64), lambda m: m.zeros(2, np.float64),
    lambda m: m.arange(3, dtype=np.int64)], ids=range(7))
def test_explicit_64_bit_inputs_stay_64_bit_like_jax(jnp, make):
    check_modes(lambda: make(pnp), lambda: make(jnp), inputs=(np.float64(0),))
