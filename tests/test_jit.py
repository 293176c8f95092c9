"""jit: one trace per signature, retrace explanations, static arguments, thread safety, the
optimizer and the generated executor."""
import functools
import logging
import threading

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import StaticArgumentError
from ptojax.ir import verify

F32 = np.float32


def counting(fn):
    calls = []

    def wrapped(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)
    wrapped.calls = calls
    return wrapped


def test_traced_once_per_signature():
    f = counting(lambda x, y: x * y + 1.0)
    jf = pto.jit(f)
    a, b = pnp.ones(3), pnp.ones(3)
    for _ in range(3):
        jf(a, b)
    assert len(f.calls) == 1
    jf(np.ones(3, F32), np.ones(3, F32))   # numpy inputs of the same type: same entry
    assert len(f.calls) == 1
    jf(pnp.ones(4), pnp.ones(4))           # new shape: retrace
    jf(pnp.ones(3, pnp.float16), pnp.ones(3, pnp.float16))  # new dtype: retrace
    assert len(f.calls) == 3
    assert jf.cache_size() == 3


def test_weak_types_are_part_of_the_signature():
    f = counting(lambda x: x * 2)
    jf = pto.jit(f)
    assert jf(1.0).dtype == np.float32 and jf(1.0).weak_type
    jf(np.float32(1.0))
    assert len(f.calls) == 2


def test_static_arguments():
    f = counting(lambda x, n, scale=1.0: x * n * scale)
    jf = pto.jit(f, static_argnums=1, static_argnames="scale")
    assert float(jf(np.float32(2), 3)) == 6.0
    assert float(jf(np.float32(2), 3, scale=2.0)) == 12.0
    assert float(jf(np.float32(2), 4)) == 8.0
    jf(np.float32(5), 4)
    assert len(f.calls) == 3


def test_unhashable_static_argument():
    jf = pto.jit(lambda x, shape: x.reshape(shape), static_argnums=1)
    with pytest.raises(StaticArgumentError, match="tuple instead of a list") as info:
        jf(pnp.ones(6), [2, 3])
    assert "test_jit.py" in str(info.value)


def test_retrace_is_explained(caplog):
    jf = pto.jit(lambda x, y: x.sum() + y.sum())
    jf(pnp.ones(3), pnp.ones(3))
    with caplog.at_level(logging.INFO, logger="ptojax.jit"):
        jf(pnp.ones(3), pnp.ones(5))
    assert "positional argument 1 changed from f32[3] to f32[5]" in caplog.text


def test_jit_of_a_partial_compiles_retraces_and_logs(caplog):
    """A functools.partial has no __name__: jit names it "fn" (compile and retrace logs)."""
    jf = pto.jit(functools.partial(lambda x, y: x * y, y=2.0))
    with caplog.at_level(logging.INFO, logger="ptojax.jit"):
        jf(pnp.ones(3))
        np.testing.assert_allclose(jf(pnp.ones(5)), np.full(5, 2.0))
    assert "compiled fn for f32[3]" in caplog.text and "retracing fn" in caplog.text


def test_pytree_arguments_and_outputs():
    @pto.jit
    def f(params, x):
        return {"out": x @ params["w"] + params["b"], "n": params["w"].shape[0]}

    params = {"w": pnp.ones((3, 2)), "b": pnp.zeros(2)}
    out = f(params, pnp.ones((4, 3)))
    np.testing.assert_allclose(out["out"], np.full((4, 2), 3.0))
    assert int(out["n"]) == 3


def test_threads_share_a_cache_safely():
    jf = pto.jit(lambda x, k: pnp.sin(x) * k)
    errors = []

    def worker(k):
        x = pnp.asarray(np.linspace(0, 1, 64, dtype=F32))
        for _ in range(200):
            out = np.asarray(jf(x, np.float32(k)))
            if not np.allclose(out, np.sin(np.linspace(0, 1, 64, dtype=F32)) * k):
                errors.append(k)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert jf.cache_size() == 1


def test_optimizer_folds_merges_and_drops():
    def f(x):
        unused = pnp.exp(x)  # noqa: F841 - dead code
        a = pnp.sin(x)
        b = pnp.sin(x)       # same as a
        return a + b * (2.0 * 3.0)

    lowered = pto.jit(f).lower(np.ones(3, F32))
    names = [e.prim.name for e in lowered.optimized_ir.eqns]
    assert names.count("sin") == 1 and "exp" not in names
    verify(lowered.optimized_ir)
    np.testing.assert_allclose(lowered.compile()(np.ones(3, F32)), 7 * np.sin(np.ones(3)),
                               rtol=1e-6)


def test_buffer_reuse_never_clobbers_live_values():
    def f(x):
        y = x * 2.0
        z = y + 1.0     # y is still returned below: its buffer must survive
        w = pnp.exp(z)  # z dies here: its buffer may be reused
        return w, y, x

    x = np.arange(4, dtype=F32)
    w, y, x_out = pto.jit(f)(x)
    np.testing.assert_allclose(y, x * 2)
    np.testing.assert_allclose(w, np.exp(x * 2 + 1), rtol=1e-6)
    np.testing.assert_array_equal(x_out, np.arange(4, dtype=F32))
    np.testing.assert_array_equal(x, np.arange(4, dtype=F32))  # the input is untouched


def test_buffer_reuse_respects_views_of_a_dying_buffer():
    def f(w, c):
        h = w * c                         # a fresh buffer
        rows = pnp.broadcast_to(h, (3, 4))  # a view of h, read at the end
        p = h * c                         # h's last direct use: must not overwrite it
        return (rows * p.sum()).sum(0)

    w, c = np.arange(4, dtype=F32), np.linspace(0.5, 2, 4, dtype=F32)
    np.testing.assert_allclose(pto.jit(f)(w, c), f(w, c), rtol=1e-6)


def test_lower_exposes_ir_and_text():
    lowered = pto.jit(lambda x: pnp.tanh(x) * 2.0).lower(pto.ShapeDtypeStruct((2, 2), F32))
    assert "tanh" in lowered.as_text()
    compiled = lowered.compile()
    assert "def run" in compiled.as_text()
    np.testing.assert_allclose(compiled(np.zeros((2, 2), F32)), np.zeros((2, 2)))


def test_jit_of_method():
    class Model:
        scale = 3.0

        @pto.jit
        def __call__(self, x):
            return x * self.scale

    with pytest.raises(Exception):
        Model()(np.ones(2, F32))  # self is not an array: the user must make it static
    assert float(pto.jit(lambda x: x * Model.scale)(np.float32(1))) == 3.0


def test_unsupported_input_dtype_names_the_argument_and_line():
    from ptojax.errors import DtypeError
    with pytest.raises(DtypeError, match="positional argument 0") as info:
        pto.jit(lambda x: x)(np.array([1], np.longdouble))
    assert "test_jit.py" in str(info.value)


# the hot path (eval/fast_arguments.py) -------------------------------------------------------
Layer = __import__("collections").namedtuple("Layer", "w b")


def test_pytree_calls_hit_the_cache_and_retrace_on_changes():
    f = counting(lambda p, x, lr: {"y": x @ p["l"][0].w + p["l"][0].b * lr, "n": len(p["l"])})
    jf = pto.jit(f)
    params = {"l": [Layer(np.ones((3, 2), F32), np.zeros(2, F32))]}
    x = np.ones((4, 3), F32)
    for _ in range(3):
        out = jf(params, x, 0.5)
    assert len(f.calls) == 1
    np.testing.assert_allclose(out["y"], np.full((4, 2), 3, F32))
    assert out["n"] == 1 and out["y"].dtype == F32
    jf(pto.tree_util.tree_map(pnp.asarray, params), pnp.asarray(x), 0.25)  # Arrays: same entry
    assert len(f.calls) == 1
    jf({"l": (params["l"][0],)}, x, 0.5)                                 # list -> tuple
    jf(params, x.astype(np.float16), 0.5)                                # dtype
    jf(params, x, 1)                                                     # weak float -> int
    jf(params, x, F32(0.5))                                              # weak -> strong
    assert len(f.calls) == 5
    jf(params, x, F32(0.75))
    assert len(f.calls) == 5


def test_python_floats_keep_full_precision_on_the_hot_path():
    jf = pto.jit(lambda x, s: x + s)
    x = np.ones(2, np.float64)
    small = 1e-10
    with pto.enable_x64(True):   # float64 (x64 mode): the float's full value counts
        for _ in range(2):
            np.testing.assert_array_equal(jf(x, small), x + small)


def test_outputs_do_not_alias_numpy_inputs():
    x = np.ones(4, F32)
    outs = [pto.jit(f)(x) for f in (lambda a: a, lambda a: a.reshape(2, 2), lambda a: (a, a))]
    outs += [pto.jit(lambda a: a)(x)]  # the cached call too
    x[0] = 5
    for out in outs:
        for o in (out if isinstance(out, tuple) else (out,)):
            assert float(np.asarray(o).ravel()[0]) == 1.0


def test_static_and_keyword_arguments_on_the_hot_path():
    f = counting(lambda x, n, *, scale: x * n * scale)
    jf = pto.jit(f, static_argnums=1)
    x = np.ones(2, F32)
    assert float(jf(x, 3, scale=2.0)[0]) == 6.0
    assert float(jf(x, 3, scale=3.0)[0]) == 9.0
    assert len(f.calls) == 1
    assert float(jf(x, 4, scale=3.0)[0]) == 12.0
    assert len(f.calls) == 2


def test_errors_still_come_from_the_full_path():
    jf = pto.jit(lambda x: x)
    with pytest.raises(pto.errors.NonArrayLeafError):
        jf(object())
    with pytest.raises(pto.errors.IntegerOverflowError):
        jf(2**70)


def test_jit_of_one_function_shares_its_traces_as_jax():
    """``jit(f)(x)`` in a loop traces ``f`` once (JAX's cache is keyed by the function); other
    options, another function object (a new lambda or partial) or clear_caches trace again."""
    traces = []

    def f(x, n=1):
        traces.append(1)
        return x * n

    for _ in range(3):
        pto.jit(f)(pnp.ones(2))
    assert len(traces) == 1
    pto.jit(f, static_argnums=1)(pnp.ones(2), 2)
    pto.jit(functools.partial(f))(pnp.ones(2))
    assert len(traces) == 3
    pto.clear_caches()
    pto.jit(f)(pnp.ones(2))
    assert len(traces) == 4
