"""``scipy.linalg.eigh_tridiagonal`` against ``jax.scipy.linalg.eigh_tridiagonal``: all and
index-selected eigenvalues of real and complex Hermitian tridiagonal matrices, ``tol``,
clustered and tiny ones, float64; eigenvectors (up to sign or phase); jit and vmap; JAX's
errors."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.scipy import linalg
from helpers import assert_close

RNG = np.random.RandomState(0)
REAL = (RNG.randn(7), RNG.randn(6))
CASES = [
    ("random", REAL, {}), ("select_i", REAL, {"select": "i", "select_range": (2, 4)}),
    ("tol", REAL, {"tol": 1e-2}), ("clustered", (np.ones(6), 1e-4 * np.ones(5)), {}),
    ("laplacian", (2 * np.ones(8), -np.ones(7)), {}), ("one", (np.array([3.0]), np.zeros(0)), {}),
    ("complex", (RNG.randn(5) + 0j, RNG.randn(4) + 1j * RNG.randn(4)), {}),
]


@pytest.mark.parametrize("name,de,kwargs,x64", [(*c, False) for c in CASES] + [
    (*c, True) for c in CASES if c[0] in ("random", "complex")],
    ids=[c[0] for c in CASES] + ["random-x64", "complex-x64"])
def test_eigenvalues_match_jax(jax, name, de, kwargs, x64):
    dtype = (np.complex128 if x64 else np.complex64) if name == "complex" else (
        np.float64 if x64 else np.float32)
    d, e = (a.astype(dtype) for a in de)
    with jax.enable_x64(x64), pto.enable_x64(x64):
        want = jax.scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True, **kwargs)
        got = linalg.eigh_tridiagonal(d, e, eigvals_only=True, **kwargs)
        assert got.dtype == want.dtype
        assert_close(got, np.asarray(want), rtol=1e-6 if x64 else 2e-6,
                     atol=1e-12 if x64 else 1e-6)


def test_complex_eigenvectors(jax):
    d, e = (a.astype(np.complex64) for a in CASES[-1][1])
    with jax.enable_x64(False):
        want_values, want_vectors = jax.scipy.linalg.eigh_tridiagonal(d, e)
    values, vectors = (np.asarray(o) for o in linalg.eigh_tridiagonal(d, e))
    assert vectors.dtype == want_vectors.dtype == np.complex64
    assert_close(values, np.asarray(want_values), rtol=2e-6, atol=1e-6)
    # each column is JAX's up to a unit complex factor
    overlaps = np.abs(np.conj(np.asarray(want_vectors)).T @ vectors)
    assert_close(overlaps, np.eye(len(d), dtype=np.float32), rtol=1e-4, atol=1e-4)


def test_eigenvectors_jit_vmap(jax):
    d, e = (a.astype(np.float32) for a in REAL)
    with jax.enable_x64(False):
        want_values, want_vectors = jax.scipy.linalg.eigh_tridiagonal(d, e)
    values, vectors = linalg.eigh_tridiagonal(d, e)
    assert_close(values, np.asarray(want_values), rtol=2e-6, atol=1e-6)
    assert_close(np.abs(np.asarray(vectors)), np.abs(np.asarray(want_vectors)), rtol=1e-3,
                 atol=1e-4)
    only = lambda d, e: linalg.eigh_tridiagonal(d, e, eigvals_only=True)  # noqa: E731
    assert_close(pto.jit(only)(d, e), np.asarray(want_values), rtol=2e-6, atol=1e-6)
    assert_close(pto.vmap(only)(np.stack([d, 2 * d]), np.stack([e, 2 * e]))[1],
                 2 * np.asarray(want_values), rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("args,kwargs,error,match", [
    ((np.ones(3, np.float32), np.ones(2, np.float64)), {}, TypeError, "same dtype"),
    ((np.ones(3, np.int32), np.ones(2, np.int32)), {}, TypeError, "Only float32"),
    ((np.ones(3, np.float32), np.ones(2, np.float32)), {"select": "i"}, ValueError,
     "select_range must be specified"),
    ((np.ones(3, np.float32), np.ones(2, np.float32)), {"select": "i", "select_range": (2, 1)},
     ValueError, "empty index range"),
    ((np.ones(3, np.float32), np.ones(2, np.float32)), {"select": "v"}, NotImplementedError,
     "select='v'"),
    ((np.ones(3, np.float32), np.ones(2, np.float32)), {"select": "x"}, ValueError,
     "must have a value in"),
])
def test_errors_as_jax(jax, args, kwargs, error, match):
    with jax.enable_x64(True), pytest.raises(error, match=match):
        jax.scipy.linalg.eigh_tridiagonal(*args, eigvals_only=True, **kwargs)
    with pto.enable_x64(True), pytest.raises(error, match=match):
        linalg.eigh_tridiagonal(*args, eigvals_only=True, **kwargs)
