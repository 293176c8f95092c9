"""Manual mode: ``pto.shard_map`` with explicit collectives matches JAX's ``shard_map``
(check_vma=False) value for value, and its errors are specific."""
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import CollectiveError, ShapeError, ShardingError
from helpers import assert_close
from shard_map_cases import CASES, build

P = pto.P
HERE = os.path.dirname(__file__)


def _namespace():
    ns = types.SimpleNamespace(lax=pto.lax, np=pnp, grad=pto.grad, P=pto.P)
    ns.mesh = lambda shape, names: pto.make_mesh(shape, names)
    ns.shard_map = lambda fn, mesh, in_specs, out_specs: pto.shard_map(
        fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_rep=False)
    return ns


@pytest.fixture(scope="module")
def jax_results(tmp_path_factory):
    pytest.importorskip("jax")
    path = tmp_path_factory.mktemp("jax") / "shard_map.npz"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, os.path.join(HERE, "jax_shard_map_reference.py"),
                    str(path)], check=True, env=env, timeout=120)
    return dict(np.load(path))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_shard_map(name, jax_results):
    fn, inputs = build(_namespace(), name)
    assert_close(fn(*inputs), jax_results[name], rtol=1e-5, atol=1e-5)


def test_grad_through_shard_map_matches_jax(jax_results):
    fn, inputs = build(_namespace(), "grad_inside")
    got = pto.grad(lambda w, a: pnp.sum(fn(w, a) ** 2))(*inputs)
    assert_close(got, jax_results["grad_outside"], rtol=1e-5, atol=1e-5)


def test_jit_and_eager_agree():
    fn, inputs = build(_namespace(), "norm_layer")
    assert_close(pto.jit(fn)(*inputs), fn(*inputs))


def test_eager_call_returns_sharded_arrays():
    mesh = pto.make_mesh((4,), ("x",))
    fn = pto.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    out = fn(np.arange(8.0, dtype=np.float32))
    assert out.sharding == pto.NamedSharding(mesh, P("x"))
    assert [s.data.shape for s in out.addressable_shards] == [(2,)] * 4
    assert_close(out, np.arange(8.0, dtype=np.float32) * 2)


def test_replicated_inputs_need_no_collective_for_value_grads():
    mesh = pto.make_mesh((8,), ("x",))
    w = np.ones((3, 2), np.float32)
    a = np.arange(48, dtype=np.float32).reshape(16, 3) / 48

    def loss(w, a):
        return pto.lax.psum(pnp.sum(pnp.tanh(a @ w)), "x")

    sm = pto.shard_map(loss, mesh=mesh, in_specs=(P(), P("x")), out_specs=P())
    reference = pto.grad(lambda w: pnp.sum(pnp.tanh(a @ w)))(w)
    assert_close(pto.grad(sm)(w, a), reference, rtol=1e-5, atol=1e-6)
    assert_close(pto.jit(pto.grad(sm))(w, a), reference, rtol=1e-5, atol=1e-6)


def test_vmap_of_shard_map():
    mesh = pto.make_mesh((4,), ("x",))
    sm = pto.shard_map(lambda a: pto.lax.psum(pnp.sum(a, axis=0), "x"), mesh=mesh,
                       in_specs=P("x"), out_specs=P())
    batch = np.arange(3 * 8 * 2, dtype=np.float32).reshape(3, 8, 2)
    assert_close(pto.vmap(sm)(batch), batch.sum(axis=1))


def test_collective_ir_shows_local_shapes():
    mesh = pto.make_mesh((4, 2), ("x", "y"))
    sm = pto.shard_map(lambda a: pto.lax.all_gather(a, "y", axis=1, tiled=True), mesh=mesh,
                       in_specs=P("x", "y"), out_specs=P("x"))
    text = str(pto.make_ir(sm)(np.zeros((8, 6), np.float32)))
    assert "f32[2,3]" in text
    assert "all_gather[axes=('y',) axis_size=2 dim=1 tiled=True]" in text


# errors ------------------------------------------------------------------------------------------
def test_out_specs_claiming_replication_of_a_varying_value():
    mesh = pto.make_mesh((4,), ("x",))
    bad = pto.shard_map(lambda a: pnp.sum(a), mesh=mesh, in_specs=P("x"), out_specs=P())
    with pytest.raises(ShardingError, match=r"replicated over mesh axis 'x'.*varies") as e:
        bad(np.ones(8, np.float32))
    assert e.value.source.file == __file__


def test_axis_index_makes_values_vary():
    mesh = pto.make_mesh((4,), ("x",))
    bad = pto.shard_map(lambda a: a + pto.lax.axis_index("x"), mesh=mesh, in_specs=P(),
                        out_specs=P())
    with pytest.raises(ShardingError, match="varies across 'x'"):
        bad(np.ones(3, np.int32))
    good = pto.shard_map(lambda a: pto.lax.psum(a + pto.lax.axis_index("x"), "x"), mesh=mesh,
                         in_specs=P(), out_specs=P())
    assert_close(good(np.ones(3, np.int32)), np.full(3, 4 + 6, np.int32))


def test_not_divisible_names_argument_dim_and_sizes():
    mesh = pto.make_mesh((4,), ("x",))
    fn = pto.shard_map(lambda a, b: a, mesh=mesh, in_specs=(P(), P(None, "x")),
                       out_specs=P())
    with pytest.raises(ShardingError, match=r"argument \[1\].*dimension 1 has size 6.*"
                                            r"not divisible by the size 4 of mesh axis 'x'"):
        fn(np.ones(2), np.ones((3, 6)))


def test_unknown_axis_and_too_long_spec():
    mesh = pto.make_mesh((4,), ("x",))
    with pytest.raises(ShardingError, match="unknown mesh axis 'model'"):
        pto.shard_map(lambda a: a, mesh=mesh, in_specs=P("model"), out_specs=P())(np.ones(4))
    with pytest.raises(ShardingError, match="has 3 entries but the value has rank 2"):
        pto.shard_map(lambda a: a, mesh=mesh, in_specs=P("x", None, None),
                      out_specs=P())(np.ones((4, 4)))


def test_unbound_axis_name_in_a_collective():
    mesh = pto.make_mesh((4,), ("x",))
    fn = pto.shard_map(lambda a: pto.lax.psum(a, "batch"), mesh=mesh, in_specs=P("x"),
                       out_specs=P("x"))
    with pytest.raises(CollectiveError, match="unbound axis name 'batch'.*bound axes here: "
                                              r"\['x'\]"):
        fn(np.ones(4))


def test_bad_ppermute_and_scatter_sizes():
    mesh = pto.make_mesh((4,), ("x",))
    with pytest.raises(CollectiveError, match="out of range"):
        pto.shard_map(lambda a: pto.lax.ppermute(a, "x", [(0, 4)]), mesh=mesh,
                      in_specs=P("x"), out_specs=P("x"))(np.ones(4))
    with pytest.raises(ShapeError, match="not divisible by the 4 devices"):
        pto.shard_map(lambda a: pto.lax.psum_scatter(a, "x", tiled=True), mesh=mesh,
                      in_specs=P(), out_specs=P("x"))(np.ones(6))


def test_collective_outside_any_sharded_computation():
    with pytest.raises(CollectiveError, match="unbound axis name 'x'"):
        pto.lax.psum(np.ones(3, np.float32), "x")
