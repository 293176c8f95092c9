"""JAX's explicit-sharding API on pto.shard: AxisType, make_mesh(axis_types=), set_mesh /
use_mesh, device_put with bare PartitionSpecs, reshard, and jit of functions called with
sharded arrays (partitioned, results left split); the API of JAX's
examples/spmd_mnist_classifier_fromscratch.py end to end on synthetic data."""
import functools
import threading

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import ShardingError
from ptojax.shard.runtime.arrays import ShardedArray
from ptojax.sharding import AxisType, NamedSharding, PartitionSpec as P, reshard
from helpers import assert_close


def test_axis_types_and_make_mesh():
    assert [t.name for t in AxisType] == ["Auto", "Explicit", "Manual"]
    mesh = pto.make_mesh((2, 2), ("a", "b"))
    assert mesh.axis_types == (AxisType.Explicit, AxisType.Explicit)
    auto = pto.make_mesh((2, 2), ("a", "b"), axis_types=(AxisType.Auto, AxisType.Explicit))
    assert auto.axis_types == (AxisType.Auto, AxisType.Explicit) and auto != mesh
    assert "axis_types=(Auto, Explicit)" in repr(auto)
    assert pto.make_mesh((2,), ("a",), devices=pto.devices()[2:4]).devices[0].id == 2
    with pytest.raises(ShardingError, match="axis_types"):
        pto.make_mesh((2, 2), ("a", "b"), axis_types=(AxisType.Auto,))


def test_set_mesh_as_context_and_statement():
    mesh = pto.make_mesh((2,), ("x",))
    assert pto.get_mesh() is None
    with pto.set_mesh(mesh) as entered:
        assert entered is mesh and pto.get_mesh() is mesh
        with pto.sharding.use_mesh(None):
            assert pto.get_mesh() is None
        assert pto.get_mesh() is mesh
    assert pto.get_mesh() is None
    with mesh:
        assert pto.get_mesh() is mesh
    pto.set_mesh(mesh)
    try:
        seen = []
        thread = threading.Thread(target=lambda: seen.append(pto.get_mesh()))
        thread.start()
        thread.join()
        assert pto.get_mesh() is mesh and seen == [None]   # per thread, as JAX
    finally:
        pto.set_mesh(None)
    with pytest.raises(ShardingError, match="Mesh"):
        pto.set_mesh("x")


def test_device_put_and_reshard_with_bare_specs():
    mesh = pto.make_mesh((4,), ("x",))
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(ShardingError, match="set_mesh"):
        pto.device_put(x, P("x"))
    with pto.set_mesh(mesh):
        split = pto.device_put(x, P("x"))
        assert isinstance(split, ShardedArray) and split.sharding == NamedSharding(mesh, P("x"))
        whole = pto.reshard(split, P())
        assert whole.sharding.spec == P() and whole.sharding.mesh == mesh
        tree = reshard({"a": x, "b": [x, x]}, {"a": P("x"), "b": P()})
        assert tree["a"].sharding.spec == P("x") and tree["b"][1].sharding.spec == P()
    assert_close(whole, x)
    assert [np.asarray(s.data).tolist() for s in split.addressable_shards] == \
        [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
    assert pto.sharding.reshard is pto.reshard
    with pytest.raises(ShardingError, match="NamedSharding"):
        pto.reshard(x, "x")


def test_reshard_inside_a_traced_function_is_a_constraint():
    mesh = pto.make_mesh((4,), ("x",))

    def fn(x):
        return pto.reshard(x * 2, P("x")).sum()

    assert "sharding_constraint" in str(pto.make_ir(fn)(np.ones(8)))
    sharded = pto.shard(fn, mesh=mesh, in_specs=(P(),), out_specs=P())
    assert float(sharded(np.ones(8))) == 16.0
    ir = str(pto.make_ir(sharded)(np.ones(8)))
    assert "psum" in ir   # the constraint split the doubling: the sum is combined


def test_jit_of_sharded_arguments_partitions_and_keeps_results_split():
    mesh = pto.make_mesh((4,), ("x",))
    x = pto.device_put(np.arange(8, dtype=np.float32), NamedSharding(mesh, P("x")))
    double = pto.jit(lambda v: v * 2)
    total = pto.jit(lambda v: v.sum())
    doubled = double(x)
    assert isinstance(doubled, ShardedArray) and doubled.sharding.spec == P("x")  # as JAX
    assert total(x).sharding.spec == P()
    assert_close(doubled, np.arange(8, dtype=np.float32) * 2)
    assert float(total(x)) == 28.0
    assert double(doubled).sharding.spec == P("x")          # values stay split between calls
    x32 = np.arange(8, dtype=np.float32)
    assert_close(double(x32), x32 * 2)   # unsharded: the usual path


def test_jit_with_sharded_and_static_arguments():
    mesh = pto.make_mesh((2, 2), ("d", "m"))
    a = pto.device_put(np.arange(16, dtype=np.float32).reshape(4, 4), NamedSharding(mesh, P("d", "m")))
    fn = pto.jit(lambda a, b, *, power: (a @ b) ** power, static_argnames="power")
    b = np.eye(4, dtype=np.float32)
    assert_close(fn(a, b, power=2), (np.arange(16, dtype=np.float32).reshape(4, 4)) ** 2)
    assert_close(fn(a, b, power=1), np.arange(16, dtype=np.float32).reshape(4, 4))


def test_jit_rejects_arguments_on_different_meshes():
    one, two = pto.make_mesh((2,), ("x",)), pto.make_mesh((4,), ("x",))
    a = pto.device_put(np.ones(4), NamedSharding(one, P("x")))
    b = pto.device_put(np.ones(4), NamedSharding(two, P("x")))
    with pytest.raises(ShardingError, match="different meshes"):
        pto.jit(lambda a, b: a + b)(a, b)


# JAX's examples/spmd_mnist_classifier_fromscratch.py, on synthetic data -----------------------
def _predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        activations = pnp.tanh(pnp.dot(activations, w) + b)
    w, b = params[-1]
    logits = pnp.dot(activations, w) + b
    return logits - pto.scipy.special.logsumexp(logits, axis=1, keepdims=True)


def _loss(params, batch):
    inputs, targets = batch
    return -pnp.mean(pnp.sum(_predict(params, inputs) * targets, axis=1))


@functools.partial(pto.jit, donate_argnums=0)
def _train_step(params, batch):
    grads = pto.grad(_loss)(params, batch)
    return [(w - 0.05 * dw, b - 0.05 * db) for (w, b), (dw, db) in zip(params, grads)]


@pto.jit
def _accuracy(params, batch):
    inputs, targets = batch
    return pnp.mean(pnp.argmax(_predict(params, inputs), axis=1) == pnp.argmax(targets, axis=1))


def test_spmd_mnist_example_api():
    rng = np.random.RandomState(0)
    sizes = [12, 16, 4]
    params = [(0.3 * rng.randn(m, n).astype(np.float32), np.zeros(n, np.float32))
              for m, n in zip(sizes[:-1], sizes[1:])]
    centers = rng.randn(4, 12).astype(np.float32) * 2
    labels = rng.randint(0, 4, size=64)
    images = (centers[labels] + rng.randn(64, 12)).astype(np.float32)
    onehot = np.eye(4, dtype=np.float32)[labels]

    mesh = pto.make_mesh((pto.device_count() // 2,), ("batch",),
                         axis_types=(AxisType.Explicit,))
    replicated, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("batch"))
    sharded_params = pto.device_put(params, replicated)
    plain = params
    before = float(_accuracy(sharded_params, (reshard(images, data), reshard(onehot, data))))
    for i in range(0, 64, 16):
        batch = (pto.device_put(images[i:i + 16], data), pto.device_put(onehot[i:i + 16], data))
        with pto.sharding.use_mesh(mesh):
            sharded_params = _train_step(sharded_params, batch)
        plain = _train_step(plain, (images[i:i + 16], onehot[i:i + 16]))
    assert all(isinstance(w, ShardedArray) and w.sharding.spec == P()
               for w, _ in sharded_params)
    assert_close(sharded_params, plain, rtol=1e-5, atol=1e-6)   # data parallel == serial
    after = _accuracy(sharded_params, (reshard(images, data), reshard(onehot, data)))
    assert float(after) > before
