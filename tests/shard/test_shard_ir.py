"""The per-device programs ``pto.shard`` emits: which collectives, how many, and that the bytes
counted from the IR are the bytes the runtime moves."""
from collections import Counter

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.shard.runtime.in_process import CommunicationLog
from ptojax.shard.runtime.cost import ir_bytes

P = pto.P
D, H, B = 16, 32, 8


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s).astype(np.float32) * 0.1
            for s in ((D, H), (H,), (H, D), (D,), (D, H), (H,), (H, D), (D,))]


def _block(x, w1, b1, w2, b2):
    return x + pnp.maximum(x @ w1 + b1, 0) @ w2 + b2


def mlp(params, x):
    """Two residual Megatron blocks."""
    return _block(_block(x, *params[:4]), *params[4:])


def loss(params, x):
    return pnp.mean(mlp(params, x) ** 2)


TP_SPECS = [P(None, "model"), P("model"), P("model"), P()] * 2
X = np.random.default_rng(1).normal(size=(B, D)).astype(np.float32)


def _body(fn, *args):
    closed = pto.make_ir(fn)(*args)
    (eqn,) = [e for e in closed.eqns if e.prim.name == "shard_map"]
    return eqn.params["body"], eqn.params["mesh"]


def _collectives(body):
    return Counter(e.prim.name for e in body.eqns
                   if getattr(e.prim, "collective", False) and e.prim.name != "axis_index")


def test_tensor_parallel_forward_has_one_all_reduce_per_block():
    mesh = pto.make_mesh((4,), ("model",))
    fn = pto.shard(mlp, mesh=mesh, in_specs=(TP_SPECS, P()), out_specs=P())
    body, _ = _body(fn, _params(), X)
    assert _collectives(body) == {"psum": 2}
    np.testing.assert_allclose(fn(_params(), X), mlp(_params(), X), rtol=1e-5, atol=1e-6)


def test_tensor_parallel_training_step_all_reduces():
    """Forward: one psum per block. Backward: the activation gradient entering each block's
    column-parallel matmul is all-reduced — except into the first block, whose input is data."""
    mesh = pto.make_mesh((4,), ("model",))
    step = pto.shard(pto.value_and_grad(loss), mesh=mesh, in_specs=(TP_SPECS, P()),
                     out_specs=(P(), TP_SPECS))
    body, _ = _body(step, _params(), X)
    assert _collectives(body) == {"psum": 3}
    (l1, g1), (l0, g0) = step(_params(), X), pto.value_and_grad(loss)(_params(), X)
    np.testing.assert_allclose(l1, l0, rtol=1e-5)
    for a, b in zip(g1, g0):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_data_parallel_step_reduces_each_gradient_once():
    mesh = pto.make_mesh((8,), ("data",))
    step = pto.shard(pto.value_and_grad(loss), mesh=mesh, in_specs=(P(), P("data")),
                     out_specs=P())
    body, _ = _body(step, _params(), X)
    counts = _collectives(body)
    assert counts == {"psum": 1 + len(_params())}  # the loss and every gradient
    assert all(e.params["axes"] == ("data",) for e in body.eqns if e.prim.name == "psum")


def test_two_dimensional_mesh_combines_both():
    mesh = pto.make_mesh((2, 4), ("data", "model"))
    step = pto.shard(pto.value_and_grad(loss), mesh=mesh, in_specs=(TP_SPECS, P("data")),
                     out_specs=(P(), TP_SPECS))
    body, _ = _body(step, _params(), X)
    psums = Counter(e.params["axes"] for e in body.eqns if e.prim.name == "psum")
    assert psums[("model",)] == 3
    assert psums[("data",)] == 1 + len(_params())


def test_partial_sums_are_deferred_across_linear_ops():
    """Two matmuls contracting a split dimension, added and scaled: one psum at the end."""
    mesh = pto.make_mesh((8,), ("x",))
    a, b = (np.ones((4, 16), np.float32), np.ones((16, 4), np.float32))
    fn = pto.shard(lambda a, b: (a @ b + (2 * a) @ b) * 0.5, mesh=mesh,
                   in_specs=(P(None, "x"), P("x")), out_specs=P())
    body, _ = _body(fn, a, b)
    assert _collectives(body) == {"psum": 1}
    np.testing.assert_allclose(fn(a, b), (a @ b + (2 * a) @ b) * 0.5)


def test_split_output_of_a_contraction_is_reduce_scattered():
    mesh = pto.make_mesh((8,), ("x",))
    a, b = (np.ones((16, 16), np.float32), np.ones((16, 4), np.float32))
    fn = pto.shard(lambda a, b: a @ b, mesh=mesh, in_specs=(P(None, "x"), P("x")),
                   out_specs=P("x"))
    body, _ = _body(fn, a, b)
    assert _collectives(body) == {"psum_scatter": 1}
    np.testing.assert_allclose(fn(a, b), a @ b)


def test_moving_a_split_between_dimensions_is_all_to_all():
    mesh = pto.make_mesh((8,), ("x",))
    a = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    fn = pto.shard(lambda a: a * 2, mesh=mesh, in_specs=P("x"), out_specs=P(None, "x"))
    body, _ = _body(fn, a)
    assert _collectives(body) == {"all_to_all": 1}
    np.testing.assert_array_equal(fn(a), a * 2)


def test_whole_operand_is_all_gathered():
    mesh = pto.make_mesh((8,), ("x",))
    a = np.random.default_rng(0).normal(size=(16, 4)).astype(np.float32)
    fn = pto.shard(lambda a: pnp.sort(a, axis=0), mesh=mesh, in_specs=P("x"), out_specs=P())
    body, _ = _body(fn, a)
    assert _collectives(body) == {"all_gather": 1}


def test_roll_and_flip_of_a_split_dimension_use_ppermute():
    mesh = pto.make_mesh((8,), ("x",))
    a = np.arange(32, dtype=np.float32)
    for fn, n in ((lambda a: pnp.roll(a, 5), 2), (lambda a: pnp.roll(a, 8), 1),
                  (lambda a: pnp.flip(a), 1)):
        sharded = pto.shard(fn, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
        body, _ = _body(sharded, a)
        assert _collectives(body) == {"ppermute": n}
        np.testing.assert_array_equal(sharded(a), fn(a))


def test_vocab_parallel_embedding_sums_instead_of_gathering_the_table():
    mesh = pto.make_mesh((8,), ("x",))
    table = np.random.default_rng(0).normal(size=(64, 8)).astype(np.float32)
    ids = np.array([[0, 63, 17], [5, 40, 9]], np.int32)
    fn = pto.shard(lambda t, i: pnp.take(t, i, axis=0), mesh=mesh, in_specs=(P("x"), P()),
                   out_specs=P())
    body, _ = _body(fn, table, ids)
    assert _collectives(body) == {"psum": 1}
    np.testing.assert_array_equal(fn(table, ids), table[ids])


def test_sharding_constraint_changes_the_program():
    mesh = pto.make_mesh((8,), ("x",))
    a = np.ones((16, 16), np.float32)
    free = pto.shard(lambda a: pnp.exp(a) @ a, mesh=mesh, in_specs=P(), out_specs=P())
    hinted = pto.shard(lambda a: pto.with_sharding_constraint(pnp.exp(a), P("x")) @ a,
                       mesh=mesh, in_specs=P(), out_specs=P())
    assert _collectives(_body(free, a)[0]) == {}
    assert _collectives(_body(hinted, a)[0]) == {"all_gather": 1}
    np.testing.assert_allclose(hinted(a), free(a), rtol=1e-6)


@pytest.mark.parametrize("mode", ["dp", "tp"])
def test_ir_byte_count_matches_the_runtime(mode):
    mesh = pto.make_mesh((4,), ("d",))
    specs = (P(), P("d")) if mode == "dp" else ([P(None, "d"), P("d"), P("d"), P()] * 2, P())
    step = pto.shard(pto.value_and_grad(loss), mesh=mesh, in_specs=specs,
                     out_specs=(P(), specs[0]))
    body, _ = _body(step, _params(), X)
    expected = ir_bytes(body, mesh)
    with CommunicationLog() as log:
        step(_params(), X)
    assert log.bytes_by_kind == expected
    assert log.total_bytes > 0
