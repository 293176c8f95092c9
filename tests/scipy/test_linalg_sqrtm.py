"""``scipy.linalg.sqrtm`` against ``jax.scipy.linalg.sqrtm`` (principal roots of symmetric,
triangular, defective, general real and complex matrices, negative and zero spectra; complex
results; jit and vmap), and the complex Schur decomposition it builds on (``A = Z T Z^H``
with ``T`` upper triangular and ``Z`` unitary, including a stack and a matrix that needs
exceptional shifts)."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.ops.schur import schur
from helpers import assert_close

RNG = np.random.RandomState(0)
MATRICES = {
    "symmetric_indefinite": np.array([[1., 2., 3.], [2., 4., 2.], [3., 2., 1.]]),
    "triangular": np.array([[4., 1.], [0., 9.]]),
    "defective": np.array([[1., 1.], [0., 1.]]),
    "general": RNG.randn(5, 5),
    "complex": RNG.randn(4, 4) + 1j * RNG.randn(4, 4),
    "rotation": np.array([[0., -1.], [1., 0.]]),
    "negative": np.array([[-4.]]),
    "zero": np.zeros((3, 3)),
}


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_sqrtm_matches_jax(jax, name):
    a = MATRICES[name].astype(np.complex64 if name == "complex" else np.float32)
    with jax.enable_x64(False):
        want = jax.jit(jax.scipy.linalg.sqrtm)(a)
    got = pto.scipy.linalg.sqrtm(a)
    assert got.dtype == want.dtype == np.complex64
    assert_close(got, np.asarray(want), rtol=2e-5, atol=2e-5)
    if name != "zero":
        assert_close(got @ got, a.astype(np.complex64), rtol=1e-4, atol=1e-4)


def test_sqrtm_jit_vmap_and_refusals():
    spd = np.array([[2., 1.], [1., 2.]], np.float32)
    stack = np.stack([spd, 4 * np.eye(2, dtype=np.float32)])
    assert_close(pto.jit(pto.scipy.linalg.sqrtm)(spd), pto.scipy.linalg.sqrtm(spd))
    batched = pto.vmap(pto.scipy.linalg.sqrtm)(stack)
    assert_close(batched[1], 2 * np.eye(2, dtype=np.complex64))
    with pytest.raises(NotImplementedError, match="blocksize"):
        pto.scipy.linalg.sqrtm(spd, blocksize=2)
    with pytest.raises(ValueError, match="square"):
        pto.scipy.linalg.sqrtm(np.ones((2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="derivative"):
        pto.grad(lambda a: pto.scipy.linalg.sqrtm(a).real.sum())(spd)


@pytest.mark.parametrize("a", [RNG.randn(3, 6, 6), RNG.randn(7, 7) + 1j * RNG.randn(7, 7),
                               np.roll(np.eye(6), 1, axis=0)])   # cyclic: needs exceptional shifts
def test_complex_schur_reconstructs(a):
    with pto.enable_x64(True):
        t, z = (np.asarray(o) for o in schur(a))
    assert t.dtype == np.complex128
    assert_close(np.tril(t, -1), np.zeros_like(t), atol=1e-12)
    eye = np.broadcast_to(np.eye(a.shape[-1]), a.shape).astype(np.complex128)
    assert_close(z @ np.conj(np.swapaxes(z, -1, -2)), eye, atol=1e-12)
    assert_close(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a.astype(np.complex128), atol=1e-12)
