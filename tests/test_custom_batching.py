"""``pto.custom_batching`` (custom_vmap, sequential_vmap) against ``jax.custom_batching`` on the
same functions and rules: values, the arguments each rule is called with, and where JAX
allows it jit, nested vmap and forward-mode differentiation (JAX refuses reverse mode)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp


def _make(api, m):
    """f(x, y) = sin(x) * y, whose rule computes cos(x) * y instead (so its use shows), and
    the record of the rule's calls."""
    calls = []

    @api.custom_batching.custom_vmap
    def f(x, y):
        return m.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        calls.append((axis_size, list(in_batched)))
        return m.cos(x) * y, in_batched[0] or in_batched[1]
    return f, calls


def _programs(api, m):
    x = m.arange(3.0, dtype=np.float32)
    y = m.array(2.0, np.float32)
    ones = m.ones(3, np.float32)
    return {
        "plain": lambda f: f(x[1], y),
        "jit": lambda f: api.jit(f)(x[1], y),
        "vmap": lambda f: api.vmap(f, in_axes=(0, None))(x, y),
        "vmap both": lambda f: api.vmap(f)(x, x),
        "jit vmap": lambda f: api.jit(api.vmap(f, in_axes=(0, None)))(x, y),
        "vmap of jit": lambda f: api.vmap(api.jit(f), in_axes=(0, None))(x, y),
        "nested": lambda f: api.vmap(api.vmap(f, in_axes=(0, None)), in_axes=(0, None))(
            m.ones((2, 3), np.float32), y),
        "nested other axis": lambda f: api.vmap(api.vmap(f, in_axes=(0, None)),
                                                in_axes=(None, 0))(x, ones[:2]),
        "jvp": lambda f: api.jvp(f, (x[1], y), (ones[0], ones[0])),
        "vmap of jvp": lambda f: api.vmap(lambda a, t: api.jvp(f, (a, y), (t, m.zeros_like(y))))(
            x, x),
        "vmap of jvp, tangents only": lambda f: api.vmap(
            lambda t: api.jvp(f, (x[1], y), (t, m.zeros_like(y))))(x),
        "jvp of vmap": lambda f: api.jvp(lambda a: api.vmap(f, in_axes=(0, None))(a, y),
                                         (x,), (ones,)),
        "jacfwd": lambda f: api.jacfwd(f)(x[1], y),
        "keyword arguments": lambda f: f(x=x[1], y=y),
    }


@pytest.mark.parametrize("name", list(_programs(pto, pnp)))
def test_custom_vmap_as_jax(name, jax, jnp):
    f, calls = _make(pto, pnp)
    jf, jcalls = _make(jax, jnp)
    ours = _programs(pto, pnp)[name](f)
    theirs = _programs(jax, jnp)[name](jf)
    for o, t in zip(pto.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=2e-6, atol=1e-6)
        assert np.asarray(o).shape == np.asarray(t).shape
    assert calls[-1:] == jcalls[-1:]   # the rule saw what JAX's saw (the last call)


def test_reverse_mode_is_refused_as_in_jax(jax, jnp):
    for api, m in ((pto, pnp), (jax, jnp)):
        f, _ = _make(api, m)
        with pytest.raises(ValueError):
            api.grad(f)(1.0, 2.0)
        with pytest.raises(ValueError):
            api.vmap(api.grad(f), in_axes=(0, None))(m.ones(2), 2.0)


def test_pytrees_unbatched_outputs_and_errors(jax, jnp):
    def run(api, m):
        seen = []

        @api.custom_batching.custom_vmap
        def p(d):
            return {"a": d["a"] * 2, "s": d["b"].sum()}

        @p.def_vmap
        def rule(axis_size, in_batched, d):
            seen.append(in_batched)
            return {"a": d["a"] * 2, "s": d["b"].sum()}, {"a": in_batched[0]["a"], "s": False}
        out = api.vmap(p, in_axes=({"a": 0, "b": None},))(
            {"a": m.arange(3.0, dtype=np.float32), "b": m.ones(2, np.float32)})
        return out, seen
    (ours, seen), (theirs, jseen) = run(pto, pnp), run(jax, jnp)
    assert seen == jseen == [[{"a": True, "b": False}]]
    np.testing.assert_array_equal(ours["a"], theirs["a"])
    np.testing.assert_array_equal(ours["s"], theirs["s"])   # broadcast by out_axes=0

    for api, m in ((pto, pnp), (jax, jnp)):
        @api.custom_batching.custom_vmap
        def h(x):
            return x

        @h.def_vmap
        def bad(axis_size, in_batched, x):
            return x, [True]
        with pytest.raises(ValueError, match="do not match"):
            api.vmap(h)(m.ones(2))

        @api.custom_batching.custom_vmap
        def no_rule(x):
            return x
        with pytest.raises(AttributeError, match="No batching rule"):
            no_rule(1.0)


def test_sequential_vmap_loops(jax, jnp):
    calls = []

    def f(x, y):
        calls.append(np.shape(x))
        return pnp.sin(x) * y if isinstance(x, (pto.Array, pto.core.Tracer)) \
            else jnp.sin(x) * y
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    ours = pto.vmap(pto.custom_batching.sequential_vmap(f), in_axes=(0, None))(x, 2.0)
    theirs = jax.vmap(jax.custom_batching.sequential_vmap(f), in_axes=(0, None))(x, 2.0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert calls[0] == (2,)   # f traced once, per example
    ir = pto.make_jaxpr(pto.vmap(pto.custom_batching.sequential_vmap(f), in_axes=(0, None)))(
        x, 2.0)
    assert "scan" in [e.primitive.name for e in ir.eqns]
    np.testing.assert_allclose(pto.jit(pto.vmap(pto.custom_batching.sequential_vmap(f)))(
        x, pnp.ones(3)), jax.vmap(jax.custom_batching.sequential_vmap(f))(x, jnp.ones(3)),
        rtol=1e-6)
