"""``pto.vmap``'s API with JAX semantics: in_axes/out_axes as ints (negative too), None or
pytree prefixes, keyword arguments, axis_size, nesting; and the errors for bad input, each a
BatchingError naming the user's file:line."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import BatchingError
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode


def _loop(fn, in_axes, args, size):
    """``fn`` applied example by example: the reference for one level of vmap."""
    def pick(x, ax, k):
        return x if ax is None else np.take(np.asarray(x), k, axis=ax)
    flat_axes = _broadcast_prefix(in_axes, args)
    leaves, tree = pto.tree_util.tree_flatten(args)
    return [fn(*tree.unflatten([pick(x, ax, k) for x, ax in zip(leaves, flat_axes)]))
            for k in range(size)]


def _broadcast_prefix(prefix, tree):
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(pto.tree_util.tree_leaves(tree))
    if isinstance(prefix, dict):
        return [ax for k in sorted(prefix) for ax in _broadcast_prefix(prefix[k], tree[k])]
    return [ax for p, t in zip(prefix, tree) for ax in _broadcast_prefix(p, t)]


# in_axes as a pytree prefix, drawn at random depth -------------------------------------------
def _args(rng, size):
    """Per-example arguments ({'a': (3,), 'b': ((2, 3), ())}, (3,)), stacked on demand."""
    return ({"a": rng.standard_normal((size, 3)), "b": (rng.standard_normal((size, 2, 3)),
                                                      rng.standard_normal(size))},
            rng.standard_normal((size, 3)))


def _prefix(data, tree, ndim_of, label):
    """A random pytree prefix of ``tree``: an axis or None here, or one entry per child."""
    is_node = isinstance(tree, (dict, tuple))
    if is_node and data.draw(st.booleans(), label=f"{label} expands"):
        keys = sorted(tree) if isinstance(tree, dict) else range(len(tree))
        parts = {k: _prefix(data, tree[k], ndim_of, f"{label}[{k!r}]") for k in keys}
        return parts if isinstance(tree, dict) else tuple(parts[k] for k in keys)
    if not is_node and data.draw(st.booleans(), label=f"{label} unmapped"):
        return None
    rank = min(ndim_of(x) for x in pto.tree_util.tree_leaves(tree))
    return data.draw(st.integers(-(rank + 1), rank), label=label)


def _model(np_):
    def fn(d, v):
        a, (m, s) = d["a"], d["b"]
        return {"out": np_.tanh(m @ a) * s + v.sum(), "aux": (a * v, s)}
    return fn


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(data=st.data())
def test_in_axes_and_out_axes_prefixes_match_jax_and_a_loop(jax, jnp, data):
    size = data.draw(st.integers(1, 3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    per_example = jax.tree_util.tree_map(lambda x: x[0], _args(rng, 1))
    in_axes = tuple(_prefix(data, arg, np.ndim, f"in_axes[{i}]")
                    for i, arg in enumerate(per_example))
    flat_axes = _broadcast_prefix(in_axes, per_example)
    if all(a is None for a in flat_axes):
        in_axes = (0, in_axes[1])
        flat_axes = _broadcast_prefix(in_axes, per_example)
    leaves, tree = jax.tree_util.tree_flatten(per_example)
    stacked = tree.unflatten([x if ax is None else np.stack(
        [x + k for k in range(size)], ax) for x, ax in zip(leaves, flat_axes)])
    out_axes = {"out": data.draw(st.integers(-2, 1)),
                "aux": data.draw(st.sampled_from([0, -1, (1, 0)]))}

    got = pto.vmap(_model(pnp), in_axes, out_axes)(*stacked)
    want = jax.vmap(_model(jnp), in_axes, out_axes)(*stacked)
    jax.tree_util.tree_map(lambda g, w: assert_close(g, w, rtol=1e-12, atol=1e-12), got, want)
    loop = _loop(_model(np), in_axes, stacked, size)
    assert_close(got["out"], np.moveaxis(np.stack([r["out"] for r in loop]), 0,
                                         out_axes["out"]), rtol=1e-12, atol=1e-12)


@pytest.mark.usefixtures("ptojax_default_mode")
def test_in_axes_as_a_list_keyword_arguments_and_axis_size(jax, jnp):
    x, y = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.arange(3.0, dtype=np.float32)
    assert_close(pto.vmap(lambda a, b: a * b, [0, None])(x, y),
                 jax.vmap(lambda a, b: a * b, [0, None])(x, y))
    assert_close(pto.vmap(lambda a, *, scale: a * scale)(x, scale=np.float32([2.0, 3.0])),
                 x * np.float32([[2.0], [3.0]]))
    assert_close(pto.vmap(lambda a: a + 1, in_axes=None, axis_size=4)(y),
                 np.broadcast_to(y + 1, (4, 3)))
    assert_close(pto.vmap(lambda: pnp.ones(2), in_axes=(), axis_size=3)(), np.ones((3, 2),
                                                                              np.float32))


@pytest.mark.usefixtures("ptojax_default_mode")
def test_outputs_that_do_not_depend_on_the_batch(jax):
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    const, mapped = pto.vmap(lambda a: (np.float32(7.0), a), out_axes=(None, 1))(x)
    assert_close(const, np.float32(7.0))
    assert_close(mapped, x.T)
    assert_close(pto.vmap(lambda a: 2.0, out_axes=-1)(x), np.full((2,), 2.0, np.float32))


@settings(max_examples=max(8, settings.default.max_examples // 3))
@given(data=st.data())
def test_vmap_nests_to_depth_three(jax, jnp, data):
    shape = (2, 3, 4, 5)
    axes = [data.draw(st.sampled_from([0, 1, -1]), label=f"level {i}") for i in range(3)]
    outs = [data.draw(st.integers(-1, 0), label=f"out {i}") for i in range(3)]
    x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    w = np.linspace(-1, 1, 5)

    def build(vmap, np_):
        f = lambda a, b: np_.sin(a) * np_.sum(b) + np_.sum(a)  # noqa: E731
        for ax, out in zip(reversed(axes), reversed(outs)):
            f = vmap(f, in_axes=(ax, None), out_axes=out)
        return f

    assert_close(build(pto.vmap, pnp)(x, w), build(jax.vmap, jnp)(x, w), rtol=1e-12,
                 atol=1e-12)


# errors ----------------------------------------------------------------------------------------
def _assert_points_at_this_test(err):
    """The message ends with the user's file:line: the test's own raising line."""
    entry = err.traceback[0]
    assert f"{entry.path}:{entry.lineno + 1}" in str(err.value)


def test_mapped_axes_of_different_sizes_list_every_argument():
    f = pto.vmap(lambda x, params: x + params["w"], in_axes=(0, {"w": 1}))
    with pytest.raises(BatchingError, match="different sizes") as err:
        f(np.zeros((3, 2)), {"w": np.zeros((2, 4))})
    message = str(err.value)
    assert "x: axis 0 of f64[3,2] has size 3" in message
    assert "params['w']: axis 1 of f64[2,4] has size 4" in message
    _assert_points_at_this_test(err)


def test_axis_size_disagreeing_with_the_arguments():
    with pytest.raises(BatchingError, match="axis_size=5") as err:
        pto.vmap(lambda x: x, axis_size=5)(np.zeros(3))
    _assert_points_at_this_test(err)


@pytest.mark.parametrize("in_axes", [2, -3, (0, 2)])
def test_an_out_of_range_in_axis(in_axes):
    f = pto.vmap(lambda x, y: x * y, in_axes=in_axes)
    with pytest.raises(BatchingError, match="out of range") as err:
        f(np.zeros((2, 2)), np.zeros((2, 2)))
    assert "valid axes are -2..1" in str(err.value)
    _assert_points_at_this_test(err)


def test_an_out_of_range_out_axis():
    with pytest.raises(BatchingError, match=r"out_axes=3 is out of range for output") as err:
        pto.vmap(lambda x: x, out_axes=3)(np.zeros((2, 2)))
    _assert_points_at_this_test(err)


def test_out_axes_none_for_an_output_that_depends_on_the_mapped_input():
    f = pto.vmap(lambda x: (x.sum(), x * 2), out_axes=(None, 0))
    with pytest.raises(BatchingError, match=r"out_axes=None for output\[0\]") as err:
        f(np.ones((3, 2)))
    _assert_points_at_this_test(err)


@pytest.mark.parametrize("in_axes, args, match", [
    (({"a": 0},), ({"b": np.ones(2)},), "not a pytree prefix"),
    (((0, 0),), ((np.ones(2),),), "not a pytree prefix"),
    ((0, 0), (np.ones(2),), "2 entries but the function was called with 1"),
])
def test_in_axes_that_are_not_a_prefix_of_the_arguments(in_axes, args, match):
    f = pto.vmap(lambda *a: a, in_axes=in_axes)
    with pytest.raises(BatchingError, match=match) as err:
        f(*args)
    _assert_points_at_this_test(err)


@pytest.mark.parametrize("kwargs, match", [
    ({"in_axes": "x"}, "in_axes must be an int, None, or a tuple"),
    ({"in_axes": (0, 1.5)}, "entries must be ints or None"),
    ({"out_axes": {"a": "b"}}, "out_axes entries must be ints or None"),
    ({"axis_name": 3}, "axis_name must be a string"),
    ({"axis_size": -1}, "axis_size must be a non-negative int"),
])
def test_bad_arguments_to_vmap_itself(kwargs, match):
    with pytest.raises(BatchingError, match=match) as err:
        pto.vmap(lambda x: x, **kwargs)
    _assert_points_at_this_test(err)


def test_nothing_mapped_and_no_axis_size():
    with pytest.raises(BatchingError, match="at least one mapped argument") as err:
        pto.vmap(lambda x: x, in_axes=None)(np.ones(2))
    _assert_points_at_this_test(err)


def test_out_axes_not_a_prefix_of_the_outputs():
    with pytest.raises(BatchingError, match="out_axes.*not a pytree prefix") as err:
        pto.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(np.ones(2))
    _assert_points_at_this_test(err)


@pytest.mark.usefixtures("ptojax_default_mode")
def test_unmapped_python_scalar_reaches_fn_as_itself(jax):
    """As in JAX, an in_axes=None Python scalar is passed through unchanged, so it can be a
    static argument of an inner jit (JAX's pca example: jit(vmap(pca, (0, None)),
    static_argnames=...))."""
    import functools

    @functools.partial(pto.jit, static_argnames=["n"])
    def first_rows(x, n=2):
        return x[:n] * 2

    batched = pto.jit(pto.vmap(first_rows, in_axes=(0, None)), static_argnames=["n"])
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    want = jax.jit(jax.vmap(jax.jit(lambda x, n: x[:n] * 2, static_argnames=["n"]),
                            in_axes=(0, None)), static_argnames=["n"])(x, 2)
    assert_close(batched(x, 2), np.asarray(want))
    seen = []
    pto.vmap(lambda x, s: seen.append(type(s)) or x * s, in_axes=(0, None))(x, 3.0)
    assert seen == [float]
    assert_close(pto.vmap(lambda x, s: s * 2, in_axes=(0, None))(np.ones(3, np.float32), 3.0),
                 np.full(3, 6.0, np.float32))
