"""A jit function called under another transformation (grad outside jit, vmap, an outer jit,
loop bodies, checkpoint) is traced once per signature and its IR replayed (ptojax/
jit_nested.py): its Python side effects run as often as in JAX, values and derivatives are
those of inlining it, and what cannot be cached is not."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import ConcretizationError


def _side_effect_counts(lib, np_):
    """How many times a jitted helper's Python ran after each step of a fixed sequence of
    outer transformations (each repeated, some with other shapes, statics, named axes)."""
    runs = []

    @lib.jit
    def helper(x, y):
        runs.append(1)
        return np_.sin(x) * y + 1.0

    def loss(x):
        return (helper(x, 2.0) * helper(x * 2, 3.0)).sum()

    x, counts = np_.arange(3.0), []
    steps = [
        lambda: [lib.grad(loss)(x) for _ in range(3)],
        lambda: [lib.value_and_grad(loss)(x + 1) for _ in range(2)],
        lambda: lib.vmap(loss)(np_.ones((4, 3))),
        lambda: lib.vmap(loss)(np_.ones((5, 3))),
        lambda: lib.vmap(loss, axis_name="i")(np_.ones((5, 3))),  # a named axis: a new trace
        lambda: [lib.jit(loss)(x), lib.jit(lambda v: loss(v) * 2)(x)],
        lambda: helper(x, 4.0),                 # top-level: the nested trace is compiled
        lambda: lib.grad(loss)(np_.arange(4.0)),  # another shape
        lambda: [lib.grad(lib.grad(lambda s: helper(s, 2.0)))(1.0) for _ in range(2)],
        lambda: [lib.lax.fori_loop(0, 3, lambda i, c: helper(c, 0.5), x) for _ in range(2)],
        lambda: lib.grad(lambda v: lib.checkpoint(loss)(v))(x),
    ]
    for step in steps:
        step()
        counts.append(len(runs))
    return counts


def test_python_runs_once_per_signature_as_in_jax(jax):
    import jax.numpy as jnp
    with jax.enable_x64(False):
        want = _side_effect_counts(jax, jnp)
    assert _side_effect_counts(pto, pnp) == want


def _values(lib, np_):
    def helper(x, scale, n):
        y = x
        for _ in range(n):     # n static
            y = np_.tanh(y) * scale
        return {"y": y, "s": (y * y).sum()}
    helper = lib.jit(helper, static_argnums=2)

    def f(x, scale):
        out = helper(x, scale, 2)
        return out["s"] + helper(out["y"], 0.5, 1)["s"]

    x = np_.linspace(-1.0, 1.0, 5)
    g = lib.grad(f)
    h = lib.grad(lambda s: lib.grad(f, 1)(x, s))
    return [f(x, 1.5), g(x, 1.5), g(x, 0.25), h(1.5)]


def test_values_and_derivatives_match_jax(jax):
    import jax.numpy as jnp
    with jax.enable_x64(False):
        want = [np.asarray(v) for v in _values(jax, jnp)]
    got = _values(pto, pnp)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=1e-6)


def test_weak_types_and_dtypes_match_jax(jax):
    import jax.numpy as jnp

    def outs(lib, np_):
        @lib.jit
        def h(a, b):
            return a * 2, a + b, b * 1.5
        r = []
        lib.grad(lambda s: (r.extend(h(s, 3)), r[-1] * s)[1])(2.0)
        lib.vmap(lambda v: r.extend(h(v, np_.int32(1))) or v)(np_.ones(3, np_.int32))
        return [(np.dtype(x.dtype), x.weak_type) for x in r]

    with jax.enable_x64(False):
        want = outs(jax, jnp)
    assert outs(pto, pnp) == want


def test_closure_over_an_outer_tracer_is_not_cached():
    runs = []

    def f(x):
        @pto.jit
        def inner(y):          # closes over x, a tracer of grad's trace
            runs.append(1)
            return y * x
        return inner(x).sum() + inner(x * 2).sum()

    x = pnp.arange(3.0)
    for _ in range(3):     # a cached trace holding x's tracer would leak it here
        np.testing.assert_allclose(pto.grad(f)(x), 6 * np.arange(3.0))
    assert len(runs) == 6


_STATE = {}


@pto.jit
def _reads_a_global(y):
    _STATE["runs"] = _STATE.get("runs", 0) + 1
    return y * _STATE["x"]


def test_one_function_closing_over_each_calls_tracer_is_traced_each_time():
    def f(x):
        _STATE["x"] = x      # the jitted function reads this call's tracer
        return _reads_a_global(x).sum()

    for k in range(1, 4):   # a cached trace would hold the first call's (dead) tracer
        np.testing.assert_allclose(pto.grad(f)(pnp.arange(3.0) * k), 2 * np.arange(3.0) * k)
    assert _STATE["runs"] == 3


def test_a_trace_that_raises_leaves_no_entry():
    fail = [True]
    runs = []

    @pto.jit
    def h(x):
        runs.append(1)
        if fail[0]:
            raise ValueError("broken helper")
        return x * 3

    f = pto.grad(lambda x: h(x))
    with pytest.raises(ValueError, match="broken helper"):
        f(1.0)
    fail[0] = False
    assert float(f(1.0)) == 3.0 and float(f(2.0)) == 3.0
    assert len(runs) == 2


def test_value_dependent_python_inside_names_the_line():
    @pto.jit
    def h(x):
        if x > 0:   # abstract inside jit, as in JAX
            return x
        return -x

    with pytest.raises(ConcretizationError) as info:
        pto.grad(lambda x: h(x))(1.0)
    assert "test_jit_nested.py" in str(info.value)
    assert "traced for pto.jit" in str(info.value)


def test_replayed_errors_keep_their_source_line():
    @pto.jit
    def h(x):
        return pnp.sqrt(x) + 1.0

    ir = pto.make_ir(lambda x: pto.grad(lambda y: h(y))(x))(1.0)
    lines = {e.source.line for e in ir.ir.eqns if e.source is not None and
             e.source.file.endswith("test_jit_nested.py")}
    assert lines, "the replayed equations keep the helper's source lines"


def test_donated_and_static_arguments_under_grad():
    runs = []

    def h(x, n):
        runs.append(n)
        return x ** n
    h = pto.jit(h, static_argnums=1, donate_argnums=0)
    g = pto.grad(lambda x: h(x, 2) + h(x, 3))
    for _ in range(3):
        assert float(g(2.0)) == 16.0
    assert sorted(runs) == [2, 3]


def test_dynamic_shapes_fall_back_to_inlining():
    runs = []

    def h(x):
        runs.append(1)
        return x * 2
    h = pto.jit(h, dynamic={"x": {0: pto.Dim("n", 1, 64)}})
    g = pto.grad(lambda x: h(x).sum())
    for _ in range(2):
        np.testing.assert_allclose(g(pnp.ones(3)), np.full(3, 2.0))
    assert len(runs) == 2     # not cached (its Python runs on every call, as before)


_TABLE = np.linspace(0.5, 2.0, 4).astype(np.float32)
_SHIFT = pnp.array([1.0, -1.0, 2.0, 0.0])


def test_closed_over_constants_and_x64_mode(jax):
    import jax.numpy as jnp

    def run(lib, np_, table, shift, x64_modes):
        runs = []

        @lib.jit
        def h(x):
            runs.append(1)
            return np_.tanh(x * table + shift)

        g = lib.grad(lambda x: (h(x) ** 2).sum())
        out = []
        for x64 in x64_modes:
            with lib.enable_x64(x64):
                out.extend(np.asarray(g(np_.ones(4, "float32") * k)) for k in (0.5, 1.5))
        return out, len(runs)

    with jax.enable_x64(False):
        want, want_runs = run(jax, jnp, _TABLE, jnp.asarray(_SHIFT), [False])
    got, got_runs = run(pto, pnp, _TABLE, _SHIFT, [False])
    assert got_runs == want_runs == 1
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    _, runs = run(pto, pnp, _TABLE, _SHIFT, [False, True, False])
    assert runs == 2      # x64 mode is part of the signature


def test_symbolic_dimensions_of_an_outer_jit_are_not_cached():
    runs = []

    @pto.jit
    def inner(x):
        runs.append(x.shape)
        return x * 2

    for high in (8, 64):   # equal symbols, other bounds: each outer trace traces inner
        outer = pto.jit(lambda x: inner(x) + 1, dynamic={"x": {0: pto.Dim("n", 1, high)}})
        np.testing.assert_allclose(outer(np.ones(3, np.float32)), np.full(3, 3.0))
    assert len(runs) == 2
