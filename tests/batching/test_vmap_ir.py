"""The batched IR itself: one IR with no per-example loop, unbatched sub-computations left
unbatched (no broadcast weights), batch dimensions merged into dot_general and shifted through
reductions without transposes, source lines kept, and every result verified."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.ir import verify


def _eqns(closed):
    """Every equation of ``closed``, including those of sub-IRs in params."""
    from ptojax.ir import sub_irs
    out = []
    for e in closed.eqns:
        out.append(e)
        for sub in sub_irs(e.params):
            out += _eqns(sub)
    return out


def _mlp(np_):
    def forward(params, x):
        for w, b in params:
            x = np_.tanh(x @ w + b)
        return np_.sum(x)
    return forward


@pytest.fixture(scope="module")
def params():
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((5, 7)).astype(np.float32), np.zeros(7, np.float32)),
            (rng.standard_normal((7, 3)).astype(np.float32), np.zeros(3, np.float32))]


@pytest.mark.parametrize("batch", [2, 9])
def test_one_batched_ir_whose_size_does_not_depend_on_the_batch(params, batch):
    xs = np.ones((batch, 5), np.float32)
    single = pto.make_ir(_mlp(pnp))(params, xs[0])
    batched = pto.make_ir(pto.vmap(_mlp(pnp), in_axes=(None, 0)))(params, xs)
    verify(batched)
    assert len(batched.eqns) <= len(single.eqns) + 4  # a few broadcasts and axis moves
    assert batched.out_types[0].shape == (batch,)


@pytest.mark.parametrize("transform", ["forward", "per-example gradient"])
def test_weights_are_never_broadcast_over_the_batch(params, transform):
    xs = np.ones((4, 5), np.float32)
    fn = _mlp(pnp) if transform == "forward" else pto.grad(_mlp(pnp))
    closed = pto.make_ir(pto.vmap(fn, in_axes=(None, 0)))(params, xs)
    verify(closed)
    weights = {v for v in closed.invars[:4] if v.type.ndim == 2}
    # (a bias meets batched activations in an elementwise add, whose operands share a shape:
    # it is broadcast there, as in JAX's jaxprs, which numpy executes as a view)
    for e in _eqns(closed):
        assert not (e.prim.name == "broadcast_in_dim" and e.inputs[0] in weights), \
            f"a weight matrix is broadcast over the batch: {e}"
    for e in closed.eqns:
        if e.prim.name == "dot_general" and transform == "forward":
            assert e.inputs[1] in weights, f"a matmul against a copy of a weight: {e}"


def test_a_computation_on_weights_alone_stays_unbatched():
    w = np.ones((4, 4), np.float32)
    xs = np.ones((6, 4), np.float32)
    closed = pto.make_ir(pto.vmap(lambda x, w: pnp.tanh(w @ w.T) @ x, in_axes=(0, None)))(
        xs, w)
    verify(closed)
    tanh = next(e for e in closed.eqns if e.prim.name == "tanh")
    assert tanh.outputs[0].type.shape == (4, 4)


def test_a_batched_matmul_is_one_dot_general_with_a_batch_dimension():
    a, b = np.ones((3, 4, 5), np.float32), np.ones((5, 6, 3), np.float32)
    closed = pto.make_ir(pto.vmap(lambda x, y: x @ y, in_axes=(0, 2)))(a, b)
    verify(closed)
    assert [e.prim.name for e in closed.eqns] == ["dot_general"]
    (contract, batch) = closed.eqns[0].params["dimension_numbers"]
    assert batch == ((0,), (2,))


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_reductions_shift_their_axes_around_the_batch(in_axis):
    x = np.ones((2, 3, 4), np.float32)
    closed = pto.make_ir(pto.vmap(lambda a: pnp.sum(a, axis=1), in_axes=in_axis,
                                  out_axes=min(in_axis, 1)))(x)
    verify(closed)
    assert [e.prim.name for e in closed.eqns] == ["reduce_sum"]


def test_nested_vmaps_flatten_into_one_ir():
    x = np.ones((2, 3, 4, 5), np.float32)
    f = pto.vmap(pto.vmap(pto.vmap(lambda a: pnp.sum(pnp.exp(a)))))
    closed = pto.make_ir(f)(x)
    verify(closed)
    assert [e.prim.name for e in closed.eqns] == ["exp", "reduce_sum"]
    assert closed.out_types[0].shape == (2, 3, 4)


def test_batched_equations_keep_the_users_source_line():
    def f(a):
        return pnp.sin(a) * 2.0  # the line every batched equation points at

    closed = pto.make_ir(pto.vmap(f))(np.ones((3, 2), np.float32))
    line = f.__code__.co_firstlineno + 1
    assert {e.source.line for e in closed.eqns} == {line}


def test_a_custom_vjp_keeps_an_unbatched_argument_unbatched():
    @pto.custom_vjp
    def scale(w, x):
        return w * x

    scale.defvjp(lambda w, x: (w * x, (w, x)), lambda res, ct: (ct * res[1], ct * res[0]))
    w, xs = np.ones(3, np.float32), np.ones((4, 3), np.float32)
    closed = pto.make_ir(pto.vmap(scale, in_axes=(None, 0)))(w, xs)
    verify(closed)
    call = next(e for e in closed.eqns if e.prim.name == "custom_vjp_call")
    assert [a.type.shape for a in call.inputs] == [(3,), (4, 3)]


def test_a_batched_outer_product_becomes_a_broadcast_multiply():
    """Per-example weight gradients are outer products: as dot_generals with one-element
    contractions they would be batched matmuls of k=1 (slow, and not tileable)."""
    a, b = np.ones((4, 5), np.float32), np.ones((4, 3), np.float32)
    closed = pto.make_ir(pto.vmap(pnp.outer))(a, b)
    verify(closed)
    names = [e.prim.name for e in closed.eqns]
    assert "dot_general" not in names and names[-1] == "mul"
    assert closed.out_types[0].shape == (4, 5, 3)
