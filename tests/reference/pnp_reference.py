"""Comparing ``ptojax.numpy`` with ``jax.numpy`` (x64 mode) on the same inputs.

Dtype oracle: ptojax runs without x64 here, as JAX without x64: 64-bit inputs are 32-bit
(DESIGN.md, "Configuration"). So a JAX-x64 result of f64/i64/u64/c128 is expected as
f32/i32/u32/c64 (in x64 mode, as JAX's). Index results (argmax, argsort) are always int32.

JAX compiles once per operation, shape and dtype (~50 ms each), so the tests batch many
operations into one ``jax.jit`` per drawn case and keep the universe of shapes small.
"""
import inspect

import numpy as np

import ptojax as pto
from ptojax import dtypes
from ptojax.eval.interpreter import eval_ir
from ptojax.ir.verify import verify
from ptojax.tree_util import tree_leaves
from helpers import assert_close, tol

ALL_DTYPES = sorted(dtypes.SUPPORTED, key=str)
# the dtypes whose values JAX's CPU backend computes with every operation: not the narrow
# types JAX added after float8_e4m3fn/e5m2 (XLA:CPU rejects or aborts on several of their
# ops; tests/ops/test_narrow_dtypes.py compares them on the operations JAX runs)
VALUE_DTYPES = [d for d in ALL_DTYPES if d not in dtypes.SUB_BYTE
                and d not in dtypes.FLOAT8 - {dtypes.float8_e4m3fn, dtypes.float8_e5m2}]
FLOAT_DTYPES = [dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64]
INT_DTYPES = sorted(dtypes.INTEGERS, key=str)
NARROW = {dtypes.float64: dtypes.float32, dtypes.int64: dtypes.int32,
          dtypes.uint64: dtypes.uint32, dtypes.complex128: dtypes.complex64}


def explicit_dtypes(*inputs) -> list:
    """The dtypes of the inputs that are not Python scalars (those are weak)."""
    return [np.dtype(x.dtype) for x in inputs if isinstance(x, (np.ndarray, np.generic))]


def expected_dtype(jax_dtype, explicit=()) -> np.dtype:
    """The dtype ptojax should give where JAX with x64 gives ``jax_dtype`` (``explicit``, the
    inputs' dtypes, no longer matter: 64-bit ones are 32-bit without x64)."""
    jax_dtype = np.dtype(jax_dtype)
    return jax_dtype if dtypes.x64_enabled() else NARROW.get(jax_dtype, jax_dtype)


def check_type(actual, expected, inputs=(), *, what=""):
    """``actual`` (ptojax) has the shape and (by the oracle) the dtype of ``expected`` (a JAX
    abstract value or array)."""
    want = expected_dtype(expected.dtype, explicit_dtypes(*inputs))
    got = (tuple(np.shape(actual)), np.asarray(actual).dtype)
    assert got == (tuple(expected.shape), want), \
        f"{what}: {got[1]}{list(got[0])}, expected {want}{list(expected.shape)} " \
        f"(JAX: {expected.dtype})"


def check(actual, expected, inputs=(), *, index=False, scale=1.0, what=""):
    """``actual`` (ptojax) equals ``expected`` (JAX): shape, dtype (by the oracle) and values
    within the tolerance of the result dtype (times ``scale``)."""
    expected = np.asarray(expected)
    want = expected_dtype(expected.dtype, () if index else explicit_dtypes(*inputs))
    actual = np.asarray(actual)
    assert actual.dtype == want, f"{what}: dtype {actual.dtype}, expected {want} " \
                                 f"(JAX: {expected.dtype})"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, JAX {expected.shape}"
    expected = expected.astype(want)
    if actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        r = tol(want, scale)
        try:
            assert_close(actual, expected, rtol=r, atol=r)
        except AssertionError as e:
            raise AssertionError(f"{what}: {e}") from None


# The tests compile many small JAX programs and run each once: skip XLA's backend optimizations.
_FAST_COMPILE = {"xla_backend_optimization_level": 0}


def jax_compiled(jax_fn, *args):
    """``jax_fn(*args)`` computed by JAX (jit-compiled quickly)."""
    import jax
    return jax.jit(jax_fn).lower(*args).compile(_FAST_COMPILE)(*args)


def run_modes(fn, *args):
    """``fn(*args)`` eagerly, under ``pto.jit`` and as ``pto.make_ir``'s verified IR run by
    the interpreter: the three results, as numpy values (one per output leaf)."""
    eager = tree_leaves(fn(*args))
    jitted = tree_leaves(pto.jit(fn)(*args))
    closed = pto.make_ir(fn)(*args)
    verify(closed)
    # the IR's inputs are canonical (numpy 64-bit inputs are 32-bit without x64)
    leaves = [dtypes.canonical_value(a) if isinstance(a, (np.ndarray, np.generic)) else a
              for a in tree_leaves(list(args))]
    interpreted = eval_ir(closed, leaves)
    return {"eager": eager, "jit": jitted, "ir": interpreted}


def check_modes(pto_fn, jax_fn, *args, index=(), scale=1.0, inputs=None, labels=None):
    """``pto_fn`` in every mode against ``jax_fn`` (jitted once) on ``args``. ``index`` lists
    the outputs that are indices (JAX's index dtype); ``inputs`` overrides which values decide
    the dtype oracle (default: ``args``); ``labels`` names the outputs in failures."""
    check_modes_against(pto_fn, tree_leaves(jax_compiled(jax_fn, *args)), *args, index=index,
                        scale=scale, inputs=inputs, labels=labels)


def check_modes_against(pto_fn, expected, *args, index=(), scale=1.0, inputs=None,
                        labels=None):
    """``check_modes`` against JAX's outputs ``expected`` (a list of arrays, one per leaf)."""
    inputs = args if inputs is None else inputs
    for mode, outs in run_modes(pto_fn, *args).items():
        assert len(outs) == len(expected), f"{mode}: {len(outs)} outputs, JAX {len(expected)}"
        for k, (a, e) in enumerate(zip(outs, expected)):
            label = labels[k] if labels else f"output {k}"
            check(a, e, inputs, index=k in index, scale=scale, what=f"{mode} {label}")


# Stored JAX tables (tests/jax_golden.py) -------------------------------------------------------
def table_inputs(args, *definitions) -> list:
    """What a stored JAX table is digested from: its arrays ``args`` and the source text of
    the ``definitions`` (functions, classes, or text) that compute it, so that a changed
    definition fails as loudly as changed inputs do."""
    text = "".join(d if isinstance(d, str) else inspect.getsource(d) for d in definitions)
    return [*(np.asarray(a) for a in args), np.frombuffer(text.encode(), np.uint8)]


def jax_table(jax_fn):
    """jax_golden.py's ``fn`` for ``table_inputs(args, ...)``: JAX's output leaves of
    ``jax_fn(*args)`` (jitted as ``check_modes`` does; the digested source is left out)."""
    return lambda *inputs: [np.asarray(v) for v in
                            tree_leaves(jax_compiled(jax_fn, *inputs[:-1]))]


def stored(key, args, *definitions) -> list:
    """JAX's outputs for ``args`` stored under ``key`` by jax_golden.py."""
    from jax_golden import expected
    return expected(key, table_inputs(args, *definitions))


def check_grad(pto_fn, jax_fn, *args, scale=1.0, what="grad"):
    """The gradient of ``sum(fn(*args) * w)`` (a fixed random ``w``) with respect to every
    float argument, eagerly and under ``pto.jit``, against JAX's."""
    import jax
    out = np.asarray(jax_compiled(jax_fn, *args))
    w = np.random.default_rng(7).normal(size=out.shape).astype(out.dtype)
    argnums = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    expected = jax_compiled(jax.grad(lambda *a: (jax_fn(*a) * w).sum(), argnums), *args)
    pto_loss = lambda *a: (pto_fn(*a) * w).sum()
    for mode, grads in [("eager", pto.grad(pto_loss, argnums)(*args)),
                        ("jit", pto.jit(pto.grad(pto_loss, argnums))(*args))]:
        for k, (g, e) in enumerate(zip(grads, expected)):
            check(g, e, args, scale=scale, what=f"{what} {mode} d/darg{argnums[k]}")


def check_vmap(pto_fn, jax_fn, *args, in_axes=0, index=(), scale=1.0, what="vmap"):
    """``vmap(fn)`` over ``in_axes`` of ``args``, eagerly and under ``pto.jit``."""
    import jax
    expected = tree_leaves(jax_compiled(jax.vmap(jax_fn, in_axes), *args))
    batched = pto.vmap(pto_fn, in_axes)
    for mode, outs in [("eager", tree_leaves(batched(*args))),
                       ("jit", tree_leaves(pto.jit(batched)(*args)))]:
        assert len(outs) == len(expected), f"{what} {mode}: {len(outs)} outputs"
        for k, (a, e) in enumerate(zip(outs, expected)):
            check(a, e, args, index=k in index, scale=scale, what=f"{what} {mode} output {k}")


def random_array(rng, shape, dtype, low=-3, high=3) -> np.ndarray:
    """Values of ``dtype``: floats (and both parts of complex values) spread over [low, high),
    integers in [low, high] (nonzero, so they divide), bools at random."""
    dtype = np.dtype(dtype)
    if dtype == dtypes.bool_:
        return rng.random(shape) < 0.5
    if dtypes.is_integer(dtype):
        low = max(low, 0) if dtypes.is_unsigned(dtype) else low
        values = rng.integers(low, high + 1, size=shape)
        return np.where(values == 0, 1, values).astype(dtype)
    if dtypes.is_complex(dtype):
        return (rng.uniform(low, high, size=shape)
                + 1j * rng.uniform(low, high, size=shape)).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)
