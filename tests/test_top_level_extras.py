"""More of JAX's top-level API against JAX: ``eval_shape`` (and ``ShapeDtypeStruct``'s equality),
``custom_gradient``, ``closure_convert``, ``default_backend``, ``float0``, ``typeof``,
``clear_caches``."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close


def _as_tuples(tree, leaves):
    return [(tuple(s.shape), np.dtype(s.dtype), s.weak_type) for s in leaves(tree)]


def test_eval_shape_matches_jax(jax):
    def f(lib):
        return lambda x, y, z: ({"a": x * 2, "b": 3}, y, lib.sum(x, axis=0), z.astype("int8"))
    args = (np.ones((2, 3), np.float32), 2.0, pto.ShapeDtypeStruct((4,), "float32"))
    jargs = (*args[:2], jax.ShapeDtypeStruct((4,), "float32"))
    ours = pto.eval_shape(f(pnp), *args)
    with jax.enable_x64(False):
        theirs = jax.eval_shape(f(jax.numpy), *jargs)
    assert pto.tree.structure(ours) == pto.tree.structure(theirs)
    assert _as_tuples(ours, pto.tree.leaves) == _as_tuples(theirs, jax.tree.leaves)
    assert ours[2] == pto.ShapeDtypeStruct((3,), np.float32)
    assert hash(ours[2]) == hash(pto.ShapeDtypeStruct((3,), "float32"))
    assert ours[2] != pto.ShapeDtypeStruct((3,), np.float32, weak_type=True)
    assert ours[2].ndim == 1 and ours[2].size == 3
    assert repr(ours[1]) == repr(theirs[1])


def test_eval_shape_computes_nothing_and_raises_trace_errors():
    calls = []

    def f(x):
        calls.append(type(x).__name__)
        return pnp.dot(x, x.T)
    assert pto.eval_shape(f, pto.ShapeDtypeStruct((1000, 5), "float32")).shape == (1000, 1000)
    assert calls == ["Tracer"]
    with pytest.raises(TypeError):
        pto.eval_shape(lambda x: pnp.dot(x, x), np.ones((2, 3), np.float32))
    with pytest.raises(TypeError):
        pto.eval_shape(lambda s: s, "not an array")


def test_custom_gradient_matches_jax(jax):
    def make(lib, decorate):
        @decorate
        def f(x, y):
            s = lib.sin(x) * y
            return s, lambda g: (g * s * 10.0, g * x * 3.0)
        return f
    f, fj = make(pnp, pto.custom_gradient), make(jax.numpy, jax.custom_gradient)
    x, y = np.float32(0.7), np.float32(2.0)
    assert_close(f(x, y), fj(x, y))
    assert_close(pto.grad(f, argnums=(0, 1))(x, y), jax.grad(fj, argnums=(0, 1))(x, y))
    xs = np.arange(3, dtype=np.float32)
    ours = pto.jit(pto.vmap(pto.grad(lambda x: 2 * f(x, y))))(xs)
    assert_close(ours, jax.vmap(jax.grad(lambda x: 2 * fj(x, y)))(xs))

    @pto.custom_gradient
    def single(x):      # one argument: the rule may return a bare cotangent
        return x ** 2, lambda g: g * 7.0
    assert_close(pto.grad(single)(3.0), np.float32(7.0))
    with pytest.raises(pto.errors.CustomRuleError, match="pair"):
        pto.custom_gradient(lambda x: x)(1.0)


def test_closure_convert_hoists_traced_floats_as_jax(jax):
    def outer(lib_convert, x):
        g, consts = lib_convert(lambda y: y * x + 1, 1.0)
        return g(2.0, *consts), len(consts)
    assert outer(pto.closure_convert, 3.0)[1] == outer(jax.closure_convert, 3.0)[1] == 0
    counts = []

    def f(x):
        out, n = outer(pto.closure_convert, x)
        counts.append(n)
        return out
    theirs = jax.grad(lambda x: outer(jax.closure_convert, x)[0])(np.float32(3.0))
    assert_close(pto.grad(f)(np.float32(3.0)), theirs)
    assert counts == [1]


def test_small_top_level_functions(jax):
    assert pto.default_backend() == jax.default_backend() == "cpu"
    assert pto.float0 == jax.float0
    g = pto.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert g[1].dtype == pto.float0
    t = pto.typeof(np.ones((2, 3), np.float32))
    assert (t.shape, t.dtype, t.weak_type) == ((2, 3), np.float32, False)
    assert pto.typeof(1.0).weak_type and pto.typeof(1.0).dtype == np.float32
    f = pto.jit(lambda x: x * 2)
    f(1.0)
    assert f.cache_size() == 1
    pto.clear_caches()
    assert f.cache_size() == 0
    assert_close(f(2.0), np.float32(4.0))


def test_linear_transpose_matches_jax(jax):
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def f(lib):
        return lambda x, y: {"a": lib.dot(a, x)[::-1], "b": 2.0 * lib.cumsum(y.sum(0))}
    primals = (np.ones(3, np.float32), np.ones((2, 4), np.float32))
    ct = {"a": np.array([1.0, -2.0], np.float32), "b": np.arange(4.0, dtype=np.float32)}
    ours = pto.linear_transpose(f(pnp), *primals)(ct)
    theirs = jax.linear_transpose(f(jax.numpy), *primals)(ct)
    assert_close(ours, theirs)
    abstract = pto.linear_transpose(lambda x: 3.0 * x, pto.ShapeDtypeStruct((2,), "float32"))
    assert_close(pto.jit(abstract)(np.ones(2, np.float32)), (np.full(2, 3.0, np.float32),))
    unused = pto.linear_transpose(lambda x, y: x, np.ones(2, np.float32), np.ones(3, np.float32))
    assert_close(unused(np.ones(2, np.float32))[1], np.zeros(3, np.float32))
    with pytest.raises(pto.errors.UnsupportedError):
        pto.linear_transpose(pnp.sin, 1.0)(1.0)
    with pytest.raises(TypeError, match="float or complex"):
        pto.linear_transpose(lambda n: n, 1)
    with pytest.raises(TypeError, match="tree"):
        pto.linear_transpose(lambda x: (x, x), 1.0)(1.0)


CALLS = []


def _host(x, y, scale=1.0):
    CALLS.append((np.shape(x), np.shape(y)))
    return {"sum": (np.asarray(x) + np.asarray(y)) * scale,
            "n": np.full(np.shape(x)[:-1], np.shape(x)[-1], np.int32)}


def _with_callback(lib, method):
    def fn(x, y):
        shapes = {"sum": lib.ShapeDtypeStruct(x.shape, x.dtype),
                  "n": lib.ShapeDtypeStruct((), np.int32)}
        scale = {} if method else {"scale": 2.0}    # keyword operands are passed too
        return lib.pure_callback(_host, shapes, x, y, vmap_method=method, **scale)
    return fn


def test_pure_callback_matches_jax(jax):
    x, y = np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32)
    with jax.enable_x64(False):   # else JAX passes scale=2.0 as a float64 array
        assert_close(pto.jit(_with_callback(pto, None))(x[0], y),
                     _with_callback(jax, None)(x[0], y))
        for method in ("sequential", "expand_dims", "broadcast_all"):
            CALLS.clear()
            ours = pto.jit(pto.vmap(_with_callback(pto, method), in_axes=(0, None)))(x, y)
            ours_calls = list(CALLS)
            CALLS.clear()
            theirs = jax.vmap(_with_callback(jax, method), in_axes=(0, None))(x, y)
            assert_close(ours, theirs)
            assert ours_calls == CALLS, method   # the callback sees the shapes JAX gives it


def test_pure_callback_errors():
    x, y = np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        pto.vmap(_with_callback(pto, None), in_axes=(0, None))(x, y)
    with pytest.raises(ValueError, match="custom_jvp"):
        pto.grad(lambda x: _with_callback(pto, None)(x, y)["sum"].sum())(x[0])
    with pytest.raises(ValueError, match="vmap_method"):
        pto.pure_callback(_host, (), x, y, vmap_method="loop")
    shape = pto.ShapeDtypeStruct((2,), "float32")
    with pytest.raises(RuntimeError, match="shape"):
        pto.pure_callback(lambda v: np.ones(4), shape, x[0, :2])
    with pytest.raises(RuntimeError, match="dtype"):
        pto.pure_callback(lambda v: np.ones(2, np.int32), shape, x[0, :2])


def _count(ir, name):
    """Equations of primitive ``name`` in ``ir`` and its sub-IRs."""
    n = 0
    for eqn in ir.eqns:
        n += eqn.prim.name == name
        for value in eqn.params.as_dict().values():
            sub = getattr(value, "ir", value)
            if isinstance(sub, pto.IR):
                n += _count(sub, name)
    return n


def test_checkpoint_policies_save_what_they_name(jax):
    w = np.random.RandomState(0).randn(4, 4).astype(np.float32) / 2
    x = np.random.RandomState(1).randn(3, 4).astype(np.float32)

    def loss(lib, checkpoint, policy):
        body = checkpoint(lambda x, w: lib.numpy.tanh(lib.numpy.tanh(x @ w) @ w), policy=policy)
        return lambda x, w: lib.numpy.sin(body(x, w)).sum()
    policies = pto.checkpoint_policies
    expected = jax.grad(loss(jax, jax.checkpoint, None), argnums=(0, 1))(x, w)
    dots, tanhs = {}, {}
    for name in ("nothing_saveable", "dots_saveable", "everything_saveable",
                 "dots_with_no_batch_dims_saveable"):
        policy = getattr(policies, name)
        grad = pto.grad(loss(pto, pto.checkpoint, policy), argnums=(0, 1))
        assert_close(grad(x, w), expected, rtol=1e-5)
        ir = pto.make_ir(grad)(x, w).ir
        dots[name], tanhs[name] = _count(ir, "dot_general"), _count(ir, "tanh")
    # saving the products: the backward pass recomputes the tanhs but not the two products
    assert dots["dots_saveable"] == dots["nothing_saveable"] - 2
    assert dots["dots_with_no_batch_dims_saveable"] == dots["dots_saveable"]
    assert tanhs["dots_saveable"] == tanhs["nothing_saveable"]
    assert tanhs["everything_saveable"] == tanhs["nothing_saveable"] - 2
    assert set(vars(policies)) <= set(vars(jax.checkpoint_policies))
    with pytest.raises(TypeError, match="callable"):
        pto.checkpoint(lambda x: x, policy="dots")


def test_ensure_compile_time_eval_matches_jax(jax):
    def f(lib, ensure):
        def fn(x):
            with ensure():
                y = lib.numpy.sin(2.0) + lib.numpy.arange(3).sum()
                z = x * y if y > 3 else x      # Python branches on the concrete value
                w = x + 1                      # a traced operand: traced as usual
            return z + w
        return fn
    ours, theirs = f(pto, pto.ensure_compile_time_eval), f(jax, jax.ensure_compile_time_eval)
    x = np.float32(1.5)
    assert_close(pto.jit(ours)(x), jax.jit(theirs)(x))
    assert_close(pto.grad(ours)(x), jax.grad(theirs)(x))
    assert_close(pto.vmap(ours)(np.ones(2, np.float32)), jax.vmap(theirs)(np.ones(2, np.float32)))
    with pytest.raises(pto.errors.ConcretizationError):   # outside the block: traced
        pto.jit(lambda x: x if pnp.arange(3).sum() > 1 else -x)(x)


def test_named_scope_and_named_call_name_the_traced_equations(jax):
    def layer(x):
        return pnp.tanh(x) * 2

    def f(x):
        with pto.named_scope("encoder"):
            y = pto.named_call(layer)(x)
        return pnp.sin(y)
    text = pto.make_ir(pto.grad(f))(1.0).pretty(source=True)
    assert text.count("(encoder/layer)") >= 4 and "sin" in text
    sin_line = next(line for line in text.splitlines() if "= sin" in line)
    assert "(" not in sin_line.split("#")[1]        # outside the scope: no name
    x = np.float32(1.0)
    assert_close(pto.jit(pto.named_call(f, name="g"))(x), jax.named_call(
        lambda x: jax.numpy.sin(jax.numpy.tanh(x) * 2), name="g")(x))
    with pytest.raises(TypeError, match="string"):
        with pto.named_scope(3):
            pass
