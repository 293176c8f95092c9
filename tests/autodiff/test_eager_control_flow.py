"""Eager autodiff sees concrete values, as in JAX: Python ``if``/``while``/recursion, ``int()``,
``.item()``, ``bool()``, list indexing and ``range`` on values work under grad, jvp, vjp,
linearize, jacfwd, jacrev and hessian outside jit (both branches, against JAX on the same
inputs); the same functions under jit (or a pto.jit inlined into grad, or a lax.cond/scan
body, or a checkpoint) still raise ConcretizationError at the user's line; vmap never lets
Python see a mapped value. JAX references run eagerly (they cannot be jitted either)."""
import types

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import ConcretizationError, NonConcreteBooleanIndexError
from helpers import assert_close

F32 = np.float32
COEFFS = [1.5, -2.0, 0.5]


@pytest.fixture(scope="module")
def J(jax):
    return types.SimpleNamespace(jax=jax, np=jax.numpy, lax=jax.lax)


PTO = types.SimpleNamespace(jax=pto, np=pnp, lax=pto.lax)


# functions of one float32 value, written once for both libraries (m: PTO or J) -------------
def piecewise(m, x):
    if x > 0:
        return m.np.sin(x) * x
    return m.np.cos(x) * 2.0


def doubling_loop(m, x):
    while m.np.abs(x) < 10.0:
        x = x * 2.0 + m.np.sin(x)
    return x


def halving(m, x):  # recursion with a value-dependent base case
    return x * x if m.np.abs(x) < 1.0 else halving(m, x / 2.0) + x


def int_steps(m, x):  # int() of a value that carries no derivative (floor)
    for _ in range(int(m.np.floor(m.np.abs(x)))):
        x = m.np.sin(x) + x
    return x


def item_and_bool(m, x):  # .item() of a differentiated value; bool() of a comparison
    scale = x.item()
    return x * scale if bool(x * x > 1.0) and scale < 3.0 else m.np.tanh(x)


def list_lookup(m, x):  # a traced int indexes a Python list
    return x * COEFFS[(m.np.abs(x) * 2.0).astype(m.np.int32) % 3]


def counted_range(m, x):  # range() of a traced int
    total = x
    for i in range(m.np.sum(m.np.arange(4.0) < m.np.abs(x))):
        total = total * m.np.cos(x + i)
    return total


def taylor_sin(m, x):  # Autograd's example: a loop that breaks on a value
    term, total = x, x
    for i in range(100):
        term = -term * x * x / ((2 * i + 3) * (2 * i + 2))
        total = total + term
        if m.np.abs(term) < 1e-3:
            break
    return total


def stop_gradient_float(m, x):  # float() of a value with no derivative is a constant
    return x * float(m.lax.stop_gradient(x)) + m.np.sin(x)


SCALAR_FNS = [piecewise, doubling_loop, halving, int_steps, item_and_bool, list_lookup,
              counted_range, taylor_sin, stop_gradient_float]
POINTS = [F32(1.3), F32(-0.7), F32(2.6), F32(-3.2)]  # both sides of every branch


def vector_fn(m, v):  # a vector output whose formula depends on the values
    if m.np.sum(v) > 0:
        return m.np.sin(v) * v[::-1]
    return m.np.exp(v) * m.np.sum(v * v)


VECTORS = [np.array([0.5, -0.2, 1.1], F32), np.array([-0.5, 0.2, -1.1], F32)]

SCALAR_TRANSFORMS = {
    "grad": lambda m, f: m.jax.grad(f),
    "value_and_grad": lambda m, f: m.jax.value_and_grad(f),
    "jvp": lambda m, f: lambda x: m.jax.jvp(f, (x,), (F32(0.75),)),
    "vjp": lambda m, f: lambda x: (lambda out, back: (out, back(F32(1.5))))(*m.jax.vjp(f, x)),
    "linearize": lambda m, f: lambda x: (lambda out, lin: (out, lin(F32(0.5))))(
        *m.jax.linearize(f, x)),
    "grad_of_grad": lambda m, f: m.jax.grad(m.jax.grad(f)),
    "jacfwd": lambda m, f: m.jax.jacfwd(f),
    "jacrev": lambda m, f: m.jax.jacrev(f),
    "hessian": lambda m, f: m.jax.hessian(f),
}


def _both(fn, transform, J):
    return (SCALAR_TRANSFORMS[transform](PTO, lambda x: fn(PTO, x)),
            SCALAR_TRANSFORMS[transform](J, lambda x: fn(J, x)))


@pytest.mark.parametrize("transform", list(SCALAR_TRANSFORMS))
@pytest.mark.parametrize("fn", SCALAR_FNS, ids=lambda f: f.__name__)
def test_python_control_flow_on_values_matches_jax(fn, transform, J):
    ours, theirs = _both(fn, transform, J)
    for x in POINTS:
        assert_close(ours(x), theirs(x), check_dtype=False, scale=10)


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
def test_jacobian_of_a_vector_function_with_a_branch_matches_jax(transform, J):
    for v in VECTORS:
        assert_close(getattr(pto, transform)(lambda a: vector_fn(PTO, a))(v),
                     getattr(J.jax, transform)(lambda a: vector_fn(J, a))(v), scale=10)


def test_hessian_of_a_branching_scalar_matches_jax(J):
    for v in VECTORS:
        assert_close(pto.hessian(lambda a: pnp.sum(vector_fn(PTO, a)))(v),
                     J.jax.hessian(lambda a: J.np.sum(vector_fn(J, a)))(v), scale=10)


def test_each_call_traces_its_own_path():
    """No specialized trace is reused for an input that takes the other branch."""
    grad = pto.grad(lambda x: piecewise(PTO, x))
    expected = {1.0: np.sin(1.0) + np.cos(1.0), -1.0: 2.0 * np.sin(1.0)}
    for x in (1.0, -1.0, 1.0, -1.0):
        assert_close(grad(F32(x)), F32(expected[x]))


def test_grad_with_respect_to_one_argument_branches_on_another(J):
    def f(m, x, n):
        for _ in range(int(n)):
            x = m.np.sin(x) * 2.0
        return x if n > 1 else -x

    for n in (np.int32(1), np.int32(3)):
        assert_close(pto.grad(lambda x: f(PTO, x, n))(F32(0.4)),
                     J.jax.grad(lambda x: f(J, x, n))(F32(0.4)))


def test_eager_fori_loop_with_concrete_bounds_differentiates_in_reverse(J):
    def f(m, x):
        return m.lax.fori_loop(0, (x * 2).astype(m.np.int32), lambda i, v: v * x, 1.0)

    assert_close(pto.grad(lambda x: f(PTO, x))(F32(2.0)),
                 J.jax.grad(lambda x: f(J, x))(F32(2.0)), check_dtype=False)


def test_concrete_masks_and_lengths_under_grad(J):
    """Boolean-mask indexing and arange lengths take concrete values eagerly."""
    def f(m, v):
        return m.np.sum(v[v > 0] ** 2) + m.np.sum(m.np.arange(m.np.sum(v > 0)) ** 2) * v[0]

    for v in (VECTORS[0], np.array([0.5, 1.5, 1.1], F32)):
        assert_close(pto.grad(lambda a: f(PTO, a))(v), J.jax.grad(lambda a: f(J, a))(v))
    with pytest.raises(NonConcreteBooleanIndexError, match="mask"):     # an IndexError, as JAX's
        pto.jit(pto.grad(lambda a: f(PTO, a)))(VECTORS[0])


def test_output_of_an_inlined_jit_is_concrete_again(J):
    def f(m, x):
        y = m.jax.jit(lambda a: a * 2.0)(x)
        return x ** 3 if y > 0 else x ** 2

    for x in (F32(1.5), F32(-1.5)):
        assert_close(pto.grad(lambda a: f(PTO, a))(x), J.jax.grad(lambda a: f(J, a))(x))


def test_unmapped_vmap_arguments_are_concrete(J):
    def f(m, a, y):
        return a * (2.0 if y > 0 else 3.0)

    for y in (F32(1.0), F32(-1.0)):
        assert_close(pto.vmap(lambda a: f(PTO, a, y))(np.ones(3, F32)),
                     J.jax.vmap(lambda a: f(J, a, y))(np.ones(3, F32)))
        assert_close(pto.vmap(lambda a, b: f(PTO, a, b), in_axes=(0, None))(np.ones(3, F32), y),
                     J.jax.vmap(lambda a, b: f(J, a, b), in_axes=(0, None))(np.ones(3, F32), y))


def test_grad_of_vmap_closing_over_a_concrete_value(J):
    def f(m, x):
        return m.np.sum(m.jax.vmap(lambda a: a * (x if x > 0 else -x))(np.arange(3.0, dtype=F32)))

    for x in (F32(0.5), F32(-0.5)):
        assert_close(pto.grad(lambda a: f(PTO, a))(x), J.jax.grad(lambda a: f(J, a))(x))


# custom rules with Python control flow (JAX's custom derivative tutorial) --------------------
def branching_custom_jvp(m):
    @m.jax.custom_jvp
    def f(x):
        if x > 0:
            return m.np.sin(x)
        return m.np.cos(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        ans = f(x)
        if x > 0:
            return ans, 2 * x_dot
        return ans, 3 * x_dot
    return f


def branching_custom_vjp(m):
    @m.jax.custom_vjp
    def f(x):
        return m.np.sin(x) if x > 0 else m.np.cos(x)

    def f_fwd(x):
        return f(x), (x, 1.0 if x > 0 else -1.0)

    def f_bwd(res, ct):
        x, sign = res
        if x > 0:
            return (2 * ct * sign,)
        return (3 * ct * sign,)

    f.defvjp(f_fwd, f_bwd)
    return f


@pytest.mark.parametrize("make", [branching_custom_jvp, branching_custom_vjp],
                         ids=["custom_jvp", "custom_vjp"])
def test_custom_rules_with_python_control_flow_match_jax(make, J):
    ours, theirs = make(PTO), make(J)
    for x in (F32(1.0), F32(-1.0)):
        assert_close(ours(x), theirs(x))
        assert_close(pto.grad(ours)(x), J.jax.grad(theirs)(x))
        assert_close(pto.value_and_grad(lambda a: ours(a * 2.0))(x),
                     J.jax.value_and_grad(lambda a: theirs(a * 2.0))(x))


def test_custom_jvp_with_python_control_flow_nested_and_forward(J):
    ours, theirs = branching_custom_jvp(PTO), branching_custom_jvp(J)
    for x in (F32(1.0), F32(-1.0)):
        assert_close(pto.grad(pto.grad(ours))(x), J.jax.grad(J.jax.grad(theirs))(x))
        assert_close(pto.jvp(ours, (x,), (F32(1.0),)), J.jax.jvp(theirs, (x,), (F32(1.0),)),
                     check_dtype=False)


# where values stay abstract ---------------------------------------------------------------
def _line_of(fn, text):
    lines, first = __import__("inspect").getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


JIT_CASES = [(piecewise, "if x > 0"), (doubling_loop, "while"), (halving, "return x * x"),
             (int_steps, "int(m.np.floor"), (item_and_bool, "x.item()"),
             (list_lookup, "COEFFS["), (counted_range, "for i in range(")]


@pytest.mark.parametrize("fn, text", JIT_CASES, ids=lambda c: getattr(c, "__name__", ""))
@pytest.mark.parametrize("how", ["jit", "jit_of_grad", "grad_of_jit"])
def test_under_jit_python_control_flow_still_raises_at_the_users_line(fn, text, how):
    f = lambda x: fn(PTO, x)  # noqa: E731
    run = {"jit": pto.jit(f), "jit_of_grad": pto.jit(pto.grad(f)),
           "grad_of_jit": pto.grad(pto.jit(f))}[how]
    with pytest.raises(ConcretizationError) as info:
        run(F32(1.3))
    message = str(info.value)
    assert f"test_eager_control_flow.py:{_line_of(fn, text)}" in message
    assert "pto.lax.cond" in message and "static_argnums" in message
    if how == "grad_of_jit":
        assert "pto.jit" in message


def _jax_concretization_errors(J):
    e = J.jax.errors
    return (e.ConcretizationTypeError, e.TracerIntegerConversionError,
            e.TracerArrayConversionError)


def test_jax_refuses_the_same_things_under_jit(J):
    for fn, _ in JIT_CASES:
        with pytest.raises(_jax_concretization_errors(J)):
            J.jax.grad(J.jax.jit(lambda x: fn(J, x)))(F32(1.3))


@pytest.mark.parametrize("use", ["float", "np.asarray", "tolist"])
def test_python_float_of_a_differentiated_value_raises_as_in_jax(use, J):
    def f(m, x):
        y = x * 2.0
        value = {"float": float, "np.asarray": np.asarray,
                 "tolist": lambda v: v.tolist()}[use](y)
        return x * np.sum(value)

    with pytest.raises(ConcretizationError, match="derivative") as info:
        pto.grad(lambda x: f(PTO, x))(F32(1.0))
    assert "stop_gradient" in str(info.value)
    with pytest.raises(_jax_concretization_errors(J)):
        J.jax.grad(lambda x: f(J, x))(F32(1.0))


def test_vmap_of_a_branch_on_a_mapped_value_raises_as_in_jax(J):
    with pytest.raises(ConcretizationError, match="mapped by vmap") as info:
        pto.vmap(lambda x: piecewise(PTO, x))(np.ones(3, F32))
    assert f"test_eager_control_flow.py:{_line_of(piecewise, 'if x > 0')}" in str(info.value)
    with pytest.raises(ConcretizationError, match="mapped by vmap"):
        pto.vmap(pto.grad(lambda x: piecewise(PTO, x)))(np.ones(3, F32))
    with pytest.raises(ConcretizationError, match="mapped by vmap"):
        pto.jacfwd(lambda v: pto.vmap(lambda x: piecewise(PTO, x))(v))(np.ones(3, F32))
    with pytest.raises(J.jax.errors.ConcretizationTypeError):
        J.jax.vmap(lambda x: piecewise(J, x))(np.ones(3, F32))


@pytest.mark.parametrize("where", ["cond", "scan", "checkpoint"])
def test_bodies_traced_abstractly_stay_abstract_as_in_jax(where, J):
    def f(m, x):
        branch = lambda y: y * (2.0 if y > 0 else 3.0)  # noqa: E731
        if where == "cond":
            return m.lax.cond(x < 10.0, branch, lambda y: y, x)
        if where == "scan":
            return m.lax.scan(lambda c, _: (branch(c), None), x, None, length=2)[0]
        return m.jax.checkpoint(branch)(x)

    with pytest.raises(ConcretizationError):
        pto.grad(lambda x: f(PTO, x))(F32(1.0))
    with pytest.raises(J.jax.errors.ConcretizationTypeError):
        J.jax.grad(lambda x: f(J, x))(F32(1.0))
