"""``lax.cond`` and ``lax.switch`` against JAX: values and gradients on every branch (eager
and jit), forward mode, vmap with batched and unbatched predicates and indices, and the
partial-evaluation split (residuals of different branches sharing slots)."""
import numpy as np
import pytest

import ptojax as pto
from cf_helpers import P, assert_trees_close, check_grad, check_jvp, eqns_of, verified

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.default_rng(5)
X = RNG.standard_normal(4)


def two_branches(m, x, y):
    return m.lax.cond(m.np.sum(x) > 0,
                      lambda a, b: m.np.sin(a) * b[0] + m.np.sum(a * a),
                      lambda a, b: m.np.exp(b) * 2.0 - a,
                      x, y)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["true", "false"])
def test_cond_values_and_gradients_on_each_branch(J, sign):
    check_grad(J, lambda m, x, y: m.np.sum(two_branches(m, x, y) ** 2),
               (sign * np.abs(X), RNG.standard_normal(4)), argnums=(0, 1))


def three_branches(m, i, x):
    return m.lax.switch(i, [lambda a: m.np.sum(m.np.sin(a)),
                            lambda a: m.np.sum(a ** 3) * a[1],
                            lambda a: m.np.prod(m.np.cos(a))], x)


@pytest.mark.parametrize("index", [-2, 0, 1, 2, 7])
def test_switch_values_and_gradients_with_clamped_index(J, index):
    check_grad(J, lambda m, x: three_branches(m, index, x), (X,))


def test_cond_forward_mode(J):
    check_jvp(J, lambda m, x, y: two_branches(m, x, y), (X, X * 2), (X * 0.5, -X))


def test_cond_residual_slots_are_shared_by_type():
    """Each branch keeps one f64[4] residual (cos(x), exp(x)): they share one slot."""
    def f(x):
        return pto.lax.cond(x[0] > 0, lambda a: pto.numpy.sum(pto.numpy.sin(a)),
                            lambda a: pto.numpy.sum(pto.numpy.exp(a)), x)
    ir = verified(pto.grad(f), X)
    forward, backward = eqns_of(ir, "cond")
    assert [v.type.shape for v in forward.outputs] == [(), (4,)]
    assert backward.inputs[1] is forward.outputs[1]
    assert_trees_close(pto.grad(f)(X), np.cos(X) if X[0] > 0 else np.exp(X))
    assert_trees_close(pto.grad(f)(-X), np.cos(-X) if -X[0] > 0 else np.exp(-X))


def test_cond_with_integer_and_unused_outputs(J):
    def f(m, x):
        out, count = m.lax.cond(x[0] > 0, lambda a: (a * 2.0, 1), lambda a: (a - 1.0, 2), x)
        return m.np.sum(out ** 2) * count
    check_grad(J, f, (X,))
    check_grad(J, f, (-X,))


def test_vmap_cond_batched_predicate_selects_per_lane(J):
    xs = RNG.standard_normal((6, 3))

    def f(m, x):
        return m.lax.cond(x[0] > 0, lambda a: m.np.sin(a) * 2.0, lambda a: m.np.cos(a).sum()
                          + a, x)

    ours, theirs = pto.vmap(lambda x: f(P, x))(xs), J.vmap(lambda x: f(J, x))(xs)
    assert_trees_close(ours, theirs)
    ir = verified(pto.vmap(lambda x: f(P, x)), xs)
    assert not eqns_of(ir, "cond") and eqns_of(ir, "select")
    grads = pto.vmap(pto.grad(lambda x: f(P, x).sum()))(xs)
    assert_trees_close(grads, J.vmap(J.grad(lambda x: f(J, x).sum()))(xs))


def test_vmap_cond_unbatched_predicate_keeps_one_cond(J):
    xs, flag = RNG.standard_normal((6, 3)), np.float64(1.0)

    def f(m, p, x):
        return m.lax.cond(p > 0, lambda a: a * 3.0, lambda a: -a, x)

    ir = verified(pto.vmap(lambda x: f(P, flag, x)), xs)
    assert len(eqns_of(ir, "cond")) == 1
    assert_trees_close(pto.vmap(lambda x: f(P, flag, x))(xs),
                       J.vmap(lambda x: f(J, flag, x))(xs))


def test_vmap_switch_batched_index(J):
    indices = np.array([0, 2, 1, 5, -1], np.int32)
    ours = pto.vmap(lambda i: three_branches(P, i, X))(indices)
    theirs = J.vmap(lambda i: three_branches(J, i, X))(indices)
    assert_trees_close(ours, theirs)


def test_jit_of_cond_and_switch(J):
    f = pto.jit(lambda i, x: three_branches(P, i, x))
    for i in range(3):
        assert_trees_close(f(np.int32(i), X), three_branches(J, i, X))
    assert f.cache_size() == 1


def test_cond_closure_values_become_operands():
    y = np.arange(3.0)

    def f(x):
        return pto.lax.cond(x > 0, lambda: y * x, lambda: y + 1.0)

    ir = verified(f, np.float64(2.0))
    (eqn,) = eqns_of(ir, "cond")
    for branch in eqn.params["branches"]:
        assert not branch.ir.constvars and not branch.consts
        assert len(branch.ir.invars) == len(eqn.inputs) - 1
    assert ir.ir.invars[0] in eqn.inputs  # x, captured by the true branch
    assert_trees_close(f(np.float64(2.0)), y * 2.0)
