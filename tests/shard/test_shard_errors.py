"""Bad input to ``pto.shard`` raises specific errors that name the value and the user's line."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import CollectiveError, ShardingError

P = pto.P
MESH = pto.make_mesh((4, 2), ("data", "model"))


def _shard(fn, in_specs, out_specs=P()):
    return pto.shard(fn, mesh=MESH, in_specs=in_specs, out_specs=out_specs)


def test_dimension_not_divisible_by_its_mesh_axis():
    fn = _shard(lambda params, x: x, in_specs=({"w": P(), "b": P("model")}, P()))
    with pytest.raises(ShardingError) as e:
        fn({"w": np.ones(4), "b": np.ones(3)}, np.ones(2))
    message = str(e.value)
    assert "[0]['b']" in message and "dimension 0 has size 3" in message
    assert "size 2 of mesh axis 'model'" in message
    assert e.value.source.file == __file__


def test_unknown_axis_name():
    with pytest.raises(ShardingError, match=r"unknown mesh axis 'batch'.*\('data', 'model'\)"):
        _shard(lambda x: x, in_specs=P("batch"))(np.ones(8))
    with pytest.raises(ShardingError, match="shard output 0.*unknown mesh axis 'mdl'"):
        _shard(lambda x: x, in_specs=P("data"), out_specs=P("mdl"))(np.ones(8))


def test_spec_longer_than_rank():
    with pytest.raises(ShardingError, match=r"P\('data', None, 'model'\) has 3 entries but "
                                            r"the value has rank 2"):
        _shard(lambda x: x, in_specs=P("data", None, "model"))(np.ones((8, 8)))


def test_axis_used_twice():
    with pytest.raises(ShardingError, match="mesh axis 'data' is used for more than one"):
        _shard(lambda x: x, in_specs=P("data", "data"))(np.ones((8, 8)))


def test_sharding_constraint_errors_point_at_the_constraint():
    def fn(x):
        y = x * 2
        return pto.with_sharding_constraint(y, P("nope"))  # the line the error names

    with pytest.raises(ShardingError, match="with_sharding_constraint.*unknown mesh axis") as e:
        _shard(fn, in_specs=P())(np.ones(8))
    assert e.value.source.file == __file__
    assert "with_sharding_constraint(y" in open(__file__).read().splitlines()[
        e.value.source.line - 1]


def test_specs_not_a_prefix_of_the_arguments():
    with pytest.raises(ShardingError, match="not a pytree prefix"):
        _shard(lambda a, b: a, in_specs=(P(), P(), P()))(np.ones(2), np.ones(2))


def test_mesh_must_be_a_mesh():
    with pytest.raises(ShardingError, match="needs mesh=pto.Mesh"):
        pto.shard(lambda x: x, mesh=("data",), in_specs=P(), out_specs=P())


def test_collectives_need_shard_map():
    with pytest.raises(CollectiveError, match="unbound axis name 'data'"):
        _shard(lambda x: pto.lax.psum(x, "data"), in_specs=P("data"))(np.ones(8))


def test_make_mesh_needs_enough_devices():
    with pytest.raises(ShardingError, match="needs 1024 devices"):
        pto.make_mesh((32, 32), ("a", "b"))


def test_device_put_checks_its_spec():
    with pytest.raises(ShardingError, match="dimension 1 has size 5"):
        pto.device_put(np.ones((4, 5)), pto.NamedSharding(MESH, P(None, "data")))


def test_returns_use_the_declared_tree():
    fn = _shard(lambda x: (x, pnp.sum(x)), in_specs=P("data"), out_specs=(P("data"), P()))
    a, s = fn(np.arange(8.0))
    np.testing.assert_array_equal(a, np.arange(8.0))
    assert float(s) == 28.0
