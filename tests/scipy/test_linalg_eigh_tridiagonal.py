"""``scipy.linalg.eigh_tridiagonal`` against ``jax.scipy.linalg.eigh_tridiagonal``: all and
index-selected eigenvalues of real and complex Hermitian tridiagonal matrices, ``tol``,
clustered and tiny ones, float64; eigenvectors (up to sign or phase); jit and vmap; JAX's
errors."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.scipy import linalg
from helpers import assert_close
from jax_golden import expected

RNG = np.random.RandomState(0)
REAL = (RNG.randn(7), RNG.randn(6))
CASES = [
    ("random", REAL, {}), ("select_i", REAL, {"select": "i", "select_range": (2, 4)}),
    ("tol", REAL, {"tol": 1e-2}), ("clustered", (np.ones(6), 1e-4 * np.ones(5)), {}),
    ("laplacian", (2 * np.ones(8), -np.ones(7)), {}), ("one", (np.array([3.0]), np.zeros(0)), {}),
    ("complex", (RNG.randn(5) + 0j, RNG.randn(4) + 1j * RNG.randn(4)), {}),
]


EIGENVALUE_CASES = [(*c, False) for c in CASES] + [
    (*c, True) for c in CASES if c[0] in ("random", "complex")]


def _operands(name, de, x64):
    dtype = (np.complex128 if x64 else np.complex64) if name == "complex" else (
        np.float64 if x64 else np.float32)
    return [a.astype(dtype) for a in de]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py (eagerly, JAX compiled
    each case: ~15 s in all on a busy machine)."""
    eigh_tridiagonal = jax.scipy.linalg.eigh_tridiagonal
    for name, de, kwargs, x64 in EIGENVALUE_CASES:
        def values(d, e, kwargs=kwargs, x64=x64):
            with jax.enable_x64(x64):
                return [jax.jit(lambda d, e: eigh_tridiagonal(d, e, eigvals_only=True,
                                                              **kwargs))(d, e)]
        yield f"eigh-tridiagonal/{name}-{x64}", _operands(name, de, x64), values

    def vectors(d, e):
        with jax.enable_x64(False):
            return list(jax.jit(eigh_tridiagonal)(d, e))
    yield "eigh-tridiagonal/complex-vectors", _operands("complex", CASES[-1][1], False), vectors
    yield "eigh-tridiagonal/vectors", _operands("random", REAL, False), vectors


@pytest.mark.parametrize("name,de,kwargs,x64", EIGENVALUE_CASES,
                         ids=[c[0] for c in CASES] + ["random-x64", "complex-x64"])
def test_eigenvalues_match_jax(name, de, kwargs, x64):
    """Against JAX's values stored by jax_golden.py."""
    d, e = _operands(name, de, x64)
    (want,) = expected(f"eigh-tridiagonal/{name}-{x64}", [d, e])
    with pto.enable_x64(x64):
        got = linalg.eigh_tridiagonal(d, e, eigvals_only=True, **kwargs)
        assert got.dtype == want.dtype
        assert_close(got, want, rtol=1e-6 if x64 else 2e-6, atol=1e-12 if x64 else 1e-6)


def test_complex_eigenvectors():
    """Against JAX's values stored by jax_golden.py."""
    d, e = _operands("complex", CASES[-1][1], False)
    want_values, want_vectors = expected("eigh-tridiagonal/complex-vectors", [d, e])
    values, vectors = (np.asarray(o) for o in linalg.eigh_tridiagonal(d, e))
    assert vectors.dtype == want_vectors.dtype == np.complex64
    assert_close(values, want_values, rtol=2e-6, atol=1e-6)
    # each column is JAX's up to a unit complex factor
    overlaps = np.abs(np.conj(want_vectors).T @ vectors)
    assert_close(overlaps, np.eye(len(d), dtype=np.float32), rtol=1e-4, atol=1e-4)


def test_eigenvectors_jit_vmap():
    """Against JAX's values stored by jax_golden.py."""
    d, e = _operands("random", REAL, False)
    want_values, want_vectors = expected("eigh-tridiagonal/vectors", [d, e])
    values, vectors = linalg.eigh_tridiagonal(d, e)
    assert_close(values, want_values, rtol=2e-6, atol=1e-6)
    assert_close(np.abs(np.asarray(vectors)), np.abs(want_vectors), rtol=1e-3, atol=1e-4)
    only = lambda d, e: linalg.eigh_tridiagonal(d, e, eigvals_only=True)  # noqa: E731
    assert_close(pto.jit(only)(d, e), want_values, rtol=2e-6, atol=1e-6)
    assert_close(pto.vmap(only)(np.stack([d, 2 * d]), np.stack([e, 2 * e]))[1],
                 2 * want_values, rtol=2e-6, atol=2e-6)


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
