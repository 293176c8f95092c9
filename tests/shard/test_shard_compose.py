"""``pto.shard`` composes with the other transforms: jit of everything, grad outside and
inside, jvp, vmap inside and outside, checkpoint and custom derivatives in the function."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from ptojax.eval.array import Array
from ptojax.shard.runtime.arrays import ShardedArray

P = pto.P
MESH = pto.make_mesh((4, 2), ("data", "model"))
_rng = np.random.default_rng(0)
W1 = _rng.normal(size=(6, 8)).astype(np.float32) * 0.3
W2 = _rng.normal(size=(8, 6)).astype(np.float32) * 0.3
X = _rng.normal(size=(8, 6)).astype(np.float32)
SPECS = ((P(None, "model"), P("model")), P("data"))


def loss(params, x):
    w1, w2 = params
    return pnp.mean((pnp.tanh(x @ w1) @ w2 - x) ** 2)


def test_jit_of_shard():
    sharded = pto.shard(loss, mesh=MESH, in_specs=SPECS, out_specs=P())
    assert_close(pto.jit(sharded)((W1, W2), X), loss((W1, W2), X), rtol=1e-6)


def test_jit_of_shard_of_grad_and_of_grad_of_shard():
    want = pto.grad(loss)((W1, W2), X)
    inner = pto.shard(pto.grad(loss), mesh=MESH, in_specs=SPECS, out_specs=SPECS[0])
    outer = pto.grad(pto.shard(loss, mesh=MESH, in_specs=SPECS, out_specs=P()))
    assert_close(pto.jit(inner)((W1, W2), X), want, rtol=1e-5, atol=1e-5, check_dtype=False)
    assert_close(pto.jit(outer)((W1, W2), X), want, rtol=1e-5, atol=1e-5, check_dtype=False)


def test_jvp_of_shard():
    sharded = pto.shard(loss, mesh=MESH, in_specs=SPECS, out_specs=P())
    tangent = (np.ones_like(W1), np.zeros_like(W2))
    got = pto.jvp(lambda p: sharded(p, X), ((W1, W2),), (tangent,))
    want = pto.jvp(lambda p: loss(p, X), ((W1, W2),), (tangent,))
    assert_close(got, want, rtol=1e-5, atol=1e-5, check_dtype=False)


def test_second_order_through_shard():
    f = lambda w: pnp.sum(pnp.sin(X @ w) ** 2)  # noqa: E731
    sharded = pto.shard(f, mesh=MESH, in_specs=P(None, "model"), out_specs=P())
    assert_close(pto.grad(pto.grad(lambda s: sharded(W1 * s)))(1.0),
                 pto.grad(pto.grad(lambda s: f(W1 * s)))(1.0), rtol=1e-4)


def test_vmap_inside_shard():
    per_row = lambda w, row: pnp.tanh(row @ w)  # noqa: E731
    fn = lambda w, x: pto.vmap(per_row, in_axes=(None, 0))(w, x)  # noqa: E731
    sharded = pto.shard(fn, mesh=MESH, in_specs=(P(None, "model"), P("data")),
                        out_specs=P("data", "model"))
    assert_close(sharded(W1, X), np.tanh(X @ W1), rtol=1e-6)


def test_vmap_of_shard():
    sharded = pto.shard(lambda w, x: pnp.sum(pnp.tanh(x @ w), axis=0), mesh=MESH,
                        in_specs=(P(None, "model"), P("data")), out_specs=P())
    ws = np.stack([W1, 2 * W1, -W1])
    assert_close(pto.vmap(sharded, in_axes=(0, None))(ws, X),
                 np.stack([np.tanh(X @ w).sum(0) for w in ws]), rtol=1e-5, atol=1e-6)


def test_checkpoint_and_custom_jvp_inside_shard():
    @pto.custom_jvp
    def softplus(x):
        return pnp.log1p(pnp.exp(x))

    softplus.defjvp(lambda primals, tangents: (softplus(primals[0]),
                                              tangents[0] * pto.nn.sigmoid(primals[0])))

    def f(params, x):
        w1, w2 = params
        h = pto.checkpoint(lambda x: softplus(x @ w1))(x)
        return pnp.mean((h @ w2) ** 2)

    want = pto.value_and_grad(f)((W1, W2), X)
    sharded = pto.shard(pto.value_and_grad(f), mesh=MESH, in_specs=SPECS,
                        out_specs=(P(), SPECS[0]))
    assert_close(sharded((W1, W2), X), want, rtol=1e-5, atol=1e-5, check_dtype=False)
    body = pto.make_ir(sharded)((W1, W2), X).eqns[-1].params["body"]
    assert any(e.prim.name == "checkpoint" for e in body.eqns)


def test_training_loop_keeps_values_split():
    step = pto.shard(lambda p, x: tuple(w - 0.1 * g for w, g in zip(p, pto.grad(loss)(p, x))),
                     mesh=MESH, in_specs=SPECS, out_specs=SPECS[0])
    params, reference = (W1, W2), (W1, W2)
    for _ in range(3):
        params = step(params, X)
        reference = [w - 0.1 * g for w, g in zip(reference, pto.grad(loss)(reference, X))]
    assert all(isinstance(p, ShardedArray) for p in params)
    for p in params:  # nothing assembled the global value
        try:
            Array._value.__get__(p)
            assembled = True
        except AttributeError:
            assembled = False
        assert not assembled
    assert_close(params, reference, rtol=1e-5, atol=1e-5, check_dtype=False)
