"""``scipy.linalg.funm`` and ``solve_sylvester`` against ``jax.scipy.linalg``'s: functions of
general, triangular, symmetric and complex matrices (with ``disp=False``'s error estimate);
Sylvester equations by both methods, real and complex ``C``, stacks, the NaN answer for a
singular equation; jit and vmap; JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy import linalg
from helpers import assert_close

RNG = np.random.RandomState(0)
MATRICES = {"general": RNG.randn(4, 4), "triangular": np.triu(RNG.randn(3, 3)),
            "symmetric": (lambda a: a + a.T)(RNG.randn(3, 3)), "one": np.array([[2.0]]),
            "complex": RNG.randn(3, 3) + 1j * RNG.randn(3, 3)}
CASES = [("general", "sin_cos"), ("triangular", "exp"), ("symmetric", "square"),
         ("one", "exp"), ("complex", "sin_cos")]


def _function(np_like, name):
    if name == "exp":
        return np_like.exp
    if name == "sin_cos":
        return lambda x: np_like.sin(x) + 2 * np_like.cos(x)
    return lambda x: x * x


@pytest.mark.parametrize("matrix,func", CASES)
def test_funm_matches_jax(jax, jnp, matrix, func):
    a = MATRICES[matrix].astype(np.complex64 if matrix == "complex" else np.float32)
    with jax.enable_x64(False):
        want, want_error = jax.scipy.linalg.funm(a, _function(jnp, func), disp=False)
    got, error = linalg.funm(a, _function(pnp, func), disp=False)
    assert got.dtype == want.dtype == np.complex64
    assert_close(got, np.asarray(want), rtol=5e-5, atol=5e-5)
    assert_close(error, np.asarray(want_error), rtol=1e-3, atol=1e-9)


def test_funm_exp_is_expm_and_jit():
    a = MATRICES["general"].astype(np.float32)
    assert_close(linalg.funm(a, pnp.exp).real, linalg.expm(a), rtol=1e-4, atol=1e-4)
    assert_close(pto.jit(lambda a: linalg.funm(a, pnp.exp))(a), linalg.funm(a, pnp.exp))
    with pytest.raises(ValueError, match="expected square"):
        linalg.funm(np.ones((2, 3), np.float32), pnp.exp)


@pytest.mark.parametrize("method", ["schur", "eigen"])
@pytest.mark.parametrize("shapes,complex_c", [(((4, 4), (3, 3), (4, 3)), False),
                                             (((2, 2), (2, 2), (2, 2)), True),
                                             (((2, 3, 3), (2, 2), (2, 3, 2)), False)])
def test_solve_sylvester_matches_jax(jax, method, shapes, complex_c):
    a, b, c = (RNG.randn(*s).astype(np.float32) for s in shapes)
    if complex_c:
        c = (c + 1j * RNG.randn(*c.shape)).astype(np.complex64)
    with jax.enable_x64(False):
        want = jax.scipy.linalg.solve_sylvester(a, b, c, method=method)
    got = linalg.solve_sylvester(a, b, c, method=method)
    assert got.dtype == want.dtype
    assert_close(got, np.asarray(want), rtol=2e-4, atol=2e-4)
    assert_close(np.asarray(a @ got + got @ b), c, rtol=1e-4, atol=1e-4)


def test_solve_sylvester_singular_jit_vmap_errors(jax):
    eye = np.eye(2, dtype=np.float32)
    assert np.isnan(np.asarray(linalg.solve_sylvester(eye, -eye, eye))).all()
    a, b, c = (RNG.randn(3, 2, 2).astype(np.float32) for _ in range(3))
    with jax.enable_x64(False):
        want = jax.vmap(jax.scipy.linalg.solve_sylvester)(a, b, c)
    assert_close(pto.vmap(linalg.solve_sylvester)(a, b, c), np.asarray(want), rtol=2e-4,
                 atol=2e-4)
    assert_close(pto.jit(linalg.solve_sylvester)(a[0], b[0], c[0]),
                 linalg.solve_sylvester(a[0], b[0], c[0]))
    for args, kwargs, match in [((a[0], b[0], np.ones((3, 2), np.float32)), {}, "Incompatible"),
                                ((a[0], b[0], c[0]), {"method": "qr"}, "Unrecognized")]:
        with jax.enable_x64(False), pytest.raises(ValueError, match=match):
            jax.scipy.linalg.solve_sylvester(*args, **kwargs)
        with pytest.raises(ValueError, match=match):
            linalg.solve_sylvester(*args, **kwargs)
