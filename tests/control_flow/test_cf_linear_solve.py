"""``lax.custom_linear_solve`` and ``lax.custom_root`` against JAX: solutions and gradients
(to the right-hand side and to what matvec / f close over), pytrees, has_aux, vmap and
errors."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close

A = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, 4.0]], np.float32)
B = np.array([1.0, 2.0, -1.0], np.float32)


def _solve_loss(lib, symmetric):
    def loss(a, b):
        def matvec(x):
            return {"u": a @ x["u"], "v": 2.0 * x["v"]}

        def solve(mv, rhs):
            return {"u": lib.numpy.linalg.solve(a, rhs["u"]), "v": rhs["v"] / 2.0}

        def transpose_solve(vm, rhs):
            return {"u": lib.numpy.linalg.solve(a.T, rhs["u"]), "v": rhs["v"] / 2.0}
        x = lib.lax.custom_linear_solve(matvec, {"u": b, "v": b[:2]}, solve,
                                        None if symmetric else transpose_solve,
                                        symmetric=symmetric)
        return (x["u"] ** 2).sum() + x["v"].sum()
    return loss


@pytest.mark.parametrize("symmetric", [False, True])
def test_custom_linear_solve_matches_jax(jax, symmetric):
    a = A @ A.T if symmetric else A
    ours = pto.value_and_grad(_solve_loss(pto, symmetric), argnums=(0, 1))(a, B)
    theirs = jax.jit(jax.value_and_grad(_solve_loss(jax, symmetric), argnums=(0, 1)))(a, B)
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def _solution(lib, transpose):
    """x(a, b) by custom_linear_solve with an iterative-looking solve (a fixed number of
    Jacobi-preconditioned steps would do; numpy's solve keeps the test exact)."""
    def x_of(a, b):
        solve = lambda mv, r: lib.numpy.linalg.solve(a, r)
        tsolve = (lambda vm, r: lib.numpy.linalg.solve(a.T, r)) if transpose else None
        return lib.lax.custom_linear_solve(lambda x: a @ x, b, solve, tsolve)
    return x_of


def test_custom_linear_solve_forward_mode_matches_jax(jax):
    """jvp in b and in the matrix, jacfwd, jacrev, hessian in b, jit and vmap of them, as
    JAX: forward mode solves db - dA x, reverse mode transposes that."""
    da = np.array([[0.3, -0.2, 0.1], [0.0, 0.5, 0.2], [0.1, 0.0, -0.4]], np.float32)

    def derivatives(lib, a, b):
        x_of = _solution(lib, transpose=True)
        return {"jvp_b": lib.jvp(lambda b: x_of(a, b), (b,), (b[::-1],)),
                "jvp_a": lib.jvp(lambda a: x_of(a, b), (a,), (da,)),
                "jacfwd": lib.jacfwd(x_of, argnums=(0, 1))(a, b),
                "jacrev": lib.jacrev(x_of, argnums=(0, 1))(a, b),
                "hessian_b": lib.hessian(lambda b: (x_of(a, b) ** 2).sum())(b),
                "vmap_jvp": lib.vmap(lambda t: lib.jvp(lambda b: x_of(a, b), (b,), (t,))[1])(
                    np.eye(3, dtype=np.float32))}

    ours = derivatives(pto, A, B)
    theirs = jax.jit(lambda a, b: derivatives(jax, a, b))(A, B)
    assert_close(pto.jit(lambda a, b: derivatives(pto, a, b))(A, B), ours, rtol=1e-6)
    for name in ours:
        assert_close(ours[name], theirs[name], rtol=1e-5, atol=1e-6)
    # forward mode needs no transpose_solve; reverse mode does (a TypeError, as JAX)
    x_of = _solution(pto, transpose=False)
    assert_close(pto.jvp(lambda b: x_of(A, b), (B,), (B,))[1], np.linalg.solve(A, B))
    with pytest.raises(TypeError, match="transpose_solve required"):
        pto.grad(lambda b: x_of(A, b).sum())(B)


def test_custom_linear_solve_derivatives_vmapped_over_matrices():
    """vmap over the matrix the solves close over (batched residuals of the tangent solve):
    jacfwd in b is A^-1, grad in A is -A^-T 1 x^T."""
    x_of = _solution(pto, transpose=True)
    stack = np.stack([A, A + np.eye(3, dtype=np.float32)])
    inverses = pto.vmap(lambda a: pto.jacfwd(lambda b: x_of(a, b))(B))(stack)
    assert_close(inverses, np.linalg.inv(stack), rtol=1e-5, atol=1e-6)
    grads = pto.vmap(pto.grad(lambda a: x_of(a, B).sum()))(stack)
    want = np.stack([-np.outer(np.linalg.solve(a.T, np.ones(3, np.float32)),
                               np.linalg.solve(a, B)) for a in stack])
    assert_close(grads, want, rtol=1e-5, atol=1e-6)


def test_custom_linear_solve_aux_vmap_and_errors():
    def solve_aux(mv, rhs):
        return rhs / 2.0, {"iterations": 1}
    x, aux = pto.lax.custom_linear_solve(lambda x: 2.0 * x, B, solve_aux, symmetric=True,
                                         has_aux=True)
    assert_close(x, B / 2) and aux["iterations"] == 1
    batched = pto.vmap(pto.grad(lambda b: pto.lax.custom_linear_solve(
        lambda x: 4.0 * x, b, lambda mv, r: r / 4.0, symmetric=True).sum()))(np.stack([B, B]))
    assert_close(batched, np.full((2, 3), 0.25, np.float32))
    with pytest.raises(TypeError, match="transpose_solve required"):
        pto.grad(lambda b: pto.lax.custom_linear_solve(lambda x: 2.0 * x, b,
                                                       lambda mv, r: r / 2.0).sum())(B)


def _root_loss(lib):
    def loss(c):
        def newton(f, x0):
            return lib.lax.fori_loop(0, 30, lambda i, x: x - f(x) / (3 * x ** 2), x0)
        x = lib.lax.custom_root(lambda x: x ** 3 - c, np.ones(2, np.float32), newton,
                                lambda g, y: y / g(np.ones(2, np.float32)))
        return (x * np.array([1.0, 2.0], np.float32)).sum()
    return loss


def test_custom_root_matches_jax(jax):
    c = np.array([8.0, 27.0], np.float32)
    ours = pto.value_and_grad(_root_loss(pto))(c)
    theirs = jax.jit(jax.value_and_grad(_root_loss(jax)))(c)
    assert_close(ours, theirs, rtol=1e-5)
    assert_close(ours[1], np.array([1 / 12, 2 / 27], np.float32), rtol=1e-5)
