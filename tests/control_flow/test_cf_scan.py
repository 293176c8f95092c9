"""``lax.scan`` and ``lax.map`` against JAX: values, reverse-mode gradients (an RNN w.r.t.
weights, initial state and inputs), forward mode, vmap, jit, nested loops; and the shape of
the gradient IR (residuals stacked once, weights not stacked)."""
import numpy as np
import pytest

import ptojax as pto
from cf_helpers import (P, assert_trees_close, check_grad, check_jvp, count_prims, eqns_of,
                        verified)

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.default_rng(3)
T, B, H, D = 6, 3, 5, 4


def rnn_params():
    return (RNG.standard_normal((D, H)) / 2, RNG.standard_normal((H, H)) / 2,
            RNG.standard_normal(H) / 4)


H0 = RNG.standard_normal((B, H))
XS = RNG.standard_normal((T, B, D))


def rnn_loss(m, params, h0, xs):
    wx, wh, b = params

    def step(h, x):
        h = m.np.tanh(x @ wx + h @ wh + b)
        return h, m.np.sum(h ** 2, axis=1)

    h, ys = m.lax.scan(step, h0, xs)
    return m.np.sum(h * h0) + m.np.sum(ys * m.np.arange(1.0, T + 1)[:, None])


def test_rnn_gradient_wrt_weights_initial_state_and_inputs(J):
    check_grad(J, rnn_loss, (rnn_params(), H0, XS), argnums=(0, 1, 2))


def test_rnn_gradient_ir_stacks_only_per_step_residuals_and_hoists_carry_free_matmuls():
    ir = verified(pto.grad(lambda p, h0, xs: rnn_loss(P, p, h0, xs), (0, 1, 2)),
                  rnn_params(), H0, XS)
    forward, backward = eqns_of(ir, "scan")
    assert not forward.params["reverse"] and backward.params["reverse"]
    stacked = [v.type.shape for v in forward.outputs[1 + 1:]]  # after the carry and the ys
    assert stacked == [(T, B, H)] * 3  # h, 1 - tanh(.)^2 and 2 h' (for the ys' h'^2)
    # only h @ wh (forward) and its transpose (backward) stay in the loops; x @ wx and every
    # weight gradient are one matmul over all steps, outside
    assert count_prims(forward.params["body"], "dot_general") == 1
    assert count_prims(backward.params["body"], "dot_general") == 1
    assert backward.params["num_consts"] == 1  # wh, passed whole rather than stacked
    outside = [e for e in ir.eqns if e.prim.name == "dot_general"]
    assert {e.outputs[0].type.shape for e in outside} == {(T, B, H), (D, H), (H, H), (T, B, D)}


def test_rnn_gradient_under_jit_and_vmap_of_grad(J):
    params = rnn_params()
    ours = pto.jit(pto.vmap(pto.grad(lambda h0, xs: rnn_loss(P, params, h0, xs)),
                            in_axes=(0, None)))(np.stack([H0, -H0]), XS)
    theirs = J.vmap(J.grad(lambda h0, xs: rnn_loss(J, params, h0, xs)),
                    in_axes=(0, None))(np.stack([H0, -H0]), XS)
    assert_trees_close(ours, theirs)


def cumulative(m, x, reverse):
    def step(c, v):
        c = c * 0.9 + m.np.sin(v)
        return c, c * v
    c, ys = m.lax.scan(step, x[0] * 0.0, x, reverse=reverse)
    return m.np.sum(ys) + c


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_reverse_values_and_gradient(J, reverse):
    x = RNG.standard_normal(7)
    check_grad(J, lambda m, x: cumulative(m, x, reverse), (x,))


def test_scan_forward_mode(J):
    params, h0 = rnn_params(), H0
    tangents = tuple(RNG.standard_normal(np.shape(a)) for a in (H0, XS))
    check_jvp(J, lambda m, h0, xs: rnn_loss(m, params, h0, xs), (h0, XS), tangents)


def test_linearize_reuses_the_forward_scan(J):
    x = RNG.standard_normal(7)
    out, f_jvp = pto.linearize(lambda x: cumulative(P, x, False), x)
    t = RNG.standard_normal(7)
    _, expected = J.jvp(lambda x: cumulative(J, x, False), (x,), (t,))
    assert_trees_close(f_jvp(t), expected)


def test_hessian_through_scan(J):
    import jax
    x = RNG.standard_normal(4)
    ours = pto.hessian(lambda x: cumulative(P, x, False))(x)
    theirs = J.ref(jax.hessian(lambda x: cumulative(J, x, False)))(x)
    assert_trees_close(ours, theirs)


def pytree_carry(m, state, xs):
    def step(carry, x):
        return {"n": carry["n"] + 1, "acc": (carry["acc"][0] * x, carry["acc"][1] + x)}, \
            {"prod": carry["acc"][0]}
    carry, ys = m.lax.scan(step, state, xs)
    return m.np.sum(carry["acc"][0]) + m.np.sum(carry["acc"][1]) + m.np.sum(ys["prod"]), \
        carry["n"]


def test_scan_pytree_carry_and_integer_counter(J):
    state = {"n": np.int32(0), "acc": (np.ones(3), np.zeros(3))}
    xs = RNG.standard_normal((4, 3))
    assert_trees_close(pytree_carry(P, state, xs), pytree_carry(J, state, xs))
    ours = pto.grad(lambda s, xs: pytree_carry(P, s, xs)[0], argnums=1)(state, xs)
    theirs = J.grad(lambda s, xs: pytree_carry(J, s, xs)[0], argnums=1)(state, xs)
    assert_trees_close(ours, theirs)


def nested(m, w, xs):
    def outer(c, x):
        def inner(d, y):
            return d * m.np.cos(y * w) + y, d.sum()
        d, ds = m.lax.scan(inner, c, m.np.stack([x, x * 2.0]))
        c = m.lax.fori_loop(0, 2, lambda i, a: a * w + i, d)
        return c, ds.sum()
    c, ys = m.lax.scan(outer, xs[0], xs)
    return m.np.sum(c) + m.np.sum(ys)


def test_nested_loops_gradient(J):
    w, xs = np.float64(0.7), RNG.standard_normal((3, 2))
    ir = check_grad(J, nested, (w, xs), argnums=(0, 1))
    assert count_prims(ir, "scan") >= 4


def test_vmap_of_scan_batched_xs_consts_and_carry(J):
    w = RNG.standard_normal((2, 3))  # batched const

    def f(m, w, x0, xs):
        return m.lax.scan(lambda c, x: (m.np.tanh(c * w + x), c.sum()), x0, xs)

    x0, xs = np.zeros(3), RNG.standard_normal((4, 2, 3))  # xs batched at axis 1
    ours = pto.vmap(lambda w, xs: f(P, w, x0, xs), in_axes=(0, 1))(w, xs)
    theirs = J.vmap(lambda w, xs: f(J, w, x0, xs), in_axes=(0, 1))(w, xs)
    assert_trees_close(ours, theirs)
    verified(pto.vmap(lambda w, xs: f(P, w, x0, xs), in_axes=(0, 1)), w, xs)


def test_map_and_scan_without_xs(J):
    xs = RNG.standard_normal((5, 2))
    assert_trees_close(pto.lax.map(lambda x: x.sum() * x, xs), J.lax.map(lambda x: x.sum() * x,
                                                                          xs))
    ours = pto.lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=4)
    theirs = J.lax.scan(lambda c, _: (c * 2.0, c), 1.0, None, length=4)
    assert_trees_close(ours, theirs)


@pytest.mark.parametrize("batch_size", [1, 3, 7, 9])
def test_map_in_batches_values_and_gradient(J, batch_size):
    """batch_size: whole batches (7 = 2 x 3 + 1 leaves a remainder), one batch, fewer slices
    than a batch; a pytree in and out; reverse mode through the batched scan."""
    xs = {"a": RNG.standard_normal((7, 2)), "b": RNG.standard_normal(7)}

    def f(m, xs):
        return m.lax.map(lambda x: (m.np.sin(x["a"]) * x["b"], x["b"] ** 2), xs,
                         batch_size=batch_size)
    assert_trees_close(pto.jit(lambda xs: f(P, xs))(xs), J.ref(lambda xs: f(J, xs))(xs))
    check_grad(J, lambda m, xs: f(m, xs)[0].sum(), (xs,))


@pytest.mark.parametrize("batch_size", [0, -2, 1.5, True])
def test_map_batch_size_must_be_a_positive_int(batch_size):
    with pytest.raises(pto.errors.ControlFlowError, match="batch_size must be a positive int"):
        pto.lax.map(lambda x: x, np.ones(3), batch_size=batch_size)


def test_zero_length_scan_returns_init_and_empty_ys():
    c, ys = pto.lax.scan(lambda c, x: (c + x, c * x), np.ones(2), np.zeros((0, 2)))
    assert_trees_close(c, np.ones(2))
    assert ys.shape == (0, 2)


def test_weak_python_scalar_init_takes_the_carry_dtype():
    c, _ = pto.lax.scan(lambda c, x: (c + x, None), 0.0, np.ones(3, np.float16))
    assert c.dtype == np.float16 and float(c) == 3.0


def test_jit_of_scan_compiles_the_body_once(J):
    f = pto.jit(lambda h0, xs: rnn_loss(P, rnn_params_fixed, h0, xs))
    assert_trees_close(f(H0, XS), rnn_loss(J, rnn_params_fixed, H0, XS))
    assert_trees_close(f(H0 * 2, XS), rnn_loss(J, rnn_params_fixed, H0 * 2, XS))
    assert f.cache_size() == 1


rnn_params_fixed = rnn_params()


W, XS2 = RNG.standard_normal(3), RNG.standard_normal((4, 3))
GRADIENT_CASES = {
    "only_ys_depend_on_inputs":
        lambda m, w, xs: m.lax.scan(lambda c, x: (c + 1, x * w), 0, xs)[1].sum(),
    "carry_swaps_its_parts":
        lambda m, w, xs: m.lax.scan(lambda c, x: ((c[1], c[0] * x), c[0]), (w, w * 2),
                                    xs)[1].sum(),
    "literal_y_and_integer_carry":
        lambda m, w, xs: m.lax.scan(lambda c, x: ((c[0] + 1, c[1] * x * c[0]), 1.0), (0, w),
                                    xs)[0][1].sum(),
    "same_value_twice_as_ys":
        lambda m, w, xs: m.np.sum(m.np.stack(m.lax.scan(lambda c, x: (c * x, (c, c)), w,
                                                        xs)[1])),
    "cond_in_scan":
        lambda m, w, xs: m.lax.scan(lambda c, x: (m.lax.cond(x[0] > 0, lambda a: a * x,
                                                             lambda a: m.np.sin(a) + w, c),
                                                  c.sum()), w, xs)[1].sum(),
    "switch_in_fori":
        lambda m, w, xs: m.lax.fori_loop(0, 4, lambda i, v: m.lax.switch(
            i, [lambda a: a * w, lambda a: m.np.sin(a), lambda a: a + xs[0]], v), w).sum(),
    "scan_in_cond":
        lambda m, w, xs: m.lax.cond(w[0] > 0, lambda a: m.lax.scan(lambda c, x: (c * x, None),
                                                                   a, xs)[0],
                                    lambda a: a * 2.0, w).sum(),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradient_and_vmap_of_gradient_cases(J, name):
    f = GRADIENT_CASES[name]
    check_grad(J, f, (W, XS2), argnums=(0, 1))
    ours = pto.vmap(pto.grad(lambda w, xs: f(P, w, xs), (0, 1)), in_axes=(0, None))
    theirs = J.vmap(J.grad(lambda w, xs: f(J, w, xs), (0, 1)), in_axes=(0, None))
    assert_trees_close(ours(np.stack([W, -W]), XS2), theirs(np.stack([W, -W]), XS2))


def test_collective_over_the_vmap_axis_inside_a_body(J):
    def f(m, xs):
        return m.lax.scan(lambda c, x: (c + m.lax.psum(x, "i"), c), 0.0, xs)

    xs = RNG.standard_normal((5, 4))  # mapped over axis 1
    ours = pto.vmap(lambda x: f(P, x), in_axes=1, axis_name="i")(xs)
    theirs = J.vmap(lambda x: f(J, x), in_axes=1, axis_name="i")(xs)
    assert_trees_close(ours, theirs)
