"""Indexing of ptojax.numpy against jax.numpy: ``x[idx]`` and ``x.at[idx].set/add/multiply/
min/max/get`` for ints, slices with any step, None, Ellipsis, integer arrays (also traced) and
boolean masks, mixed in any order; take and take_along_axis — eagerly, under jit and through
make_ir's IR."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import ptojax.numpy as pnp
from ptojax import dtypes
from pnp_reference import check_modes, random_array
from jax_golden import expected

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)
steps = st.sampled_from([None, 1, 2, 3, -1, -2])


@st.composite
def _slice(draw, n):
    bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    return slice(draw(bound), draw(bound), draw(steps))


@st.composite
def index_for(draw, shape):
    """An index of ``shape``: up to one Ellipsis, masks only without integer arrays, integer
    arrays of mutually broadcastable shapes with in-range (also negative) values."""
    kinds = ["int", "slice", "none", "array", "mask", "ellipsis"]
    advanced_shape = draw(st.sampled_from([(2,), (3,), (2, 1), (1, 3)]))
    entries, d, seen = [], 0, set()
    for _ in range(draw(st.integers(1, len(shape) + 2))):
        kind = draw(st.sampled_from(kinds))
        if kind == "ellipsis" and "ellipsis" not in seen:
            entries.append(Ellipsis)  # standing for the next k dimensions
            d += draw(st.integers(0, len(shape) - d))
        elif kind == "none":
            entries.append(None)
        elif d < len(shape) and kind == "int":
            entries.append(draw(st.integers(-shape[d], shape[d] - 1)))
            d += 1
        elif d < len(shape) and kind == "slice":
            entries.append(draw(_slice(shape[d])))
            d += 1
        elif d < len(shape) and kind == "array" and "mask" not in seen:
            sub = tuple(draw(st.sampled_from([k, 1])) for k in advanced_shape)
            entries.append(np.asarray(draw(st.lists(
                st.integers(-shape[d], shape[d] - 1), min_size=int(np.prod(sub)),
                max_size=int(np.prod(sub))))).reshape(sub))
            d += 1
        elif d < len(shape) and kind == "mask" and "array" not in seen and "mask" not in seen:
            k = draw(st.integers(1, min(2, len(shape) - d)))
            entries.append(np.asarray(draw(st.lists(st.booleans(), min_size=int(np.prod(
                shape[d:d + k])), max_size=int(np.prod(shape[d:d + k]))))).reshape(
                    shape[d:d + k]))
            d += k
        else:
            continue
        seen.add(kind)
    if "ellipsis" in seen:  # the entries after it index the last dimensions
        entries += [slice(None)] * (len(shape) - d)
    return tuple(entries) if draw(st.booleans()) or len(entries) != 1 else entries[0]


def _targets_unique(shape, idx) -> bool:
    """Whether every element ``x[idx]`` selects is a different element of x."""
    picked = np.arange(int(np.prod(shape))).reshape(shape)[idx]
    return np.unique(picked).size == picked.size


UPDATES = ["add", "max"]  # the others share the index plan (see the repeated-index test)


def _index_calls(x, idx, values, with_set):
    calls = [x[idx]] + [getattr(x.at[idx], u)(values) for u in UPDATES]
    return calls + [x.at[idx].set(values)] if with_set else calls


@given(data=st.data(), shape=shapes, dtype=st.sampled_from([dtypes.float32, dtypes.int16]),
       scalar_values=st.booleans())
def test_indexing_and_at_updates_match_jax_for_any_index(jnp, data, shape, dtype,
                                                         scalar_values):
    idx = data.draw(index_for(shape))
    rng = np.random.default_rng(0)
    x = random_array(rng, shape, dtype)
    selected = np.zeros(shape)[idx].shape
    values = 2 if scalar_values else random_array(rng, selected, dtype)
    with_set = _targets_unique(shape, idx)
    check_modes(lambda a, v: _index_calls(pnp.asarray(a), idx, v, with_set),
                lambda a, v: _index_calls(a, idx, v, with_set), x, values)


@given(data=st.data(), shape=st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple))
def test_traced_integer_array_indices_match_jax(jnp, data, shape):
    x = random_array(np.random.default_rng(1), shape, dtypes.float32)
    i = np.asarray(data.draw(st.lists(st.integers(-shape[0], shape[0] - 1), min_size=1,
                                      max_size=4)), np.int32)
    j = np.int32(data.draw(st.integers(-shape[1], shape[1] - 1)))
    form = data.draw(st.sampled_from(["i", "i,j", ":,j", "i,1:", "...,i,None"]))

    def index(i, j):
        return {"i": i, "i,j": (i, j), ":,j": (slice(None), j),
                "i,1:": (i, slice(1, None)), "...,i,None": (Ellipsis, i % shape[-1], None)
                }[form]

    def calls(a, i, j):
        a = pnp.asarray(a) if not hasattr(a, "at") else a
        return [a[index(i, j)], a.at[index(i, j)].add(1.0)]
    check_modes(calls, calls, x, i, j)


def test_out_of_bounds_indices_clamp_on_read_and_drop_on_write_like_jax(jnp):
    x = random_array(np.random.default_rng(2), (4, 3), dtypes.float32)
    oob = np.array([0, 7, -9, 3])

    def calls(a):
        a = pnp.asarray(a) if not hasattr(a, "at") else a
        return [a[oob], a[:, oob % 3], a.at[oob].set(9.0), a.at[oob].add(1.0),
                a.at[oob, 1].multiply(2.0), a.at[oob].get(mode="fill", fill_value=-1.0),
                a.at[1:9].set(0.0), a[5:], a[-9:2]]
    check_modes(calls, calls, x)


def test_repeated_indices_accumulate_like_jax(jnp):
    x = random_array(np.random.default_rng(3), (5,), dtypes.int32)
    rep = np.array([1, 1, 3, 1, 0])

    def calls(a):
        a = pnp.asarray(a) if not hasattr(a, "at") else a
        return [a.at[rep].add(2), a.at[rep].multiply(3), a.at[rep].min(-5), a.at[rep].max(9)]
    check_modes(calls, calls, x)


def test_at_divide_subtract_apply_and_values_of_other_dtypes_match_jax(jnp):
    x = random_array(np.random.default_rng(4), (3, 4), dtypes.float32)

    def calls(a, exp):
        a = pnp.asarray(a) if not hasattr(a, "at") else a
        return [a.at[1].divide(4.0), a.at[:, 2].subtract(1.5), a.at[0].apply(exp),
                a.at[1:, ::2].set(np.int8(3)), a.astype(np.int32).at[0].set(2.7)]
    check_modes(lambda a: calls(a, pnp.exp), lambda a: calls(a, jnp.exp), x)


@pytest.mark.parametrize("mode", [None, "clip", "fill", "wrap"])
def test_take_matches_jax(jnp, mode):
    rng = np.random.default_rng(5)
    x = random_array(rng, (3, 4, 2), dtypes.float32)
    idx = np.array([[0, -1], [5, 2]]) if mode != "fill" else np.array([[0, -1], [2, 1]])

    def calls(m, a):
        return [m.take(a, idx, axis=1, mode=mode), m.take(a, idx, mode=mode),
                m.take(a, idx[0], axis=-1, mode=mode)]
    check_modes(lambda a: calls(pnp, a), lambda a: calls(jnp, a), x)


@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
       data=st.data())
def test_take_along_axis_matches_jax(jnp, shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    index_shape = tuple(data.draw(st.sampled_from([1, n])) if d != axis % len(shape)
                        else data.draw(st.integers(0, 4)) for d, n in enumerate(shape))
    rng = np.random.default_rng(6)
    x = random_array(rng, shape, dtypes.float32)
    idx = rng.integers(-shape[axis], shape[axis], size=index_shape)
    check_modes(lambda a, i: pnp.take_along_axis(a, i, axis),
                lambda a, i: jnp.take_along_axis(a, i, axis), x, idx)


# Every place that reads or writes at an index normalizes a negative index exactly once, then
# clamps (reads) or drops (writes) what is still out of bounds — as JAX, whatever the path:
# basic indexing (dynamic_slice), gathers and scatters, take, lax's dynamic slices.
INDICES = np.array([-7, -5, -4, -3, -1, 0, 2, 3, 5], np.int32)
AT_INDEX = {
    "x[i]": lambda np_, lax_, a, i: a[i],
    "x[i, 1:]": lambda np_, lax_, a, i: a.reshape(3, 1)[i, :],
    "x[[i]]": lambda np_, lax_, a, i: a[np_.stack([i, i])],
    "at get": lambda np_, lax_, a, i: a.at[i].get(),
    "at get fill": lambda np_, lax_, a, i: a.at[i].get(mode="fill", fill_value=-1.0),
    "at get clip": lambda np_, lax_, a, i: a.at[i].get(mode="clip"),
    "at set": lambda np_, lax_, a, i: a.at[i].set(9.0),
    "at add clip": lambda np_, lax_, a, i: a.at[i].add(9.0, mode="clip"),
    "at mul drop": lambda np_, lax_, a, i: a.at[i].multiply(3.0, mode="drop"),
    "at max": lambda np_, lax_, a, i: a.at[i].max(9.0),
    "take": lambda np_, lax_, a, i: np_.take(a, np_.stack([i]), fill_value=-1.0),
    "take clip": lambda np_, lax_, a, i: np_.take(a, np_.stack([i]), mode="clip"),
    "take_along_axis": lambda np_, lax_, a, i: np_.take_along_axis(a, np_.stack([i]), 0,
                                                                   mode="clip"),
    "dynamic_slice": lambda np_, lax_, a, i: lax_.dynamic_slice(a, (i,), (2,)),
    "dynamic_index": lambda np_, lax_, a, i: lax_.dynamic_index_in_dim(a, i, 0, False),
    "dynamic_update_slice": lambda np_, lax_, a, i: lax_.dynamic_update_slice(
        a, np_.full((2,), 9.0, a.dtype), (i,)),
}


AT_INDEX_ARRAY = np.array([10.0, 20.0, 30.0], np.float32)
AT_INDEX_INPUTS = [AT_INDEX_ARRAY, INDICES, INDICES.astype(np.int8)]


def _loss(op, np_, lax_):
    def f(x, i):
        out = op(np_, lax_, x, i)
        return np_.sum(out * np_.arange(1, out.size + 1, dtype=x.dtype).reshape(out.shape))
    return f


def _per_index(fn):
    return lambda x, idx: [fn(x, idx[k]) for k in range(len(idx))]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: each AT_INDEX operation
    and its gradient at every index, int32 then int8 (JAX without x64, as the test's
    comparison is; compiling the 64 programs took ~30 s on a busy machine)."""
    jnp = jax.numpy

    def reference(op):
        def fn(a, *indices):
            with jax.enable_x64(False):
                return [np.asarray(jax.jit(_per_index(f))(a, idx)) for idx in indices
                        for f in (lambda x, i: op(jnp, jax.lax, x, i),
                                  jax.grad(_loss(op, jnp, jax.lax)))]
        return fn
    for name in sorted(AT_INDEX):
        yield f"at-index/{name}", AT_INDEX_INPUTS, reference(AT_INDEX[name])


@pytest.mark.parametrize("name", sorted(AT_INDEX))
def test_each_index_is_normalized_once_then_clamped_or_dropped_like_jax(name):
    """Traced int32/int8 indices from -7 to 5 on a length-3 array: eagerly, under jit (each
    index traced), vmapped over the indices and the gradient, against JAX (without x64; its
    values stored by jax_golden.py)."""
    from ptojax import lax
    import ptojax as pto
    op = AT_INDEX[name]
    a = AT_INDEX_ARRAY
    loss, per_index = (lambda np_, lax_: _loss(op, np_, lax_)), _per_index
    stored = expected(f"at-index/{name}", AT_INDEX_INPUTS)
    for k, idx in enumerate(AT_INDEX_INPUTS[1:]):
        want, want_grad = stored[2 * k], stored[2 * k + 1]
        x = pnp.asarray(a)
        results = {
            "eager": [op(pnp, lax, x, pnp.asarray(i)) for i in idx],
            "jit": pto.jit(per_index(lambda x, i: op(pnp, lax, x, i)))(a, idx),
            "vmap": pto.vmap(lambda i: op(pnp, lax, x, i))(idx),
            "grad": [pto.grad(loss(pnp, lax))(x, pnp.asarray(i)) for i in idx],
            "jit(grad)": pto.jit(per_index(pto.grad(loss(pnp, lax))))(a, idx),
        }
        for mode, got in results.items():
            np.testing.assert_array_equal(np.asarray(got),
                                          want_grad if "grad" in mode else want,
                                          err_msg=f"{name} {mode} {idx.dtype}")
