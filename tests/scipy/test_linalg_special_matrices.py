"""``scipy.linalg``'s special-matrix constructors against ``jax.scipy.linalg``'s on the same
inputs: values, shapes, dtypes and weak types (Python scalars, ints, floats, complex, stacks of
vectors broadcast together, empty vectors), JAX's errors, and the gradient, jit and vmap of the
vector-built ones."""
import numpy as np
import pytest

import ptojax as pto
from ptojax.scipy import linalg
from helpers import assert_close
from jax_golden import expected

RNG = np.random.RandomState(0)
F = RNG.randn(5).astype(np.float32)
C = (RNG.randn(3) + 1j * RNG.randn(3)).astype(np.complex64)
INT = np.array([1, 4, 12, 45, 77], np.int32)
STACK = RNG.randn(2, 4).astype(np.float32)
B213, B45 = RNG.randn(2, 1, 3).astype(np.float32), RNG.randn(4, 5).astype(np.float32)

# (function, args, kwargs): each compared with JAX's on the same inputs
CASES = [
    ("toeplitz", (F,), {}), ("toeplitz", (INT,), {}), ("toeplitz", (C,), {}),
    ("toeplitz", (F[:3], F), {}), ("toeplitz", (STACK,), {}), ("toeplitz", (STACK, F[:2]), {}),
    ("toeplitz", (B213, B45), {}), ("hankel", (B213, B45), {}), ("toeplitz", (2.0,), {}),
    ("toeplitz", (F[:3], 1), {}),
    ("toeplitz", (np.zeros(0, np.float32), F), {}), ("hankel", (F,), {}),
    ("hankel", (INT[:3], INT), {}), ("hankel", (STACK, F[:3]), {}), ("hankel", (C,), {}),
    ("hankel", (F[:2], np.zeros(0, np.float32)), {}), ("hankel", (INT[:2], F), {}),
    ("toeplitz", (np.array([True, False]),), {}), ("circulant", (F,), {}),
    ("circulant", (STACK,), {}), ("circulant", (3.0,), {}), ("leslie", (F, F[:4]), {}),
    ("leslie", (STACK, F[:3]), {}), ("leslie", (np.array([0.1, 2.0]), 0.5), {}),
    ("companion", (np.array([1., -10., 31., -30.], np.float32),), {}), ("companion", (INT,), {}),
    ("companion", (STACK,), {}), ("companion", (C,), {}), ("fiedler", (INT,), {}),
    ("fiedler", (STACK,), {}), ("fiedler", (2.5,), {}),
    ("fiedler_companion", (np.array([1., -16., 86., -176., 105.], np.float32),), {}),
    ("fiedler_companion", (STACK,), {}), ("fiedler_companion", (INT[:2],), {}),
    ("fiedler_companion", (INT[:1],), {}),
    ("convolution_matrix", (np.array([-1, 4, -2], np.int32), 5), {"mode": "same"}),
    ("convolution_matrix", (F, 3), {}), ("convolution_matrix", (F[:2], 6), {"mode": "same"}),
    ("convolution_matrix", (STACK, 4), {"mode": "valid"}),
    ("convolution_matrix", (F[:3], 7), {"mode": "valid"}), ("hilbert", (4,), {}),
    ("invhilbert", (1,), {}), ("invhilbert", (5,), {}), ("pascal", (5,), {}),
    ("pascal", (4,), {"kind": "lower"}), ("pascal", (3, "upper"), {}), ("invpascal", (5,), {}),
    ("invpascal", (4,), {"kind": "lower"}), ("invpascal", (3, "upper"), {}), ("helmert", (5,), {}),
    ("helmert", (4,), {"full": True}), ("hadamard", (8,), {}),
    ("hadamard", (4,), {"dtype": np.float32}), ("dft", (5,), {}), ("dft", (4, "sqrtn"), {}),
    ("dft", (3, "n"), {}), ("dft", (4,), {"dtype": np.complex128}),
]


def _weak(x):
    return bool(getattr(x, "weak_type", False) or getattr(getattr(x, "aval", None),
                                                          "weak_type", False))


def _digest_inputs(args):
    return [np.asarray(a) for a in args]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py (JAX in 32-bit mode, as
    the tests compare; eagerly JAX compiled each case: ~10 s in all on a busy machine)."""
    for i, (name, args, kwargs) in enumerate(CASES):
        def run(*_, name=name, args=args, kwargs=kwargs):
            with jax.enable_x64(False):
                return [getattr(jax.scipy.linalg, name)(*args, **kwargs)]
        yield f"special-matrices/{i}-{name}", _digest_inputs(args), run

    def gradients(c, r, stack):
        with jax.enable_x64(False):
            return [*jax.jit(jax.grad(_loss(jax.scipy.linalg), argnums=(0, 1)))(c, r),
                    jax.jit(jax.vmap(jax.scipy.linalg.toeplitz))(stack, stack[:, :3])]
    yield "special-matrices/gradients-vmap", [F[:3], F[1:], STACK], gradients


@pytest.mark.parametrize("index", range(len(CASES)),
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_jax(jax, index):
    """JAX's result type traced (jax.eval_shape), its values stored by jax_golden.py."""
    name, args, kwargs = CASES[index]
    with jax.enable_x64(False):
        traced = jax.eval_shape(lambda: getattr(jax.scipy.linalg, name)(*args, **kwargs))
    (want,) = expected(f"special-matrices/{index}-{name}", _digest_inputs(args))
    got = getattr(linalg, name)(*args, **kwargs)
    assert (got.shape, got.dtype, _weak(got)) == (traced.shape, traced.dtype, traced.weak_type)
    assert (want.shape, want.dtype) == (traced.shape, traced.dtype)
    # (the inverses' binomials come from log-gamma, whose float32 roundings differ from JAX's)
    rtol = 2e-5 if name in ("invhilbert", "invpascal", "pascal") else 2e-6
    assert_close(got, want, rtol=rtol, atol=2e-6)


ERRORS = [
    ("hankel", (2.0,), {}, ValueError, "at least 1-dimensional"),
    ("hankel", (F, 1.0), {}, ValueError, "at least 1-dimensional"),
    ("leslie", (F[:1], F[:0]), {}, ValueError, "at least 2"),
    ("leslie", (F, F), {}, ValueError, "one less than the length of f"),
    ("companion", (F[:1],), {}, ValueError, "at least 2"),
    ("fiedler_companion", (F[:0],), {}, ValueError, "nonzero"),
    ("convolution_matrix", (F, 0), {}, ValueError, "positive integer"),
    ("convolution_matrix", (2.0, 3), {}, ValueError, "at least 1-dimensional"),
    ("convolution_matrix", (F[:0], 3), {}, ValueError, "at least 1"),
    ("convolution_matrix", (F, 3), {"mode": "wrap"}, ValueError, "mode must be one of"),
    ("pascal", (3, "diagonal"), {}, ValueError, "Expected kind"),
    ("invpascal", (3, "diagonal"), {}, ValueError, "Expected kind"),
    ("helmert", (0,), {}, ValueError, "positive integer"),
    ("hadamard", (6,), {}, ValueError, "power of 2"),
    ("hadamard", (2,), {"dtype": bool}, TypeError, ""),
    ("dft", (3, "sqrt"), {}, ValueError, "scale must be"),
    ("dft", (3,), {"dtype": np.float32}, ValueError, "complex floating"),
    ("toeplitz", ([1.0, 2.0],), {}, TypeError, ""),
    ("toeplitz", (STACK, RNG.randn(3, 2)), {}, ValueError, ""),
]


@pytest.mark.parametrize("name,args,kwargs,error,match", ERRORS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(ERRORS)])
def test_errors_as_jax(jax, name, args, kwargs, error, match):
    with jax.enable_x64(False), pytest.raises(error, match=match):
        getattr(jax.scipy.linalg, name)(*args, **kwargs)
    with pytest.raises(error, match=match):
        getattr(linalg, name)(*args, **kwargs)


def _loss(module):
    return lambda c, r: (module.toeplitz(c, r) ** 2).sum() + (
        module.hankel(c, r) * module.circulant(r)[:3, :4]).sum() + (
        module.companion(r) ** 2).sum()


def test_gradients_jit_and_vmap():
    """Against JAX's values stored by jax_golden.py."""
    c, r = F[:3], F[1:]
    loss = _loss
    *want, want_vmap = expected("special-matrices/gradients-vmap", [c, r, STACK])
    got = pto.grad(loss(linalg), argnums=(0, 1))(c, r)
    assert_close(got, tuple(want), rtol=1e-5, atol=1e-5)
    assert_close(pto.vmap(linalg.toeplitz)(STACK, STACK[:, :3]), want_vmap)
    jitted = pto.jit(linalg.convolution_matrix, static_argnums=(1, 2))
    assert_close(jitted(F, 3, "same"), linalg.convolution_matrix(F, 3, "same"))
