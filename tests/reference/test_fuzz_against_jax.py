"""Fuzzing against JAX: random small programs run by ptojax and by JAX on the same inputs —
eagerly, under jit, through grad and through vmap — covering indexing with negative and
out-of-bounds indices (static and traced), Python scalars of every kind next to every dtype,
and zero-size and 0-d arrays.

The reference is JAX without x64, or JAX with x64 when an input is 64-bit: ptojax's dtype rule
(DESIGN.md, "Numerics decisions"). Results agree in shape, dtype, weak type and values; when
JAX raises, ptojax raises a located error (a PtoError naming the user's line) of the same
builtin kind (IndexError, OverflowError, TypeError, ValueError).

Deterministic and bounded: hypothesis is derandomized with a fixed budget of examples per
family (``PTOJAX_FUZZ_EXAMPLES``, default 12; run e.g. ``PTOJAX_FUZZ_EXAMPLES=1000`` locally
to search further).
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes, lax
from ptojax.errors import PtoError
from helpers import tol

EXAMPLES = int(os.environ.get("PTOJAX_FUZZ_EXAMPLES", "12"))
fuzz = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))

# complex and float8 are outside the fuzz (complex values have their own tests against JAX;
# float8 arithmetic is not defined alike by XLA and ml_dtypes).
DTYPES = [np.dtype(d) for d in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                np.uint16, np.uint32, np.uint64, np.float16, dtypes.bfloat16,
                                np.float32, np.float64)]
ERROR_KINDS = (OverflowError, IndexError, TypeError, ValueError)


# outcomes --------------------------------------------------------------------------------------
class Raised:
    def __init__(self, error):
        self.error = error

    def __repr__(self):
        return f"raised {type(self.error).__name__}: {str(self.error)[:200]}"


def run(fn, *args):
    """``fn(*args)`` as a list of (value, weak) leaves, or Raised."""
    try:
        out = fn(*args)
    except Exception as e:  # noqa: BLE001  (the outcome is compared)
        return Raised(e)
    return leaves(out)


def leaves(out):
    out = out if isinstance(out, (list, tuple)) else [out]
    return [(np.asarray(v), bool(getattr(v, "weak_type", False))) for v in out]


def assert_agree(got, want, what):
    """ptojax's outcome ``got`` agrees with JAX's ``want``."""
    if isinstance(want, Raised):
        kind = next((k for k in ERROR_KINDS if isinstance(want.error, k)), Exception)
        assert isinstance(got, Raised), f"{what}: JAX {want}, ptojax returned {got}"
        assert isinstance(got.error, kind), f"{what}: JAX {want}, ptojax {got}"
        assert isinstance(got.error, PtoError) and got.error.source is not None, \
            f"{what}: ptojax's error is not located: {got}"
        return
    assert not isinstance(got, Raised), f"{what}: JAX returned, ptojax {got}"
    assert len(got) == len(want), f"{what}: {len(got)} outputs, JAX {len(want)}"
    for (a, a_weak), (e, e_weak) in zip(got, want):
        assert (a.dtype, a.shape) == (e.dtype, e.shape), \
            f"{what}: {a.dtype}{list(a.shape)}, JAX {e.dtype}{list(e.shape)}"
        if a.dtype != np.bool_:  # JAX never marks bools weak
            assert a_weak == e_weak, f"{what}: weak_type {a_weak}, JAX {e_weak}"
        if a.dtype.kind in "biu":
            np.testing.assert_array_equal(a, e, err_msg=what)
        else:
            r = tol(a.dtype, 4.0)
            np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=r,
                                       atol=r, err_msg=what)


def reference(jax, x64, fn, *args):
    with jax.enable_x64(x64):
        return run(fn, *args)


def jitted_references(jax, programs):
    """JAX's outcomes (without x64) of each ``(fn, args)`` of ``programs`` under ``jax.jit``,
    all compiled as one jit program: one XLA compile per example instead of one per program
    and, for an eager grad or vmap, one per primitive on new shapes (most of this module's
    time). When the joint program raises, each program runs under its own jit to tell which."""
    fns, argss = [fn for fn, _ in programs], [tuple(args) for _, args in programs]
    with jax.enable_x64(False):
        try:
            outs = jax.jit(lambda argss: [fn(*args) for fn, args in zip(fns, argss)])(argss)
        except Exception:  # noqa: BLE001  (each program's outcome is compared)
            return [run(jax.jit(fn), *args) for fn, args in programs]
    return [leaves(out) for out in outs]


def wide(*values) -> bool:
    """Whether an input is 64-bit: JAX and ptojax then run with x64."""
    return any(isinstance(v, (np.ndarray, np.generic)) and v.dtype.itemsize == 8
               for v in values)


def random_values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -5
        return rng.integers(low, 6, size=shape).astype(dtype)
    return rng.uniform(-3, 3, size=shape).astype(dtype)


# 1. Python scalars next to every dtype ----------------------------------------------------------
PY_SCALARS = st.one_of(
    st.booleans(),
    st.integers(-300, 300),
    st.sampled_from([2**31 - 1, -2**31, 2**31, 2**40, -2**40, 2**63 - 1, -2**63, 2**63, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([1.5152366018756531, 0.1, -0.0, 1e-30, 3.4e38, 1e300]))

SCALAR_OPS = {  # (numpy namespace, array, scalar, scalar first) -> result
    "add": lambda np_, x, s, first: np_.add(*((s, x) if first else (x, s))),
    "subtract": lambda np_, x, s, first: np_.subtract(*((s, x) if first else (x, s))),
    "multiply": lambda np_, x, s, first: np_.multiply(*((s, x) if first else (x, s))),
    "true_divide": lambda np_, x, s, first: np_.true_divide(*((s, x) if first else (x, s))),
    "maximum": lambda np_, x, s, first: np_.maximum(*((s, x) if first else (x, s))),
    "less": lambda np_, x, s, first: np_.less(*((s, x) if first else (x, s))),
    "where": lambda np_, x, s, first: np_.where(np_.asarray(x) > 0,
                                                *((s, x) if first else (x, s))),
}


@fuzz
@given(op=st.sampled_from(sorted(SCALAR_OPS)), dtype=st.sampled_from(DTYPES),
       shape=st.sampled_from([(), (0,), (3,), (2, 0), (2, 3)]), scalar=PY_SCALARS,
       scalar_first=st.booleans(), seed=st.integers(0, 2**16))
def test_python_scalars_next_to_every_dtype(jax, jnp, op, dtype, shape, scalar, scalar_first,
                                            seed):
    """``op(array, scalar)`` eagerly, under jit with the scalar traced, and under jit with it
    closed over; JAX (x64 iff the array is 64-bit) on the same inputs."""
    # XLA simplifies a division of converted bools (0 / 0 is 0 there, nan in IEEE and ptojax)
    assume(not (op == "true_divide" and dtype == np.bool_))
    x = random_values(np.random.default_rng(seed), shape, dtype)
    fn = SCALAR_OPS[op]

    def program(np_):
        return lambda a, s: fn(np_, a, s, scalar_first)

    what = f"{op}({'s, x' if scalar_first else 'x, s'}) x={dtype}{list(shape)} s={scalar!r}"
    # JAX's eager result is the reference of every mode (XLA folds constants under jit: x / 0
    # with a closed-over 0 is not always nan there)
    want = reference(jax, wide(x), program(jnp), x, scalar)
    with pto.enable_x64(wide(x)):   # ptojax in JAX's mode
        assert_agree(run(program(pnp), x, scalar), want, f"eager {what}")
        assert_agree(run(pto.jit(program(pnp)), x, scalar), want, f"jit(traced s) {what}")
        assert_agree(run(pto.jit(lambda a: program(pnp)(a, scalar)), x), want,
                     f"jit(closed-over s) {what}")


# 2. indexing with negative and out-of-bounds indices --------------------------------------------
INDEX_DTYPES = [np.int32, np.int8, np.uint8, np.int64]


@st.composite
def index_description(draw, shape):
    """Entries of an index of ``shape``: ("int", v) static, ("traced", v, dtype) a traced
    0-d int, ("slice", s), ("none",), ("ellipsis", k), ("array", values) static or
    ("traced array", values) traced integer arrays (one broadcastable shape), ("mask", m)."""
    entries, d, seen = [], 0, set()
    adv_shape = draw(st.sampled_from([(2,), (3,), (1,), (0,)]))
    for _ in range(draw(st.integers(1, len(shape) + 1))):
        kind = draw(st.sampled_from(["int", "traced", "slice", "none", "ellipsis", "array",
                                     "traced array", "mask"]))
        n = shape[d] if d < len(shape) else None
        if kind == "none":
            entries.append(("none",))
        elif kind == "ellipsis" and "ellipsis" not in seen:
            k = draw(st.integers(0, len(shape) - d))
            entries.append(("ellipsis", k))
            d += k
        elif n is None:
            continue
        elif kind == "int":
            entries.append(("int", draw(st.integers(-n - 3, n + 2))))
            d += 1
        elif kind == "traced":
            idx_dtype = np.dtype(draw(st.sampled_from(INDEX_DTYPES)))
            low = 0 if idx_dtype.kind == "u" else -n - 3
            entries.append(("traced", draw(st.integers(low, n + 2)), idx_dtype))
            d += 1
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.sampled_from([None, 1, 2, -1, -3]))
            entries.append(("slice", slice(draw(bound), draw(bound), step)))
            d += 1
        elif kind in ("array", "traced array") and "mask" not in seen:
            values = draw(st.lists(st.integers(-n - 2, n + 1), min_size=int(np.prod(adv_shape)),
                                   max_size=int(np.prod(adv_shape))))
            entries.append((kind, np.asarray(values, np.int32).reshape(adv_shape)))
            d += 1
        elif kind == "mask" and not seen & {"array", "traced array", "mask"}:
            entries.append(("mask", np.asarray(draw(st.lists(st.booleans(), min_size=n,
                                                             max_size=n)), bool)))
            d += 1
        else:
            continue
        seen.add(kind)
    return entries


def build_index(entries, dynamic):
    """The index of ``entries`` with the traced values taken from ``dynamic``, in order."""
    dynamic = iter(dynamic)
    out = []
    for entry in entries:
        kind = entry[0]
        if kind in ("traced", "traced array"):
            out.append(next(dynamic))
        elif kind == "none":
            out.append(None)
        elif kind == "ellipsis":
            out.append(Ellipsis)
        else:
            out.append(entry[1])
    return tuple(out)


def traced_values(entries):
    return [np.asarray(e[1], e[2]) if e[0] == "traced" else e[1]
            for e in entries if e[0] in ("traced", "traced array")]


def index_program(np_, entries, op, mode, value):
    """``x -> x[idx]`` or ``x.at[idx].<op>(...)`` (``dyn`` supplies the traced entries)."""
    def program(x, *dyn):
        x, idx = np_.asarray(x), build_index(entries, dyn)
        if op == "get":
            return x[idx]
        ref = x.at[idx]
        if op == "at_get":
            return ref.get(mode=mode)
        return getattr(ref, op)(value, mode=mode)
    return program


@fuzz
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from([np.float32, np.int32, np.float16]), data=st.data(),
       op=st.sampled_from(["get", "get", "at_get", "set", "add", "multiply", "min", "max"]),
       seed=st.integers(0, 2**16))
def test_indexing_with_negative_and_out_of_bounds_indices(jax, jnp, shape, dtype, data, op,
                                                          seed):
    """x[idx] and x.at[idx] ops with static/traced ints and arrays out of bounds: eagerly,
    under jit (traced entries as arguments), grad (float x) and vmap (over x and over the
    traced entries)."""
    entries = data.draw(index_description(shape))
    mode = data.draw(st.sampled_from({"get": [None], "at_get": [None, "clip", "fill"]}.get(
        op, [None, "clip", "drop"])))
    rng = np.random.default_rng(seed)
    x = random_values(rng, shape, dtype)
    dyn = traced_values(entries)
    p_pto = index_program(pnp, entries, op, mode, 2)
    p_jax = index_program(jnp, entries, op, mode, 2)
    what = f"{op}(mode={mode}) x={np.dtype(dtype)}{list(shape)} idx={entries}"
    want = reference(jax, False, p_jax, x, *dyn)
    assert_agree(run(p_pto, x, *dyn), want, f"eager {what}")
    # JAX's jit, grad and vmap outcomes, all under one jit (jitted_references)
    checks = [("jit", pto.jit(p_pto), p_jax, (x, *dyn))]
    if not isinstance(want, Raised):
        out = want[0][0]
        if np.dtype(dtype).kind == "f" and out.dtype.kind == "f":
            w = random_values(rng, out.shape, dtype)
            checks.append(("grad", pto.grad(lambda a, *d: pnp.sum(p_pto(a, *d) * w)),
                           jax.grad(lambda a, *d: jnp.sum(p_jax(a, *d) * w)), (x, *dyn)))
        xs = np.stack([x, random_values(rng, shape, dtype)])
        in_axes = (0,) + (None,) * len(dyn)
        checks.append(("vmap(x)", pto.vmap(p_pto, in_axes), jax.vmap(p_jax, in_axes),
                       (xs, *dyn)))
        if dyn:
            ds = np.stack([dyn[0], np.flip(dyn[0])])
            in_axes = (None, 0) + (None,) * (len(dyn) - 1)
            checks.append(("vmap(index)", pto.vmap(p_pto, in_axes), jax.vmap(p_jax, in_axes),
                           (x, ds, *dyn[1:])))
    wants = jitted_references(jax, [(j, args) for _, _, j, args in checks])
    for (name, p, _, args), want_j in zip(checks, wants):
        assert_agree(run(p, *args), want_j, f"{name} {what}")


# 3. take, take_along_axis and dynamic slices ----------------------------------------------------
def gather_program(np_, lax_, kind, axis, mode, size):
    def program(x, i):
        if kind == "take":
            return np_.take(x, i, axis=axis, mode=mode)
        if kind == "take_along_axis":
            return np_.take_along_axis(x, i, axis=axis, mode=mode)
        starts = [np_.zeros_like(i)] * x.ndim  # JAX wants one dtype for all of them
        starts[axis] = i
        sizes = list(x.shape)
        sizes[axis] = size
        if kind == "dynamic_slice":
            return lax_.dynamic_slice(x, starts, sizes)
        return lax_.dynamic_update_slice(x, np_.ones(sizes, x.dtype), starts)
    return program


@fuzz
@given(kind=st.sampled_from(["take", "take_along_axis", "dynamic_slice",
                             "dynamic_update_slice"]),
       shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple),
       data=st.data(), seed=st.integers(0, 2**16))
def test_take_and_dynamic_slices_out_of_bounds(jax, jnp, kind, shape, data, seed):
    """take / take_along_axis (every mode) and lax.dynamic_slice / dynamic_update_slice with
    negative and out-of-bounds indices of several integer dtypes: eager, jit, grad, vmap."""
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    idx_dtype = np.dtype(data.draw(st.sampled_from(INDEX_DTYPES)))
    low = 0 if idx_dtype.kind == "u" else -n - 3
    rng = np.random.default_rng(seed)
    x = random_values(rng, shape, np.float32)
    mode, size = None, 0
    if kind in ("take", "take_along_axis"):
        mode = data.draw(st.sampled_from([None, "fill", "clip"] +
                                         (["wrap"] if kind == "take" else [])))
        idx_shape = (3,) if kind == "take" else tuple(
            data.draw(st.sampled_from([1, k])) if d != axis else 2 for d, k in enumerate(shape))
        i = rng.integers(low, n + 3, size=idx_shape).astype(idx_dtype)
    else:
        size = data.draw(st.integers(0, n))
        i = np.asarray(data.draw(st.integers(low, n + 2)), idx_dtype)
    p_pto = gather_program(pnp, lax, kind, axis, mode, size)
    p_jax = gather_program(jnp, jax.lax, kind, axis, mode, size)
    what = f"{kind}(mode={mode}, axis={axis}, size={size}) x={list(shape)} i={i!r}"
    want = reference(jax, False, p_jax, x, i)
    assert_agree(run(p_pto, x, i), want, f"eager {what}")
    # JAX's jit, grad and vmap outcomes, all under one jit (jitted_references)
    checks = [("jit", pto.jit(p_pto), p_jax, (x, i))]
    if not isinstance(want, Raised):
        w = random_values(rng, want[0][0].shape, np.float32)
        iis = np.stack([i, rng.integers(low, n + 3, size=i.shape).astype(idx_dtype)])
        checks += [("grad", pto.grad(lambda a, j: pnp.sum(p_pto(a, j) * w)),
                    jax.grad(lambda a, j: jnp.sum(p_jax(a, j) * w)), (x, i)),
                   ("vmap(i)", pto.vmap(p_pto, (None, 0)), jax.vmap(p_jax, (None, 0)),
                    (x, iis))]
    wants = jitted_references(jax, [(j, args) for _, _, j, args in checks])
    for (name, p, _, args), want_j in zip(checks, wants):
        assert_agree(run(p, *args), want_j, f"{name} {what}")


# 4. zero-size and 0-d arrays --------------------------------------------------------------------
ARRAY_OPS = {
    "sum": lambda np_, x: np_.sum(x, axis=0),
    "mean": lambda np_, x: np_.mean(x),
    "max": lambda np_, x: np_.max(x, axis=-1),
    "argmax": lambda np_, x: np_.argmax(x),
    "cumsum": lambda np_, x: np_.cumsum(x),
    "sort": lambda np_, x: np_.sort(x),
    "ravel": lambda np_, x: np_.ravel(x),
    "concatenate": lambda np_, x: np_.concatenate([np_.atleast_1d(x)] * 2),
    "matmul": lambda np_, x: np_.matmul(np_.atleast_1d(x), np_.atleast_1d(x).T),
    "where": lambda np_, x: np_.where(x > 0, x, 0),
    "index": lambda np_, x: np_.asarray(x)[..., ::-1],
    "zeros_like": lambda np_, x: np_.zeros_like(x) + x,
}


@fuzz
@given(op=st.sampled_from(sorted(ARRAY_OPS)),
       shape=st.sampled_from([(), (0,), (0, 3), (3, 0), (2, 0, 1), (1,), (2, 3)]),
       dtype=st.sampled_from([np.float32, np.int32, np.bool_]), seed=st.integers(0, 2**16))
def test_zero_size_and_zero_dimensional_arrays(jax, jnp, op, shape, dtype, seed):
    """Reductions, scans, sorts, reshapes, matmul and indexing of arrays with a zero-length
    dimension or no dimension: eager, jit, grad of the sum and vmap over a stack."""
    rng = np.random.default_rng(seed)
    x = random_values(rng, shape, dtype)
    fn = ARRAY_OPS[op]
    what = f"{op} x={np.dtype(dtype)}{list(shape)}"
    want = reference(jax, False, lambda a: fn(jnp, a), x)
    assert_agree(run(lambda a: fn(pnp, a), x), want, f"eager {what}")
    # JAX's jit, grad and vmap outcomes, all under one jit (jitted_references)
    checks = [("jit", pto.jit(lambda a: fn(pnp, a)), lambda a: fn(jnp, a), (x,))]
    if not isinstance(want, Raised):
        if np.dtype(dtype).kind == "f" and want[0][0].dtype.kind == "f":
            checks.append(("grad", pto.grad(lambda a: pnp.sum(fn(pnp, a))),
                           jax.grad(lambda a: jnp.sum(fn(jnp, a))), (x,)))
        xs = np.stack([x, random_values(rng, shape, dtype)])
        checks.append(("vmap", pto.vmap(lambda a: fn(pnp, a)), jax.vmap(lambda a: fn(jnp, a)),
                       (xs,)))
    wants = jitted_references(jax, [(j, args) for _, _, j, args in checks])
    for (name, p, _, args), want_j in zip(checks, wants):
        assert_agree(run(p, *args), want_j, f"{name} {what}")


def test_the_fuzz_reference_switches_x64_per_case(jax, jnp):
    """The oracle itself: JAX without x64 types a Python float as float32, with x64 as
    float64 (so a case with a 64-bit input is compared with JAX's x64 mode)."""
    assert reference(jax, False, lambda: jnp.asarray(1.5))[0][0].dtype == np.float32
    assert reference(jax, True, lambda: jnp.asarray(1.5))[0][0].dtype == np.float64
    assert wide(np.ones(2, np.int64)) and not wide(np.ones(2, np.int32), 2**40)
    with pytest.raises(AssertionError, match="JAX returned"):
        assert_agree(Raised(ValueError("x")), [(np.ones(2), False)], "oracle")
