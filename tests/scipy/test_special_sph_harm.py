"""``sph_harm_y`` against ``jax.scipy.special.sph_harm_y`` (and SciPy's, where installed) on
the same random degrees, orders and angles, float32 and float64: values, dtypes, ``n_max``
clipping, scalar ``theta``, gradients in the angles, ``jit`` and errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from jax_golden import expected

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

_rng = np.random.default_rng(0)
N = _rng.integers(0, 7, 20).astype(np.int32)
M = np.array([_rng.integers(-n, n + 1) for n in N], np.int32)
THETA, PHI = _rng.uniform(0, np.pi, 20), _rng.uniform(0, 2 * np.pi, 20)
TOL = {np.float32: 2e-6, np.float64: 1e-13}


def _harmonics(special, grad, n, m, theta, phi):
    """The harmonics (``n_max`` 6, and 3: clipped) and the gradient of a real function of
    them in ``theta`` and ``phi``."""
    def total(theta, phi):
        y = special.sph_harm_y(n, m, theta, phi, n_max=6)
        return (y.real + 2 * y.imag).sum()
    return (special.sph_harm_y(n, m, theta, phi, n_max=6),
            special.sph_harm_y(n, m, theta, phi, n_max=3),
            grad(total, argnums=(0, 1))(theta, phi))


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py (compiling JAX's program
    took 5-8 s a dtype)."""
    import jax.scipy.special as jsp
    for dtype in (np.float32, np.float64):
        yield (f"sph-harm/{np.dtype(dtype).name}", _args(dtype), jax.jit(
            lambda *a: jax.tree_util.tree_leaves(_harmonics(jsp, jax.grad, *a))))


def _args(dtype):
    return [N, M, THETA.astype(dtype), PHI.astype(dtype)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sph_harm_y_matches_jax(dtype):
    """Against JAX's values stored by jax_golden.py."""
    args = _args(dtype)
    y6, y3, *grads = expected(f"sph-harm/{np.dtype(dtype).name}", args)
    want = (y6, y3, tuple(grads))
    got = _harmonics(pto.scipy.special, pto.grad, *map(pnp.asarray, args))
    assert_close(got[:2], want[:2], rtol=TOL[dtype], atol=TOL[dtype])
    assert_close(got[2], want[2], rtol=TOL[dtype] * 10, atol=TOL[dtype] * 10)
    jitted = pto.jit(lambda *a: _harmonics(pto.scipy.special, pto.grad, *a))
    assert_close(jitted(*map(pnp.asarray, args)), got)
    if dtype == np.float64:
        scipy_special = pytest.importorskip("scipy.special")
        assert_close(got[0], scipy_special.sph_harm_y(N, M, THETA, PHI), rtol=1e-12,
                     atol=1e-13)


def test_sph_harm_y_scalar_theta_and_errors(jax, jnp):
    n, m, phi = np.array([2, 3], np.int32), np.array([1, -2], np.int32), np.array([0.3, 1.0])
    got = pto.scipy.special.sph_harm_y(pnp.asarray(n), pnp.asarray(m), 0.7, pnp.asarray(phi))
    want = jax.scipy.special.sph_harm_y(jnp.asarray(n), jnp.asarray(m), 0.7, jnp.asarray(phi))
    assert_close(got, np.asarray(want), rtol=1e-13, atol=1e-14)
    with pytest.raises(NotImplementedError, match="diff_n"):
        pto.scipy.special.sph_harm_y(pnp.asarray(n), pnp.asarray(m), 0.7, pnp.asarray(phi),
                                     diff_n=1)
    with pytest.raises(TypeError, match="n_max"):
        pto.jit(lambda n: pto.scipy.special.sph_harm_y(n, pnp.asarray(m), 0.7,
                                                       pnp.asarray(phi)))(pnp.asarray(n))
