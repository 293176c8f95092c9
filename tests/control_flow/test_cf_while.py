"""``lax.while_loop`` and ``lax.fori_loop`` against JAX: fori_loop in reverse mode (static
bounds become a scan), Newton's method in forward mode, vmap with lane-dependent trip counts,
jit; and ``while_loop(max_steps=)`` in reverse mode (a masked scan), beyond JAX."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from cf_helpers import (P, assert_trees_close, check_grad, check_jvp, count_prims, eqns_of,
                        verified)
from ptojax import lax
from ptojax.errors import ControlFlowError, UnsupportedError

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.default_rng(11)
X = RNG.standard_normal(3)


def fori_power(m, w, x, lower=1, upper=6):
    return m.np.sum(m.lax.fori_loop(lower, upper, lambda i, v: m.np.sin(v * w) + v * i / 3.0,
                                    x))


def test_fori_loop_static_bounds_reverse_mode(J):
    ir = check_grad(J, fori_power, (np.float64(0.8), X), argnums=(0, 1))
    assert count_prims(ir, "scan") == 2 and count_prims(ir, "while") == 0


def test_fori_loop_empty_range(J):
    check_grad(J, lambda m, w, x: fori_power(m, w, x, 4, 2), (np.float64(0.8), X),
               argnums=(0, 1))


def test_fori_loop_traced_bounds_is_a_while(J):
    def f(m, n, x):
        return m.lax.fori_loop(0, n, lambda i, v: v * 1.5 + i, x)

    ir = verified(lambda n, x: f(P, n, x), np.int32(4), X)
    assert count_prims(ir, "while") == 1
    assert_trees_close(pto.jit(lambda n, x: f(P, n, x))(np.int32(4), X), f(J, 4, X))
    check_jvp(J, lambda m, x: f(m, np.int32(3), x), (X,), (np.ones(3),))


def newton_sqrt(m, a):
    def body(state):
        x, steps = state
        return (x + a / x) / 2.0, steps + 1

    x, steps = m.lax.while_loop(lambda s: m.np.abs(s[0] * s[0] - a) > 1e-12 * a, body, (a, 0))
    return x, steps


def test_newton_method_forward_mode(J):
    a = np.array(7.0)
    assert_trees_close(newton_sqrt(P, a), newton_sqrt(J, a))
    check_jvp(J, newton_sqrt, (a,), (np.array(1.0),))
    assert_trees_close(pto.jvp(lambda a: newton_sqrt(P, a)[0], (a,), (np.array(1.0),))[1],
                       0.5 / np.sqrt(a))


def test_jacfwd_of_newton_batches_the_tangents(J):
    import jax
    a = np.array([2.0, 9.0, 30.0])
    ours = pto.jacfwd(lambda a: pto.vmap(lambda v: newton_sqrt(P, v)[0])(a))(a)
    theirs = jax.jacfwd(lambda a: jax.vmap(lambda v: newton_sqrt(J, v)[0])(a))(a)
    assert_trees_close(ours, theirs, rtol=1e-8)


def test_vmap_while_lane_dependent_trip_counts(J):
    limits = np.array([0, 3, 1, 7, 4], np.int32)

    def f(m, n, x):
        return m.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0),
                                (0, x))

    xs = RNG.standard_normal(5)
    ours = pto.vmap(lambda n, x: f(P, n, x))(limits, xs)
    assert_trees_close(ours, J.vmap(lambda n, x: f(J, n, x))(limits, xs))
    ir = verified(pto.vmap(lambda n, x: f(P, n, x)), limits, xs)
    (loop,) = eqns_of(ir, "while")
    assert count_prims(loop.params["cond"], "reduce_or") == 1  # runs while any lane runs
    assert count_prims(loop.params["body"], "select") == 2     # finished lanes keep their carry


def test_vmap_while_unbatched_predicate_keeps_carries_unbatched(J):
    def f(m, x):
        return m.lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))

    ir = verified(pto.vmap(lambda x: f(P, x)), X)
    (loop,) = eqns_of(ir, "while")
    assert loop.outputs[0].type.shape == ()  # the counter stays a scalar
    assert_trees_close(pto.vmap(lambda x: f(P, x))(X), J.vmap(lambda x: f(J, x))(X))


def test_while_loop_reverse_mode_needs_max_steps():
    with pytest.raises(UnsupportedError, match="fori_loop.*scan.*max_steps") as info:
        pto.grad(lambda a: newton_sqrt(P, a)[0])(np.array(7.0))
    assert "test_cf_while.py" in str(info.value)  # the user's while_loop line


def test_while_loop_max_steps_reverse_mode():
    def f(a):
        return pto.lax.while_loop(lambda x: pto.numpy.abs(x * x - a) > 1e-12 * a,
                                  lambda x: (x + a / x) / 2.0, a, max_steps=40)

    a = np.array(7.0)
    assert_trees_close(pto.grad(f)(a), 0.5 / np.sqrt(a))
    assert_trees_close(pto.jit(pto.grad(f))(a), 0.5 / np.sqrt(a))
    ir = verified(pto.grad(f), a)
    assert count_prims(ir, "while") == 0 and count_prims(ir, "scan") == 2
    batched = pto.vmap(pto.grad(f))(np.array([2.0, 7.0, 30.0]))
    assert_trees_close(batched, 0.5 / np.sqrt([2.0, 7.0, 30.0]))


def test_while_loop_max_steps_caps_the_trip_count(J):
    def f(x):
        return pto.lax.while_loop(lambda c: c < 100.0, lambda c: c * 2.0, x, max_steps=3)

    assert_trees_close(f(np.array(1.0)), 8.0)
    assert_trees_close(pto.grad(f)(np.array(1.0)), 8.0)
    assert_trees_close(pto.vmap(f)(np.array([1.0, 30.0, 200.0])), np.array([8.0, 120.0, 200.0]))
    assert_trees_close(pto.vmap(pto.grad(f))(np.array([1.0, 30.0, 200.0])),
                       np.array([8.0, 4.0, 1.0]))


def test_jit_of_while_and_fori(J):
    f = pto.jit(lambda a: newton_sqrt(P, a)[0])
    assert_trees_close(f(np.array(5.0)), np.sqrt(5.0))
    g = pto.jit(lambda w, x: fori_power(P, w, x))
    assert_trees_close(g(np.float64(0.8), X), fori_power(J, np.float64(0.8), X))


@pytest.mark.usefixtures("ptojax_default_mode")
def test_weak_carries_stay_weak_as_jax(jax):
    """A Python-scalar carry stays weakly typed through while/fori/scan while the body keeps
    it weak (scan's stacked ys too), and becomes strong when the body makes it strong."""
    programs = [
        lambda lax, np_: lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0),
        lambda lax, np_: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2.0, c[1] + 1),
                                        (1.0, 0)),
        lambda lax, np_: lax.fori_loop(0, 3, lambda i, c: c + 1, 0),
        lambda lax, np_: lax.scan(lambda c, x: (c + 1, c), 0, None, length=2),
        lambda lax, np_: lax.fori_loop(0, 3, lambda i, c: c + np_.int32(1), 0),
        lambda lax, np_: lax.scan(lambda c, x: (c * x, c), 1.0, np_.ones(2, np_.float32)),
    ]
    for program in programs:
        with jax.enable_x64(False):
            want = program(jax.lax, jax.numpy)
        got = program(pto.lax, pnp)
        assert repr(got) == repr(want)
        assert repr(pto.jit(lambda: program(pto.lax, pnp))()) == repr(want)


@pytest.mark.usefixtures("ptojax_default_mode")
def test_fori_loop_index_type_as_jax(jax):
    """fori_loop's index ``i`` has JAX's type: with bounds known while tracing it counts from
    the Python int ``int(lower)`` (a weak int32, whatever the bounds' dtype), so an int8 carry
    plus ``i`` stays int8; with traced bounds it has their common dtype, weak when ``lower``
    is a Python int. ``unroll`` is accepted with static bounds only."""
    programs = {
        "int8 carry + i": lambda lax, np_: lax.fori_loop(0, 4, lambda i, c: c + i,
                                                        np_.int8(1)),
        "i * float16": lambda lax, np_: lax.fori_loop(1, 3, lambda i, c: c * i,
                                                     np_.float16(1.5)),
        "int16 bounds, int8 carry": lambda lax, np_: lax.fori_loop(
            np_.int16(0), np_.int16(3), lambda i, c: c + i, np_.int8(0)),
        "weak carry + i": lambda lax, np_: lax.fori_loop(0, 3, lambda i, c: c + i, 0),
        "unroll=2": lambda lax, np_: lax.fori_loop(0, 5, lambda i, c: c * 1.5 + i, 1.0,
                                                   unroll=2),
        "unroll=True": lambda lax, np_: lax.fori_loop(0, 3, lambda i, c: c + i, 0.5,
                                                      unroll=True),
    }
    for name, program in programs.items():
        with jax.enable_x64(False):
            want = program(jax.lax, jax.numpy)
        for mode, got in (("eager", program(pto.lax, pnp)),
                          ("jit", pto.jit(lambda: program(pto.lax, pnp))())):
            assert repr(got) == repr(want), f"{name} ({mode})"
    traced = {
        "python lower": lambda lax, np_, n: lax.fori_loop(0, n, lambda i, c: c + i, 0),
        "python lower, int8 carry": lambda lax, np_, n: lax.fori_loop(
            0, n, lambda i, c: c + i, np_.int8(1)),
        "int16 bounds": lambda lax, np_, n: lax.fori_loop(
            np_.int16(1), n.astype(np_.int16), lambda i, c: c + i, np_.int16(0)),
        "python lower, int16 upper": lambda lax, np_, n: lax.fori_loop(
            0, n.astype(np_.int16), lambda i, c: c * 2 + i, np_.int32(1)),
    }
    for name, program in traced.items():
        with jax.enable_x64(False):
            want = jax.jit(lambda n: program(jax.lax, jax.numpy, n))(np.int32(4))
        got = pto.jit(lambda n: program(pto.lax, pnp, n))(np.int32(4))
        assert repr(got) == repr(want), name


@pytest.mark.usefixtures("ptojax_default_mode")
def test_fori_loop_bound_types_and_unroll_errors_as_jax(jax):
    """Bounds of different dtypes: a Python int next to a signed integer takes its dtype;
    any other pair is a TypeError, as in JAX. ``unroll`` with traced bounds is an error."""
    body = lambda i, c: c + 1
    for lower, upper in ((np.int8(0), np.int16(3)), (0, np.uint8(3)), (np.uint8(0), 3)):
        with jax.enable_x64(False), pytest.raises(TypeError):
            jax.lax.fori_loop(lower, upper, body, 0)
        with pytest.raises(TypeError, match="fori_loop: lower .* and upper .* must have the "
                                            "same dtype"):
            lax.fori_loop(lower, upper, body, 0)
    with jax.enable_x64(False), pytest.raises(ValueError):
        jax.jit(lambda n: jax.lax.fori_loop(0, n, body, 0, unroll=2))(3)
    with pytest.raises(ControlFlowError, match="unroll is only allowed when the loop bounds "
                                                "are known"):
        pto.jit(lambda n: lax.fori_loop(0, n, body, 0, unroll=2))(3)
    for bad in (-1, 2.5):
        with jax.enable_x64(False), pytest.raises((TypeError, ValueError)):
            jax.lax.fori_loop(0, 3, body, 0, unroll=bad)
        for loop in (lambda: lax.fori_loop(0, 3, body, 0, unroll=bad),
                     lambda: lax.scan(lambda c, x: (c, x), 0, np.ones(2), unroll=bad)):
            with pytest.raises(ControlFlowError, match="unroll must be a bool or a "
                                                       "non-negative int"):
                loop()
    for fine in (0, 1, 3, False):   # 0 and 1: no unrolling, as in JAX
        assert int(lax.fori_loop(0, 3, body, 0, unroll=fine)) == 3
        assert int(lax.scan(lambda c, x: (c + x, x), 0, np.ones(2, np.int32),
                            unroll=fine)[0]) == 2
