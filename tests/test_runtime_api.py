"""Top-level runtime functions against JAX: make_array_from_callback / _single_device_arrays /
_process_local_data, live_arrays, process_indices, copy_to_host_async, effects_barrier,
print_environment_info, and the ptojax.typing annotations."""
import gc
import typing

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

DATA = np.arange(12.0, dtype=np.float32).reshape(4, 3)


def _one_device_sharding(lib, spec):
    mesh = lib.make_mesh((1,), ("x",))
    return lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec(*spec))


@pytest.mark.parametrize("spec", [("x",), (), (None, "x")], ids=str)
def test_make_array_from_callback_matches_jax(jax, spec):
    def run(lib):
        seen = []

        def callback(index):
            seen.append(index)
            return DATA[index]
        out = lib.make_array_from_callback((4, 3), _one_device_sharding(lib, spec), callback)
        return seen, np.asarray(out), str(out.dtype), out.shape
    ours, theirs = run(pto), run(jax)
    assert ours[0] == theirs[0] and ours[2:] == theirs[2:]
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_make_array_from_callback_errors_match_jax(jax):
    for lib in (pto, jax):
        sharding = _one_device_sharding(lib, ("x",))
        with pytest.raises(ValueError, match="shard shape"):
            lib.make_array_from_callback((4, 4), sharding, lambda i: DATA[i])
        with pytest.raises(ValueError, match="must match the dtype"):
            lib.make_array_from_callback((4, 3), sharding, lambda i: DATA.astype(np.int32)[i],
                                         dtype=np.float32)


def test_make_array_over_several_devices():
    mesh = pto.make_mesh((2,), ("x",))
    sharding = pto.NamedSharding(mesh, pto.P("x"))
    seen = []
    a = pto.make_array_from_callback((4, 3), sharding, lambda i: (seen.append(i), DATA[i])[1])
    assert seen == [(slice(0, 2), slice(None)), (slice(2, 4), slice(None))]
    np.testing.assert_array_equal(np.asarray(a), DATA)
    assert a.sharding == sharding and float(pnp.sum(a * 2)) == 2 * DATA.sum()
    blocks = [pnp.ones((2, 3)), pnp.zeros((2, 3))]
    b = pto.make_array_from_single_device_arrays((4, 3), sharding, blocks)
    np.testing.assert_array_equal(np.asarray(b), np.repeat([1.0, 0.0], 6).reshape(4, 3))
    assert [s.data.shape for s in b.addressable_shards] == [(2, 3), (2, 3)]
    with pytest.raises(ValueError, match="2 local devices"):
        pto.make_array_from_single_device_arrays((4, 3), sharding, blocks[:1])
    c = pto.make_array_from_process_local_data(sharding, DATA)
    assert c.sharding == sharding and np.array_equal(np.asarray(c), DATA)


def test_make_array_from_single_device_arrays_matches_jax(jax):
    for lib, np_ in ((pto, pnp), (jax, jax.numpy)):
        sharding = _one_device_sharding(lib, ("x",))
        a = lib.make_array_from_single_device_arrays((4, 3), sharding,
                                                     [np_.asarray(DATA)])
        np.testing.assert_array_equal(np.asarray(a), DATA)
        with pytest.raises(ValueError, match="shard shape"):
            lib.make_array_from_single_device_arrays((4, 3), sharding, [np_.ones((2, 3))])
        with pytest.raises(ValueError, match="no addressable shards"):
            lib.make_array_from_single_device_arrays((4, 3), sharding, [])
        with pytest.raises(TypeError, match="Unsupported type"):
            lib.make_array_from_single_device_arrays((4, 3), sharding, [np.ones((4, 3))])
        with pytest.raises(ValueError, match="must match the dtype"):
            lib.make_array_from_single_device_arrays((4, 3), sharding, [np_.ones((4, 3))],
                                                     dtype=np.int32)


def test_make_array_from_process_local_data_matches_jax(jax):
    for lib in (pto, jax):
        sharding = _one_device_sharding(lib, ("x",))
        for shape in (None, (4, 3)):
            a = lib.make_array_from_process_local_data(sharding, DATA, shape)
            assert a.shape == (4, 3) and str(a.dtype) == "float32"
        with pytest.raises(ValueError, match="global_shape should be None or equal"):
            lib.make_array_from_process_local_data(sharding, DATA, (8, 3))


def test_live_arrays_sees_what_is_alive():
    """(Two heap walks, not four: in a worker that has run many tests the heap is large and
    each walk, and each collection, takes seconds.)"""
    x = pnp.arange(5.0) * 3
    gc.collect()
    alive = pto.live_arrays()
    assert any(a is x for a in alive)
    before = len(alive)
    del x, alive
    gc.collect()
    after = pto.live_arrays("cpu")
    assert len(after) == before - 1
    assert all(isinstance(a, pto.Array) for a in after)
    with pytest.raises(ValueError, match="platform"):
        pto.live_arrays("tpu")


def test_small_runtime_functions_match_jax(jax):
    assert pto.process_indices() == jax.process_indices() == [0]
    tree = {"a": pnp.ones(2), "b": [1.0, "s"]}
    assert pto.copy_to_host_async(tree) is tree
    assert pto.copy_to_host_async(1.0) == jax.copy_to_host_async(1.0)
    assert pto.effects_barrier() is None and jax.effects_barrier() is None
    text = pto.print_environment_info(return_string=True)
    theirs = jax.print_environment_info(return_string=True)
    for line in ("numpy:", "python:", "process_count:", "platform:"):
        assert line in text and line in theirs
    assert f"ptojax:    {pto.__version__}" in text
    assert f"cpu-{pto.device_count()}" in text


def test_print_environment_info_prints(capsys):
    assert pto.print_environment_info() is None
    assert "numpy:" in capsys.readouterr().out


def test_typing_matches_jax(jax):
    import jax.typing as jt
    assert sorted(pto.typing.__all__) == sorted(n for n in dir(jt) if not n.startswith("_"))
    def names(union):
        return {getattr(t, "__name__", str(t)).split(".")[-1] for t in typing.get_args(union)}
    ours, theirs = names(pto.typing.ArrayLike), names(jt.ArrayLike)
    assert ours == theirs     # Array, ndarray, bool, number, bool, int, float, complex
    assert isinstance(pnp.ones(2), typing.get_args(pto.typing.ArrayLike))
    assert len(typing.get_args(pto.typing.DTypeLike)) == len(typing.get_args(jt.DTypeLike))
