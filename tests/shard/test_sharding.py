"""Devices, meshes, PartitionSpecs, NamedShardings and sharded Arrays."""
import numpy as np

import ptojax as pto
from ptojax.sharding import SingleDeviceSharding

P = pto.P


def test_devices():
    devices = pto.devices()
    assert len(devices) == pto.device_count() == pto.local_device_count() >= 8
    assert [d.id for d in devices] == list(range(len(devices)))
    assert pto.process_index() == 0 and pto.process_count() == 1


def test_partition_spec_forms():
    assert P("x", None) == P("x") != P(None, "x")
    assert P(("x",)) == P("x")
    assert P(("x", "y"), None).dims(3) == (("x", "y"), (), ())
    assert repr(P("x", ("y", "z"))) == "P('x', ('y', 'z'))"
    assert hash(P("x")) == hash(P("x", None))


def test_mesh():
    mesh = pto.make_mesh((4, 2), ("data", "model"))
    assert mesh.shape == {"data": 4, "model": 2} and mesh.size == 8
    assert mesh.coords(pto.devices()[5]) == {"data": 2, "model": 1}
    assert mesh.axis_size(("data", "model")) == 8
    assert mesh == pto.make_mesh((4, 2), ("data", "model"))
    assert repr(mesh) == "Mesh('data': 4, 'model': 2)"
    explicit = pto.Mesh(np.array(pto.devices()[:4]).reshape(2, 2), ("a", "b"))
    assert explicit.shape == {"a": 2, "b": 2}


def test_plain_arrays_live_on_one_device():
    x = pnp_array = pto.numpy.arange(6.0)
    assert isinstance(x.sharding, SingleDeviceSharding)
    assert x.sharding.device == pto.devices()[0]
    (shard,) = pnp_array.addressable_shards
    np.testing.assert_array_equal(shard.data, np.arange(6.0))


def test_device_put_splits_and_assembles():
    mesh = pto.make_mesh((4, 2), ("data", "model"))
    value = np.arange(48, dtype=np.float32).reshape(8, 6)
    x = pto.device_put(value, pto.NamedSharding(mesh, P("data", "model")))
    assert x.shape == (8, 6) and x.dtype == np.float32
    shards = x.addressable_shards
    assert len(shards) == 8 and {s.data.shape for s in shards} == {(2, 3)}
    for s in shards:
        np.testing.assert_array_equal(s.data, value[s.index])
    np.testing.assert_array_equal(np.asarray(x), value)
    np.testing.assert_array_equal(x + 1, value + 1)  # a sharded Array is an Array


def test_replicated_axes_hold_copies():
    mesh = pto.make_mesh((4, 2), ("data", "model"))
    x = pto.device_put(np.arange(8.0), pto.NamedSharding(mesh, P("model")))
    blocks = [(s.device.id, tuple(np.asarray(s.data))) for s in x.addressable_shards]
    assert blocks[0][1] == blocks[2][1] == (0.0, 1.0, 2.0, 3.0)
    assert blocks[1][1] == (4.0, 5.0, 6.0, 7.0)


def test_device_put_without_sharding_is_a_plain_array():
    x = pto.device_put(np.arange(3))
    assert type(x) is pto.Array
