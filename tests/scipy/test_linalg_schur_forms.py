"""``scipy.linalg.schur``, ``rsf2csf`` and ``hessenberg`` against ``jax.scipy.linalg``'s.

A Schur form is not unique (the diagonal's order may differ from LAPACK's), so ``schur`` is
checked by its dtypes (JAX's), ``A = Z T Z^H``, ``Z`` unitary, ``T``'s structure (real:
quasi-triangular, each 2x2 block a complex pair with equal diagonal entries; complex:
triangular) and its eigenvalues (JAX's). ``rsf2csf`` applied to JAX's own real Schur forms
matches JAX's result; ``hessenberg`` (LAPACK's reflectors) matches JAX's ``H`` and ``Q``."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.scipy import linalg
from helpers import assert_close

RNG = np.random.RandomState(0)
MATRICES = {"general": RNG.randn(6, 6), "rotation": np.array([[0., -1.], [1., 0.]]),
            "symmetric": (lambda a: a + a.T)(RNG.randn(4, 4)), "one": np.array([[3.0]]),
            "cyclic": np.roll(np.eye(5), 1, axis=0), "stack": RNG.randn(2, 5, 5),
            "complex": RNG.randn(4, 4) + 1j * RNG.randn(4, 4), "zero": np.zeros((3, 3))}


def _eigenvalues(t):
    """The eigenvalues sorted by rounded real, then imaginary, part (ties stay ties)."""
    values = np.linalg.eigvals(np.asarray(t, np.complex128)).ravel()
    return values[np.lexsort((values.imag.round(3), values.real.round(3)))]


def _check_real_form(t):
    n = t.shape[-1]
    assert_close(np.tril(t, -2), np.zeros_like(t))
    sub = np.diagonal(t, -1, -2, -1)
    for index in np.ndindex(*t.shape[:-2]):
        blocks = np.flatnonzero(sub[index])
        assert not np.any(np.diff(blocks) == 1), "2x2 blocks overlap"
        for k in blocks:
            (a, b), (c, d) = t[index][k:k + 2, k:k + 2]
            assert abs(a - d) <= 1e-5 * max(1, abs(a)) and b * c < 0, (k, n)


@pytest.mark.parametrize("output", ["real", "complex"])
@pytest.mark.parametrize("name", sorted(MATRICES))
def test_schur_matches_jax(jax, name, output):
    a = MATRICES[name].astype(np.complex64 if name == "complex" else np.float32)
    with jax.enable_x64(False):
        want_t, _ = jax.scipy.linalg.schur(a, output)
    t, z = linalg.schur(a, output)
    assert t.dtype == z.dtype == want_t.dtype
    t, z = np.asarray(t), np.asarray(z)
    zh = np.conj(np.swapaxes(z, -1, -2))
    assert_close(z @ t @ zh, a.astype(t.dtype), rtol=1e-5, atol=2e-5)
    assert_close(zh @ z, np.broadcast_to(np.eye(a.shape[-1]), a.shape).astype(t.dtype),
                 rtol=1e-5, atol=2e-6)
    if t.dtype.kind == "c":
        assert_close(np.tril(t, -1), np.zeros_like(t))
    else:
        _check_real_form(t)
    assert_close(_eigenvalues(t), _eigenvalues(want_t), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["general", "rotation", "stack", "one", "symmetric"])
def test_rsf2csf_matches_jax(jax, name):
    a = MATRICES[name].astype(np.float32)
    with jax.enable_x64(False):
        t, z = jax.scipy.linalg.schur(a)
        want = jax.scipy.linalg.rsf2csf(t, z)
    got = linalg.rsf2csf(np.asarray(t), np.asarray(z))
    assert_close(got, tuple(np.asarray(w) for w in want), rtol=2e-5, atol=2e-5)
    t2, z2 = (np.asarray(o) for o in linalg.rsf2csf(*linalg.schur(a)))   # from ours
    assert_close(np.tril(t2, -1), np.zeros_like(t2))
    assert_close(z2 @ t2 @ np.conj(np.swapaxes(z2, -1, -2)), a.astype(t2.dtype), rtol=1e-5,
                 atol=2e-5)


@pytest.mark.parametrize("name", ["general", "symmetric", "one", "stack", "complex", "zero"])
def test_hessenberg_matches_jax(jax, name):
    a = MATRICES[name].astype(np.complex64 if name == "complex" else np.float32)
    with jax.enable_x64(False):
        want = jax.scipy.linalg.hessenberg(a, calc_q=True)
        want_h = jax.scipy.linalg.hessenberg(a)
    got = linalg.hessenberg(a, calc_q=True)
    assert_close(got, tuple(np.asarray(w) for w in want), rtol=2e-5, atol=2e-5)
    assert_close(linalg.hessenberg(a), np.asarray(want_h), rtol=2e-5, atol=2e-5)


def test_jit_vmap_float64_and_errors(jax):
    a = MATRICES["stack"]
    with pto.enable_x64(True):
        t, z = linalg.schur(a)
        assert t.dtype == np.float64
        assert_close(np.asarray(z @ t @ np.swapaxes(z, -1, -2)), a, rtol=1e-12, atol=1e-12)
    a32 = a.astype(np.float32)
    assert_close(pto.jit(linalg.hessenberg)(a32), linalg.hessenberg(a32))
    assert_close(pto.vmap(linalg.rsf2csf)(*linalg.schur(a32)),
                 linalg.rsf2csf(*linalg.schur(a32)))
    t, _ = pto.jit(linalg.schur)(a32)
    _check_real_form(np.asarray(t))
    for fn, args, error, match in [
            ("schur", (np.eye(2, dtype=np.int32),), TypeError, "does not accept dtype"),
            ("schur", (np.ones((2, 3)),), ValueError, "must be a square matrix"),
            ("schur", (np.eye(2), "x"), ValueError, "either 'real' or 'complex'"),
            ("hessenberg", (np.eye(3, dtype=np.int32),), TypeError, "does not accept dtype"),
            ("hessenberg", (np.ones((2, 3)),), ValueError, "must have shape"),
            ("rsf2csf", (np.ones((2, 3)), np.eye(2)), ValueError, "'T' must be square"),
            ("rsf2csf", (np.eye(2), np.eye(3)), ValueError, "shapes must match")]:
        with jax.enable_x64(False), pytest.raises(error, match=match):
            getattr(jax.scipy.linalg, fn)(*args)
        with pytest.raises(error, match=match):
            getattr(linalg, fn)(*args)
    with pytest.raises(NotImplementedError, match="derivative"):
        pto.grad(lambda a: linalg.schur(a)[0].sum())(a32[0])
