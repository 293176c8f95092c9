"""``lax.custom_linear_solve`` and ``lax.custom_root``: a solver the user supplies, run as
is, with derivatives by implicit differentiation instead of through its iterations.

``custom_root`` is a ``custom_vjp`` function of the initial guess and of the
floating-point traced values the user's ``f`` closes over, made explicit by
``closure_convert``. Its backward pass solves the transposed system with the user's
``tangent_solve`` on the transpose of the linear map, then pulls the result back through the
map's dependence on those values. The solvers' own closed-over values are explicit arguments
too, with zero cotangents (no derivative is taken through a solver, as in JAX); it has
reverse mode only.

``custom_linear_solve`` is a ``custom_jvp`` function of ``b`` and of the values ``matvec``
closes over: its tangent is the solve of ``db - dA x``, a ``linear_call`` of ``solve`` whose
transpose is the backward solve (``transpose_solve`` on the transposed map, or ``solve`` when
``symmetric``), so forward mode, reverse mode (the transpose of forward mode) and their
compositions work, as in JAX.
"""
from __future__ import annotations

from ptojax.autodiff.api import jvp, vjp
from ptojax.autodiff.closure import closure_convert
from ptojax.autodiff.custom_derivatives import custom_jvp, custom_vjp
from ptojax.autodiff.linear_call import linear_call
from ptojax.autodiff.linear_transpose import linear_transpose
from ptojax.ops.arithmetic import neg, sub_p
from ptojax.ops.broadcast import zeros_like
from ptojax.ops.convert import stop_gradient
from ptojax.pytree import tree_map, tree_structure
from ptojax.public import add_examples as _add_examples


def _split_aux(result, has_aux, who):
    if not has_aux:
        return result, None
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise TypeError(f"{who} with has_aux=True must return a pair (solution, aux)")
    return result[0], result[1]


def _check_same_structure(what, got, like):
    if tree_structure(got) != tree_structure(like):
        raise TypeError(f"{what} must have the same pytree structure as b: "
                        f"{tree_structure(got)} != {tree_structure(like)}")


def _transpose_of(fun, x):
    """The transpose of the linear ``fun`` around points like ``x``."""
    transposed = linear_transpose(fun, x)
    return lambda y: transposed(y)[0]


def _pull_back(fun_of_consts, consts, cotangent):
    """``-(d fun / d consts)^T cotangent``: the consts' share of an implicit derivative."""
    if not consts:
        return ()
    _, pullback = vjp(fun_of_consts, *consts)
    return tuple(tree_map(neg, pullback(cotangent)))


def _zeros_like(values):
    return tuple(tree_map(lambda v: v * 0, values))


def _solved(solve, fun, start, has_aux):
    """``solve(fun, start)`` as a function of ``start`` and the traced values ``solve`` and
    ``fun`` close over (their derivatives are not taken through the solver)."""
    def run(start):
        x, aux = _split_aux(solve(fun, start), has_aux, "solve")
        _check_same_structure("solve output", x, start)
        return (x, tree_map(stop_gradient, aux)) if has_aux else x
    return closure_convert(run, start)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """``solve(matvec, b)``, the solution ``x`` of ``matvec(x) = b`` (``b`` a pytree), as
    JAX's ``lax.custom_linear_solve``: derivatives flow to ``b`` and to what ``matvec`` closes
    over by the implicit function theorem, none through ``solve``. Forward mode solves for the
    tangent with ``solve``: ``dx = solve(db - dA x)``; reverse mode transposes that with
    ``transpose_solve(vecmat, ct)`` (or ``solve`` itself when ``symmetric``). With
    ``has_aux``, ``solve`` returns ``(x, aux)`` and so does this (``aux`` without
    derivative)."""
    mv, mv_consts = closure_convert(matvec, b)
    _check_same_structure("matvec output", mv(b, *mv_consts), b)
    run, run_consts = _solved(solve, matvec, b, has_aux)
    if symmetric:
        back, back_consts = _solved(solve, matvec, b, has_aux)
    elif transpose_solve is not None:
        back, back_consts = _solved(transpose_solve, _transpose_of(matvec, b), b, has_aux)
    else:
        back, back_consts = None, ()

    def solution(out):
        return out[0] if has_aux else out

    @custom_jvp
    def solver(b, mv_consts, run_consts, back_consts):
        return run(b, *run_consts)

    @solver.defjvp
    def solver_jvp(primals, tangents):
        b, mv_consts, run_consts, back_consts = primals
        b_dot, mv_consts_dot = tangents[:2]
        out = solver(b, mv_consts, run_consts, back_consts)
        x = solution(out)
        rhs = b_dot
        if mv_consts:   # the matrix's own change: db - dA x
            _, a_dot_x = jvp(lambda *c: mv(x, *c), tuple(mv_consts), tuple(mv_consts_dot))
            rhs = tree_map(sub_p.bind, b_dot, a_dot_x)
        x_dot = linear_call(
            lambda consts, r: solution(run(r, *consts[0])),
            None if back is None else lambda consts, ct: solution(back(ct, *consts[1])),
            (tuple(run_consts), tuple(back_consts)), rhs)
        if has_aux:
            return out, (x_dot, tree_map(zeros_like, out[1]))
        return out, x_dot

    return solver(b, tuple(mv_consts), tuple(run_consts), tuple(back_consts))


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """``solve(f, initial_guess)``, a root ``x`` of ``f``, as JAX's ``lax.custom_root``:
    differentiable in what ``f`` closes over by the implicit function theorem, where
    ``tangent_solve(g, y)`` solves the linear ``g(t) = y`` (``g`` the transposed Jacobian of
    ``f`` at the root, in the backward pass). ``initial_guess`` gets no gradient, and none
    flow through ``solve``."""
    fn, f_consts = closure_convert(f, initial_guess)
    _check_same_structure("f output", fn(initial_guess, *f_consts), initial_guess)
    run, run_consts = _solved(solve, f, initial_guess, has_aux)

    def primal(guess, f_consts, run_consts):
        return run(guess, *run_consts)

    def fwd(guess, f_consts, run_consts):
        out = primal(guess, f_consts, run_consts)
        return out, (out[0] if has_aux else out, guess, f_consts, run_consts)

    def bwd(residuals, ct):
        x, guess, f_consts, run_consts = residuals
        ct_x = ct[0] if has_aux else ct
        _, jacobian_t = vjp(lambda v: fn(v, *f_consts), x)
        lam = tangent_solve(lambda y: jacobian_t(y)[0], ct_x)
        return (tree_map(lambda g: g * 0, guess),
                _pull_back(lambda *c: fn(x, *c), f_consts, lam), _zeros_like(run_consts))

    root = custom_vjp(primal)
    root.defvjp(fwd, bwd)
    return root(initial_guess, tuple(f_consts), tuple(run_consts))


_add_examples(globals(), """
custom_linear_solve:
    >>> a = pnp.array([[2.0, 1.0], [1.0, 3.0]])
    >>> def x_of(a, b):
    ...     return pto.lax.custom_linear_solve(lambda x: a @ x, b,
    ...                                        lambda mv, b: pnp.linalg.solve(a, b),
    ...                                        symmetric=True)
    >>> pto.grad(lambda b: x_of(a, b).sum())(pnp.array([1.0, 1.0]))
    Array([0.4, 0.2], dtype=float32)
custom_root:
    >>> def sqrt_of(c):
    ...     newton = lambda f, x0: pto.lax.fori_loop(0, 20, lambda i, x: x - f(x) / (2 * x), x0)
    ...     return pto.lax.custom_root(lambda x: x ** 2 - c, 1.0, newton,
    ...                                lambda g, y: y / g(1.0))
    >>> pto.grad(sqrt_of)(4.0)
    Array(0.25, dtype=float32, weak_type=True)
""")
