"""JAX's config states as context managers and flags, against JAX on the same inputs:
debug_nans / debug_infs (eager, jit, grad, vmap), numpy_dtype_promotion ('strict'),
numpy_rank_promotion ('warn' / 'raise'), log_compiles, explain_cache_misses."""
import json
import logging
import pathlib
import re
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.dtypes import TypePromotionError


def _outcome(fn):
    """"ok" or the op named by the FloatingPointError ``fn()`` raises."""
    try:
        fn()
    except FloatingPointError as e:
        found = re.search(r"invalid value \((nan|inf)\) encountered in (\w+)", str(e))
        return found.groups() if found else ("?", str(e))
    return "ok"


f32 = np.float32
# (name, option, build(lib, numpy namespace) -> thunk); ``lib`` is pto or jax
NONFINITE_CASES = [
    ("log_negative", "nans", lambda lib, np_: lambda: np_.log(np_.array(f32(-1)))),
    ("zero_over_zero", "nans", lambda lib, np_: lambda: np_.array(f32(0)) / f32(0)),
    ("jit_names_the_op", "nans",
     lambda lib, np_: lambda: lib.jit(lambda x: np_.sin(x) * np_.log(x))(np_.array(f32(-1)))),
    ("grad_backward_pass", "nans",
     lambda lib, np_: lambda: lib.grad(lambda x: np_.sqrt(x) * 0)(f32(0))),
    ("grad_inf_is_not_nan", "nans", lambda lib, np_: lambda: lib.grad(np_.sqrt)(f32(0))),
    ("vmap", "nans", lambda lib, np_: lambda: lib.vmap(np_.log)(np_.array([f32(1), f32(-1)]))),
    ("jit_masked_nan_not_an_output", "nans",
     lambda lib, np_: lambda: lib.jit(lambda x: np_.where(x > 0, np_.log(x), 0.0))(
         np_.array(f32(-1)))),
    ("complex_log_is_finite", "nans",
     lambda lib, np_: lambda: np_.log(np_.array(np.complex64(-1)))),
    ("bfloat16", "nans",
     lambda lib, np_: lambda: np_.log(np_.array(-1.0, dtype=np_.bfloat16))),
    ("integers_unchecked", "nans", lambda lib, np_: lambda: np_.log(np_.array([1, 2]))),
    ("log_zero_is_inf", "infs", lambda lib, np_: lambda: np_.log(np_.array(f32(0)))),
    ("log_zero_not_a_nan", "nans", lambda lib, np_: lambda: np_.log(np_.array(f32(0)))),
    ("jit_exp_overflow", "infs",
     lambda lib, np_: lambda: lib.jit(np_.exp)(np_.array(f32(100)))),
    ("nan_not_an_inf", "infs", lambda lib, np_: lambda: np_.log(np_.array(f32(-1)))),
]


@pytest.mark.parametrize("name,which,build", NONFINITE_CASES, ids=[c[0] for c in NONFINITE_CASES])
def test_debug_nans_and_infs_match_jax(jax, name, which, build):
    ours = getattr(pto, f"debug_{which}")
    theirs = getattr(jax, f"debug_{which}")
    with ours(True):
        got = _outcome(build(pto, pnp))
    with theirs(True):
        expected = _outcome(build(jax, jax.numpy))
    assert got == expected
    assert _outcome(build(pto, pnp)) == "ok"     # off again after the block


def test_debug_nans_error_names_the_users_line():
    with pto.debug_nans(True):
        with pytest.raises(FloatingPointError, match="encountered in log") as info:
            pnp.log(pnp.array(-1.0))
    assert "test_config_states.py" in str(info.value)


def test_jit_nan_from_an_input_and_no_op_says_so(caplog):
    with pto.debug_nans(True), caplog.at_level(logging.WARNING, "ptojax.jit"):
        with pytest.raises(FloatingPointError, match=r"jit\(identity\).*op by op"):
            def identity(x):
                return x
            pto.jit(identity)(pnp.array(np.nan))
    assert "running it op by op" in caplog.text


def test_config_update_and_values_match_jax(jax):
    for name in ("jax_debug_nans", "jax_debug_infs", "jax_log_compiles",
                 "jax_explain_cache_misses"):
        state = getattr(pto, name[4:])
        assert state.value is False and getattr(pto.config, name) is False
        pto.config.update(name, True)
        try:
            assert state.value is True and getattr(pto.config, name) is True
            with state(False):
                assert state.value is False
            assert state.value is True
        finally:
            pto.config.update(name, False)
    with pto.debug_nans():                      # a boolean state's value defaults to True
        assert pto.debug_nans.value is True
    assert pto.numpy_dtype_promotion.value == jax.numpy_dtype_promotion.value == "standard"
    assert pto.numpy_rank_promotion.value == jax.numpy_rank_promotion.value == "allow"


def test_bad_values_raise_value_errors(jax):
    for ours, theirs, bad in ((pto.numpy_dtype_promotion, jax.numpy_dtype_promotion, "loose"),
                              (pto.numpy_rank_promotion, jax.numpy_rank_promotion, "maybe")):
        with pytest.raises(ValueError):
            with theirs(bad):
                pass
        with pytest.raises(ValueError, match="must be one of"):
            ours(bad)
    with pytest.raises(ValueError, match="jax_numpy_rank_promotion"):
        pto.config.update("jax_numpy_rank_promotion", "sometimes")
    with pytest.raises(ValueError, match="bool"):
        pto.config.update("jax_debug_nans", "yes")


def test_a_block_sets_its_own_thread_only():
    seen = []
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen.append(pto.debug_nans.value)
        pnp.log(pnp.array(-1.0))       # no error in this thread
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with pto.debug_nans(True):
        inside.set()
        done.wait(10)
    t.join()
    assert seen == [False]


# numpy_dtype_promotion -----------------------------------------------------------------------
PROMOTION_CASES = [
    ("float32", "bfloat16"), ("float32", "float32"), ("int32", "float32"), ("uint8", "int8"),
    ("int32", "int32"), ("float16", "bfloat16"), ("bool", "float32"), ("complex64", "float32"),
    ("float32", 1.0), ("int32", 1.0), ("int32", 2), ("float32", 1j), ("bfloat16", 2),
    ("bool", 1), ("int8", 2.5), ("complex64", 1.0),
]


def _operand(np_, spec):
    return np_.ones(3, dtype=spec) if isinstance(spec, str) else spec


@pytest.mark.parametrize("a,b", PROMOTION_CASES, ids=str)
def test_strict_promotion_matches_jax(jax, a, b):
    def result(lib, np_):
        with lib.numpy_dtype_promotion("strict"):
            try:
                return str(np_.add(_operand(np_, a), _operand(np_, b)).dtype)
            except TypePromotionError if lib is pto else jax.dtypes.TypePromotionError as e:
                assert isinstance(e, ValueError)
                return "error"
    assert result(pto, pnp) == result(jax, jax.numpy)


def test_strict_promotion_everywhere_promotion_happens(jax):
    a, b = pnp.ones(3), pnp.ones(3, pnp.bfloat16)
    with pto.numpy_dtype_promotion("strict"):
        for fn in (lambda: pnp.concatenate([a, b]), lambda: pnp.where(True, a, b),
                   lambda: pnp.result_type(pnp.float32, pnp.bfloat16), lambda: a * b,
                   lambda: pto.jit(pnp.add)(a, b)):
            with pytest.raises(TypePromotionError, match="jax_numpy_dtype_promotion=strict"):
                fn()
    assert pnp.add(a, b).dtype == pnp.float32     # standard again


# numpy_rank_promotion ------------------------------------------------------------------------
RANK_CASES = [
    ("vector_matrix", lambda np_: np_.add(np_.ones(3), np_.ones((2, 3)))),
    ("operator", lambda np_: np_.ones((2, 3)) * np_.ones(3)),
    ("scalar_array", lambda np_: np_.add(np_.ones(()), np_.ones((2, 3)))),
    ("python_scalar", lambda np_: np_.add(1.0, np_.ones((2, 3)))),
    ("same_rank", lambda np_: np_.add(np_.ones((1, 3)), np_.ones((2, 3)))),
    ("where_condition", lambda np_: np_.where(np_.ones(3) > 0, np_.ones((2, 3)), 0.0)),
    ("maximum", lambda np_: np_.maximum(np_.ones((4, 1, 3)), np_.ones(3))),
]


def _rank_outcome(lib, np_, mode, fn):
    with lib.numpy_rank_promotion(mode), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            shape = fn(np_).shape
        except ValueError as e:
            return "raised", re.sub(r"\s+", " ", str(e).split("\n")[0])[:60]
    messages = [str(w.message)[:60] for w in caught if w.category is UserWarning]
    return shape, messages


@pytest.mark.parametrize("mode", ["warn", "raise"])
@pytest.mark.parametrize("name,fn", RANK_CASES, ids=[c[0] for c in RANK_CASES])
def test_rank_promotion_matches_jax(jax, mode, name, fn):
    assert _rank_outcome(pto, pnp, mode, fn) == _rank_outcome(jax, jax.numpy, mode, fn)


def test_rank_promotion_under_jit_and_warning_location():
    with pto.numpy_rank_promotion("raise"), pytest.raises(ValueError, match="add on shapes"):
        pto.jit(pnp.add)(pnp.ones(3), pnp.ones((2, 3)))
    with pto.numpy_rank_promotion("warn"), pytest.warns(UserWarning) as caught:
        pnp.add(pnp.ones(3), pnp.ones((2, 3)))
    assert caught[0].filename == __file__


# log_compiles / explain_cache_misses ---------------------------------------------------------
def test_log_compiles_and_explain_cache_misses(caplog):
    def scaled(x):
        return x * 3

    f = pto.jit(scaled)
    with caplog.at_level(logging.WARNING, "ptojax.jit"):
        f(pnp.ones(2))
        assert "compiled scaled" not in caplog.text              # INFO without the flag
        with pto.log_compiles(True):
            f(pnp.ones(3))
        assert "compiled scaled for f32[3]" in caplog.text
        with pto.explain_cache_misses(True):
            f(pnp.ones(4, pnp.int32))
        assert "retracing scaled" in caplog.text and "changed from f32[3] to i32[4]" in caplog.text


# default_matmul_precision / enable_checks / check_tracer_leaks -------------------------------
@pytest.mark.parametrize("precision", [None, "default", "high", "highest", "bfloat16",
                                       "tensorfloat32", "float32", "BF16_BF16_F32_X3",
                                       "F32_F32_F32"])
def test_default_matmul_precision_values_match_jax_on_cpu(jax, precision):
    rng = np.random.RandomState(0)
    a, b = rng.randn(16, 32).astype(np.float32), rng.randn(32, 8).astype(np.float32)
    with pto.default_matmul_precision(precision), jax.default_matmul_precision(precision):
        assert pto.default_matmul_precision.value == jax.default_matmul_precision.value
        ours = [pnp.dot(a, b), pto.jit(pnp.matmul)(a, b), pnp.einsum("ij,jk->ik", a, b)]
        theirs = jax.numpy.dot(a, b)
    for x in ours:
        np.testing.assert_allclose(np.asarray(x), np.asarray(theirs), rtol=1e-5, atol=1e-5)


def test_default_matmul_precision_rejects_what_cpu_computes_otherwise(jax):
    with pytest.raises(ValueError):
        with jax.default_matmul_precision("fastest"):
            pass
    with pytest.raises(ValueError, match="must be None or one of"):
        pto.default_matmul_precision("fastest")
    with pytest.raises(ValueError, match="not supported"):   # JAX: at the product, on CPU
        pto.default_matmul_precision("F16_F16_F16")


def test_enable_checks_verifies_each_compiled_ir(monkeypatch):
    jit_module = sys.modules["ptojax.jit"]    # (pto.jit is the function)
    verified = []
    monkeypatch.setattr(jit_module, "verify", lambda ir: verified.append(ir))

    def f(x):
        return pnp.sin(x) * 2 + x

    pto.jit(f)(pnp.ones(3))
    assert verified == []
    with pto.enable_checks(True):
        np.testing.assert_allclose(pto.jit(f)(pnp.ones(4)), np.sin(np.ones(4)) * 2 + 1,
                                   rtol=1e-6)
    assert len(verified) == 2       # the traced IR and the optimized one


_GLOBAL_STORE = []


class _Holder:
    pass


def _leak_cases(lib, np_):
    """(name, thunk) pairs; each thunk's function keeps a tracer where the name says."""
    holder, closure = _Holder(), {}

    def to_global(x):
        _GLOBAL_STORE.append(x * 2)
        return x + 1

    def to_object(x):
        holder.value = x * 2
        return x + 1

    def to_closure(x):
        closure["x"] = x
        return x + 1

    def clean(x):
        return lib.lax.fori_loop(0, 3, lambda i, c: c * 2, np_.sin(x) * 2)

    return [("global", lambda: lib.jit(to_global)(1.0)),
            ("clean", lambda: lib.jit(clean)(1.0)),
            ("grad_not_checked", lambda: lib.grad(to_global)(1.0))], \
        [("closure_dict", lambda: lib.jit(to_closure)(1.0)),   # (each check collects the
         ("object", lambda: lib.jit(to_object)(1.0))]          # garbage: ours only, JAX: leaks)


def _leaks(cases) -> dict:
    out = {}
    for name, thunk in cases:
        try:
            thunk()
            out[name] = False
        except Exception as e:   # JAX raises a bare Exception
            assert "Leaked trace" in str(e), e
            out[name] = True
    return out


def _leak_tables() -> dict:
    """Which leak cases each checker flags: ours (JAX's cases and ours only), JAX's, and ours
    with the check off."""
    import jax
    with pto.checking_leaks():
        assert pto.check_tracer_leaks.value is True
        ours = _leaks(_leak_cases(pto, pnp)[0])
        ours_only = _leaks(_leak_cases(pto, pnp)[1])
    with jax.checking_leaks():
        theirs = _leaks(_leak_cases(jax, jax.numpy)[0])
    _GLOBAL_STORE.clear()
    return {"ours": ours, "ours_only": ours_only, "theirs": theirs,
            "off": _leaks(_leak_cases(pto, pnp)[0])}


def test_checking_leaks_matches_jax(jax):
    # Both checkers collect garbage and scan the heap for referrers at each check: in a fresh
    # interpreter that is the heap of ptojax and JAX (4 s here), not that of the thousands of
    # tests this worker ran before (19 s in a full run).
    script = "import json, test_config_states as t; print(json.dumps(t._leak_tables()))"
    run = subprocess.run([sys.executable, "-c", script], cwd=pathlib.Path(__file__).parent,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    tables = json.loads(run.stdout.splitlines()[-1])
    assert tables["ours"] == tables["theirs"]
    assert tables["ours"]["global"] and not tables["ours"]["clean"]
    assert tables["ours_only"] == {"closure_dict": True, "object": True}
    assert tables["off"] == dict.fromkeys(tables["ours"], False)   # off: no check


def test_leak_error_says_who_holds_the_tracer():
    store = []

    def f(x):
        store.append(x)
        return x * 2

    with pto.check_tracer_leaks(True), pytest.raises(pto.errors.LeakedTracerError,
                                                     match="held by the closure of test_leak"):
        pto.jit(f)(pnp.ones(2))


def test_fixed_states_accept_ptojax_value_only(jax):
    for name, value, other in (("threefry_partitionable", True, False),
                               ("default_prng_impl", "threefry2x32", "rbg")):
        ours, theirs = getattr(pto, name), getattr(jax, name)
        assert ours.value == theirs.value == value
        with ours(value), theirs(value):
            assert ours.value == theirs.value == value
        with pytest.raises(ValueError, match="ptojax"):
            ours(other)
    with pto.threefry_partitionable():
        np.testing.assert_array_equal(pto.random.key_data(pto.random.key(1)),
                                      jax.random.key_data(jax.random.key(1)))


def test_device_class(jax):
    assert isinstance(pto.devices()[0], pto.Device)
    assert isinstance(jax.devices()[0], jax.Device)
    assert pto.devices()[0].platform == jax.devices()[0].platform == "cpu"


def test_no_tracing_matches_jax(jax):
    for lib, np_ in ((pto, pnp), (jax, jax.numpy)):
        f = lib.jit(lambda x: x * 3)
        two, three = np_.ones(2), np_.ones(3)    # (JAX's eager ops trace too: made outside)
        f(two)
        with lib.no_tracing(True):
            np.testing.assert_array_equal(f(two), np.full(2, 3.0))       # cached: runs
            with pytest.raises(RuntimeError, match="re-tracing function <lambda>.*no_tracing"):
                f(three)                                                  # a new signature
        assert f(np_.ones(3)).shape == (3,)
