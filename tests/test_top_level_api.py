"""The rest of JAX's top-level API: pto.config, pto.disable_jit, pto.tree, pto.jacobian,
pto.device_get/put, pto.block_until_ready, Array methods and pto.test_util."""
import functools
import os

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import ConfigError
from helpers import assert_close


# config ---------------------------------------------------------------------------------------
def test_config_reads_and_fixed_flags():
    assert pto.config.jax_enable_x64 is False
    assert pto.config.read("jax_platforms") == "cpu"
    pto.config.update("jax_enable_x64", False)    # a flag: tests/reference/test_x64_mode.py
    pto.config.update("jax_default_matmul_precision", "highest")  # ptojax's behaviour: accepted
    pto.config.update("jax_default_matmul_precision", "bfloat16")  # full float32, as JAX on CPU
    with pytest.raises(ConfigError, match="float32"):
        pto.config.update("jax_default_matmul_precision", "F16_F16_F16")
    pto.config.update("jax_default_matmul_precision", None)
    with pytest.raises(ConfigError, match="bool"):   # a flag (tests/test_config_states.py)
        pto.config.update("jax_debug_nans", "on")


def test_config_rejects_unknown_names_and_assignment():
    with pytest.raises(ConfigError, match="jax_enable_x64"):
        pto.config.update("jax_no_such_flag", 1)
    with pytest.raises(AttributeError, match="unknown config option"):
        pto.config.jax_no_such_flag
    assert not hasattr(pto.config, "jax_no_such_flag")
    with pytest.raises(AttributeError, match="update"):
        pto.config.jax_disable_jit = True
    assert "jax_disable_jit" in dir(pto.config)


def test_environment_options(monkeypatch):
    monkeypatch.delenv("PTOJAX_COLLECTIVE_TIMEOUT", raising=False)
    assert pto.config.ptojax_collective_timeout == 60.0
    pto.config.update("ptojax_collective_timeout", 5)
    assert os.environ["PTOJAX_COLLECTIVE_TIMEOUT"] == "5"
    assert pto.config.ptojax_collective_timeout == 5.0
    for bad in (-1, "soon"):
        with pytest.raises(ConfigError, match="ptojax_collective_timeout.*positive number"):
            pto.config.update("ptojax_collective_timeout", bad)
        assert os.environ["PTOJAX_COLLECTIVE_TIMEOUT"] == "5"   # unchanged
    count = len(pto.devices())   # the devices are in use now: their count is fixed
    pto.config.update("jax_num_cpu_devices", count)
    with pytest.raises(ConfigError, match="before the devices"):
        pto.config.update("jax_num_cpu_devices", count + 1)


def test_disable_jit_runs_op_by_op():
    calls = []

    @pto.jit
    def f(x):
        calls.append(type(x).__name__)
        return x * 2

    f(pnp.ones(2))
    f(pnp.ones(2))
    assert calls == ["Tracer"]                        # traced once, then cached
    with pto.disable_jit():
        assert pto.config.jax_disable_jit
        assert_close(f(pnp.ones(2)), np.full(2, 2.0, np.float32))
    assert calls == ["Tracer", "Array"] and not pto.config.jax_disable_jit
    pto.config.update("jax_disable_jit", True)
    try:
        f(pnp.ones(2))
    finally:
        pto.config.update("jax_disable_jit", False)
    assert calls[-1] == "Array"
    with pytest.raises(ConfigError, match="bool"):
        pto.config.update("jax_disable_jit", "yes")


# tree, jacobian, device_get/put, block_until_ready -------------------------------------------
def test_tree_namespace_matches_jax(jax):
    tree = {"b": [1, (2, 3)], "a": 4}
    assert pto.tree.leaves(tree) == jax.tree.leaves(tree)
    assert pto.tree.map(lambda x, y: x + y, tree, tree) == jax.tree.map(lambda x, y: x + y,
                                                                          tree, tree)
    leaves, treedef = pto.tree.flatten(tree)
    assert pto.tree.unflatten(treedef, [x * 10 for x in leaves]) == \
        jax.tree.map(lambda x: x * 10, tree)
    assert pto.tree.reduce(lambda a, b: a + b, tree) == 10
    assert pto.tree.reduce_associative(lambda a, b: a + b, tree) == 10
    assert pto.tree.reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    assert pto.tree.all([True, {"x": 1}]) and not pto.tree.all([True, 0])
    assert pto.tree.broadcast([1, 2], [[3, 4], {"k": 5}]) == \
        jax.tree.broadcast([1, 2], [[3, 4], {"k": 5}])
    assert [str(p) for p, _ in pto.tree.leaves_with_path(tree)] == \
        [str(p) for p, _ in jax.tree.leaves_with_path(tree)]
    assert pto.tree.map_with_path(lambda p, x: len(p), tree) == \
        jax.tree.map_with_path(lambda p, x: len(p), tree)
    outer, inner = pto.tree.structure([0, 0]), pto.tree.structure((0, 0, 0))
    assert pto.tree.transpose(outer, inner, [(1, 2, 3), (4, 5, 6)]) == ([1, 4], [2, 5], [3, 6])
    assert pto.tree.structure(tree) == pto.tree.flatten_with_path(tree)[1]


def test_tree_static_field_is_metadata():
    import dataclasses

    @pto.tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: object
        name: str = pto.tree.static(default="add")

    leaves, treedef = pto.tree.flatten(Op(pnp.ones(2)))
    assert len(leaves) == 1 and pto.tree.unflatten(treedef, leaves).name == "add"


def test_jacobian_is_jacrev(jax):
    f = lambda x: pnp.sin(x) * x[0]  # noqa: E731
    x = np.array([0.5, 1.5, -1.0], np.float32)
    assert pto.jacobian is pto.jacrev
    assert_close(pto.jacobian(f)(x), jax.jacobian(lambda x: jax.numpy.sin(x) * x[0])(x))


def test_device_get_put_and_block_until_ready():
    tree = {"w": pnp.arange(3.0), "n": 7, "s": "text"}
    got = pto.device_get(tree)
    assert isinstance(got["w"], np.ndarray) and got["n"] == 7 and got["s"] == "text"
    assert pto.block_until_ready(tree) is tree
    mesh = pto.make_mesh((2,), ("d",))
    put = pto.device_put({"a": np.arange(4.0), "b": [np.ones(2)]},
                         {"a": pto.NamedSharding(mesh, pto.P("d")), "b": None})
    assert put["a"].sharding.spec == pto.P("d") and type(put["b"][0]) is pto.Array
    assert_close(pto.device_get(put)["a"], np.arange(4.0, dtype=np.float32))   # x64 off


# Array methods ---------------------------------------------------------------------------------
def test_array_device_methods(jax):
    x = pnp.arange(4.0)
    (device,) = x.devices()
    assert x.device == device and x.sharding.device_set == {device}
    assert x.is_fully_replicated and x.is_fully_addressable and x.is_ready()
    assert x.on_device_size_in_bytes() == 16 and x.tobytes() == np.arange(4.0,
                                                                          dtype=np.float32).tobytes()
    assert x.copy_to_host_async() is None and x.block_until_ready() is x
    assert x.item(2) == 2.0 and x.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert_close(np.from_dlpack(x), np.arange(4.0, dtype=np.float32))
    assert_close(jax.numpy.from_dlpack(x), np.arange(4.0, dtype=np.float32))
    mesh = pto.make_mesh((2,), ("d",))
    y = pto.device_put(np.arange(4.0), pto.NamedSharding(mesh, pto.P("d")))  # float32: x64 off
    assert len(y.devices()) == 2 and y.device == y.sharding and not y.is_fully_replicated
    assert y.on_device_size_in_bytes() == 8
    assert_close(y.addressable_data(1), np.array([2.0, 3.0], np.float32))


def test_array_repr_matches_jax(jax, jnp):
    """JAX's repr: the dtype always shown, weak_type when set, bool never weak, the empty
    array's shape, and the dtype wrapped onto its own line when the values fill the width."""
    with jax.enable_x64(False):
        cases = [(pnp.array([1, 2]), jnp.array([1, 2])), (pnp.array(True), jnp.array(True)),
                 (pnp.arange(3.0), jnp.arange(3.0)), (pnp.zeros((0, 2)), jnp.zeros((0, 2))),
                 (pnp.float32(2), jnp.float32(2)), (pnp.array(2.0) * 1, jnp.array(2.0) * 1),
                 (pnp.ones((2, 40)), jnp.ones((2, 40))),
                 (pnp.arange(4, dtype=pnp.uint8), jnp.arange(4, dtype=jnp.uint8))]
        for got, want in cases:
            assert repr(got) == repr(want)


def test_array_format_matches_jax(jax, jnp):
    """format()/str.format of arrays as JAX: a scalar formats as its numpy scalar (a float32
    with an empty spec prints its float64 repr), other arrays as numpy arrays."""
    with jax.enable_x64(False):
        pairs = [(pnp.sin(pnp.float32(2.0)), jnp.sin(jnp.float32(2.0))),
                 (pnp.int32(3), jnp.int32(3)), (pnp.array(True), jnp.array(True)),
                 (pnp.bfloat16(1.5), jnp.bfloat16(1.5)), (pnp.arange(3.0), jnp.arange(3.0))]
        for got, want in pairs:
            for spec in ("", ">12", ".3f", "e"):
                try:
                    expected = format(want, spec)
                except (TypeError, ValueError) as e:
                    with pytest.raises(type(e)):
                        format(got, spec)
                else:
                    assert format(got, spec) == expected, (got, spec)


def test_make_jaxpr_is_make_ir():
    closed = pto.make_jaxpr(lambda x: pnp.sin(x) * 2)(np.ones(3, np.float32))
    assert isinstance(closed, pto.ClosedIR)
    assert "sin" in str(closed)


def test_lax_full_like_matches_jax(jax, jnp):
    with jax.enable_x64(False):
        for args, kwargs in [((pnp.ones(3), 2), {}), ((2.0, 3), {}),
                             ((pnp.ones(2), 1), {"dtype": "int32", "shape": (3,)}),
                             ((pnp.arange(4) * 1, 7.5), {})]:
            got = pto.lax.full_like(*args, **kwargs)
            jargs = [jnp.asarray(np.asarray(a)) if isinstance(a, pto.Array) else a for a in args]
            want = jax.lax.full_like(*jargs, **kwargs)
            assert repr(got) == repr(want)
    tangent = pto.jvp(lambda x: pto.lax.full_like(x, 1.0) * x, (2.0,), (1.0,))[1]
    assert_close(tangent, np.float32(1.0), check_dtype=False)


# test_util -------------------------------------------------------------------------------------
def test_check_grads_passes_for_correct_derivatives():
    pto.test_util.check_grads(lambda x, y: (pnp.tanh(x) @ y, pnp.sum(x * x)),
                              (np.ones((2, 3)) * 0.3, np.arange(3.0)), order=2,
                              modes=("fwd", "rev", "lin"))
    pto.test_util.check_grads(pnp.sin, (np.array([0.5, 1.0], np.float32),), 1)
    pto.test_util.check_jvp(pnp.exp, functools.partial(pto.jvp, pnp.exp), (0.5,))


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
def test_check_grads_catches_a_wrong_derivative(modes):
    @pto.custom_jvp
    def f(x):
        return pnp.sin(x)

    f.defjvps(lambda t, out, x: t * 2.0)
    label = "JVP" if modes == ("fwd",) else "VJP"
    with pytest.raises(AssertionError, match=label):
        pto.test_util.check_grads(f, (np.array([0.5, 1.0]),), 1, modes=modes)


def test_check_grads_catches_a_wrong_second_derivative():
    @pto.custom_jvp
    def f(x):
        return x * x

    # right as a first derivative, but its own derivative is lost
    f.defjvps(lambda t, out, x: t * 2.0 * pto.lax.stop_gradient(x))
    with pytest.raises(AssertionError, match="JVP of JVP"):
        pto.test_util.check_grads(f, (np.array([0.5, 1.0]),), 2, modes=("fwd",))
