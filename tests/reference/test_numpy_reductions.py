"""Reductions of ptojax.numpy against jax.numpy: sum/prod/mean/var/std/max/min/any/all/argmax/
argmin/cumsum/cumprod/ptp/count_nonzero over any axes, with keepdims, where=, initial=, dtype=
— eagerly, under jit and through make_ir's IR."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import ptojax.numpy as pnp
from ptojax import dtypes
from pnp_reference import check_modes, random_array

MULTI_AXIS = ["sum", "prod", "mean", "var", "std", "max", "min", "any", "all", "ptp",
              "count_nonzero"]
SINGLE_AXIS = ["argmax", "argmin", "cumsum", "cumprod"]
INDEX_RESULTS = {"argmax", "argmin", "count_nonzero"}  # always int32 (DESIGN.md)
NEEDS_ELEMENTS = {"max", "min", "ptp", "argmax", "argmin"}  # no identity: empty is an error
DTYPES = [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.float64, dtypes.int8,
          dtypes.int32, dtypes.uint8, dtypes.bool_]


def _call(module, name, axis, keepdims):
    fn = getattr(module, name)
    if name in ("cumsum", "cumprod"):
        return lambda x: fn(x, axis=axis)
    return lambda x: fn(x, axis=axis, keepdims=keepdims)


def _jax_call(jnp, name, axis, keepdims):
    """The JAX reference. ptojax accumulates cumulative sums/products of narrow floats in f32
    (DESIGN.md); JAX accumulates them in the narrow type, so compare with JAX on f32."""
    fn = _call(jnp, name, axis, keepdims)
    if name not in ("cumsum", "cumprod"):
        return fn

    def accumulate_in_f32(x):
        narrow = x.dtype in (jnp.float16, jnp.bfloat16)
        return fn(x.astype(jnp.float32)).astype(x.dtype) if narrow else fn(x)
    return accumulate_in_f32


def _reduced_size(shape, axis):
    axes = range(len(shape)) if axis is None else np.atleast_1d(axis)
    return int(np.prod([shape[a] for a in axes]))


def _values(rng, shape, dtype):
    # within [-2, 2]: products of up to 27 values stay exact in 32-bit integers
    return random_array(rng, shape, dtype, low=-2, high=2)


def _accepted(jax, jnp, name, x, axis, keepdims):
    try:
        jax.eval_shape(_call(jnp, name, axis, keepdims), x)
        return True
    except (TypeError, ValueError):
        return False


@st.composite
def reduction_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=3)))
    name = draw(st.sampled_from(MULTI_AXIS + SINGLE_AXIS))
    ndim = len(shape)
    if name in SINGLE_AXIS:
        axis = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1))) if ndim else None
    else:
        axis = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1) if ndim else st.none(),
                              st.lists(st.integers(0, max(ndim - 1, 0)), unique=True,
                                       max_size=ndim).map(tuple)))
    return name, shape, axis, draw(st.booleans())


@given(case=reduction_cases(), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**16))
def test_reductions_match_jax_on_any_shape_and_axes(jax, jnp, case, dtype, seed):
    name, shape, axis, keepdims = case
    if name in NEEDS_ELEMENTS and _reduced_size(shape, axis) == 0:
        return  # covered by the error tests
    x = _values(np.random.default_rng(seed), shape, dtype)
    if not _accepted(jax, jnp, name, x, axis, keepdims):
        return
    check_modes(_call(pnp, name, axis, keepdims), _jax_call(jnp, name, axis, keepdims), x,
                index={0} if name in INDEX_RESULTS else ())


AXIS_VARIANTS = [(None, False), (0, True), (-1, False), ((0, 2), True), ((), False)]


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int8, dtypes.float16], ids=str)
def test_every_reduction_with_every_axis_form_matches_jax(jax, jnp, dtype):
    x = _values(np.random.default_rng(7), (2, 3, 4), dtype)
    calls, labels, index = [], [], set()
    for name in MULTI_AXIS + SINGLE_AXIS:
        for axis, keepdims in AXIS_VARIANTS:
            if name in SINGLE_AXIS and isinstance(axis, tuple):
                continue
            if _accepted(jax, jnp, name, x, axis, keepdims):
                if name in INDEX_RESULTS:
                    index.add(len(calls))
                calls.append((name, axis, keepdims))
                labels.append(f"{name}(axis={axis}, keepdims={keepdims})")
    check_modes(lambda a: [_call(pnp, *c)(a) for c in calls],
                lambda a: [_jax_call(jnp, *c)(a) for c in calls], x, index=index,
                labels=labels)


def test_where_initial_and_dtype_arguments_match_jax(jnp):
    rng = np.random.default_rng(8)
    x = random_array(rng, (3, 4), dtypes.float32)
    mask = rng.random((3, 4)) < 0.6
    mask[:, 0] = True

    def calls(m):
        return [m.sum(x, axis=1, where=mask), m.mean(x, axis=0, where=mask),
                m.var(x, axis=1, where=mask), m.std(x, where=mask, ddof=1),
                m.max(x, axis=1, where=mask, initial=-5.0), m.min(x, initial=-10.0),
                m.prod(x, axis=0, where=mask), m.any(x > 1, axis=1, where=mask),
                m.all(x > -3, where=mask), m.sum(x, initial=2.5, axis=0),
                m.sum(x, dtype=jnp.float16), m.mean(x.astype(np.int8), dtype=jnp.float16),
                m.cumsum(x > 0, axis=1, dtype=jnp.int8), m.var(x, ddof=2, axis=0),
                m.count_nonzero(x > 0, axis=0, keepdims=True)]
    labels = ["sum where", "mean where", "var where", "std where ddof", "max where initial",
              "min initial", "prod where", "any where", "all where", "sum initial",
              "sum dtype", "mean dtype", "cumsum dtype", "var ddof", "count_nonzero"]
    check_modes(lambda _: calls(pnp), lambda _: calls(jnp), x, labels=labels)


def test_nan_propagates_through_max_and_argmax_picks_the_first_nan(jnp):
    x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 0.5, -1.0, 4.0]], np.float32)
    check_modes(lambda a: [pnp.max(a, 1), pnp.min(a, 0), pnp.argmax(a, 1), pnp.argmin(a, 1),
                           pnp.sum(a, 1), pnp.cumsum(a, 1)],
                lambda a: [jnp.max(a, 1), jnp.min(a, 0), jnp.argmax(a, 1), jnp.argmin(a, 1),
                           jnp.sum(a, 1), jnp.cumsum(a, 1)], x, index={2, 3})


def _method_calls(a):
    return [a.sum(0), a.mean(axis=1, keepdims=True), a.max(), a.min(1), a.prod(0), a.var(1),
            a.std(), a.argmax(1), a.argmin(), a.cumsum(1), a.any(), a.all(0)]


def test_array_methods_are_the_reductions(jnp):
    x = random_array(np.random.default_rng(9), (3, 4), dtypes.float32)
    check_modes(lambda a: _method_calls(pnp.asarray(a)) + [pnp.asarray(a).ptp(1)],
                lambda a: _method_calls(a) + [a.max(1) - a.min(1)], x, index={7, 8})
