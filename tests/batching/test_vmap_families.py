"""vmap of each primitive family, through the user-facing API, against jax.vmap and against a
Python loop with stacking. Hypothesis draws the per-example shapes, which arguments are mapped
and at which axis (negative axes included), the batch size and the out_axes."""
import functools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close, jax_cheaply

EXAMPLES = max(6, settings.default.max_examples // 4)  # JAX compiles each case


# per-example argument samplers: each returns ``sample(rng) -> list of numpy arrays`` ---------
def _floats(*shape):
    return lambda rng: rng.standard_normal(shape).astype(np.float32)


def _ints(high, *shape):
    return lambda rng: rng.integers(0, high, size=shape).astype(np.int32)


def _sampler(*parts):
    return lambda rng: [p(rng) for p in parts]


small = st.integers(1, 4)
matrix = st.tuples(small, small)


def _elementwise(data):
    shape = data.draw(st.lists(small, max_size=3).map(tuple))
    return _sampler(_floats(*shape), _floats(*shape))


def _broadcasting(data):
    m, n = data.draw(matrix)
    return _sampler(_floats(m, n), _floats(n))


def _matrix(data):
    return _sampler(_floats(*data.draw(matrix)))


def _matmul(data):
    m, k, n = data.draw(st.tuples(small, small, small))
    lhs = (k,) if data.draw(st.booleans()) else (m, k)
    return _sampler(_floats(*lhs), _floats(k, n))


def _einsum(data):
    i, j, k = data.draw(st.tuples(small, small, small))
    return _sampler(_floats(i, j), _floats(j, k), _floats(k))


def _take(data):
    m, n = data.draw(matrix)
    k = data.draw(small)
    return _sampler(_floats(m, n), _ints(m, k))


def _dynamic_index(data):
    m, n = data.draw(matrix)
    return _sampler(_floats(m, n), _ints(m, m), _floats(n))


def _window(data):
    m, n = data.draw(st.tuples(st.integers(2, 5), st.integers(2, 5)))
    return _sampler(_floats(m, n), _ints(m + 2, 3), _floats(2, n))


def _scatter(data):
    m, n = data.draw(matrix)
    k = data.draw(small)
    return _sampler(_floats(m, n), _ints(m, k), _floats(k, n))


def _random_keys(data):
    return _sampler(lambda rng: rng.integers(0, 2 ** 32, size=2, dtype=np.uint32))


# the families: (sampler, ptojax fn, jax fn builder taking (jax, jnp)) -------------------------
def _elementwise_fns(np_, where):
    return lambda x, y: np_.tanh(x) * y - np_.exp(-x * x) / (1 + np_.abs(y)) \
        + where(x > y, x, 2 * y)


FAMILIES = {
    "elementwise": (_elementwise, lambda j, jnp: _elementwise_fns(jnp, jnp.where),
                    _elementwise_fns(pnp, pnp.where)),
    "broadcast and compare": (
        _broadcasting, lambda j, jnp: lambda x, b: jnp.maximum(x + b, 0.5) * (x < b),
        lambda x, b: pnp.maximum(x + b, 0.5) * (x < b)),
    "reductions": (
        _matrix, lambda j, jnp: lambda x: (jnp.sum(x, 0), jnp.max(x, -1), jnp.mean(x),
                                           jnp.argmax(x, 1),
                                           jnp.prod(x, (0, 1)), jnp.min(x, 0)),
        lambda x: (pnp.sum(x, 0), pnp.max(x, -1), pnp.mean(x), pnp.argmax(x, 1),
                   pnp.prod(x, (0, 1)), pnp.min(x, 0))),
    "cumulative and nn": (
        _matrix, lambda j, jnp: lambda x: (jnp.cumsum(x, 1), jnp.cumprod(x, 0),
                                           j.nn.softmax(x, 0), j.nn.logsumexp(x, 1)),
        lambda x: (pnp.cumsum(x, 1), pnp.cumprod(x, 0), pto.nn.softmax(x, 0),
                   pto.nn.logsumexp(x, 1))),
    "matmul": (_matmul, lambda j, jnp: lambda a, b: jnp.tanh(a @ b) @ b.T,
               lambda a, b: pnp.tanh(a @ b) @ b.T),
    "einsum and dot_general": (
        _einsum, lambda j, jnp: lambda a, b, c: (jnp.einsum("ij,jk,k->i", a, b, c),
                                                 jnp.tensordot(a, b, 1), jnp.outer(c, c)),
        lambda a, b, c: (pnp.einsum("ij,jk,k->i", a, b, c), pnp.tensordot(a, b, 1),
                         pnp.outer(c, c))),
    "shapes": (
        _matrix, lambda j, jnp: lambda x: (jnp.reshape(x.T, (-1,)),
                                           jnp.concatenate([x, 2 * x], 1),
                                           jnp.pad(x, ((1, 0), (0, 2))), jnp.flip(x, 0),
                                           x[None, 1:, ::2], jnp.squeeze(x[:1], 0)),
        lambda x: (pnp.reshape(x.T, (-1,)), pnp.concatenate([x, 2 * x], 1),
                   pnp.pad(x, ((1, 0), (0, 2))), pnp.flip(x, 0), x[None, 1:, ::2],
                   pnp.squeeze(x[:1], 0))),
    "gather": (_take, lambda j, jnp: lambda x, i: (jnp.take(x, i, axis=0), x[i],
                                                  jnp.take(x, i % x.shape[1], axis=1),
                                                  jnp.take_along_axis(x, jnp.argsort(x, 1), 1)),
               lambda x, i: (pnp.take(x, i, axis=0), x[i], pnp.take(x, i % x.shape[1], axis=1),
                             pnp.take_along_axis(x, pnp.argsort(x, 1), 1))),
    "dynamic index and update": (
        _dynamic_index, lambda j, jnp: lambda x, i, v: (x[i[0]], x.at[i[0]].set(v),
                                                        x[:, 0].at[i].add(1.0)),
        lambda x, i, v: (x[i[0]], x.at[i[0]].set(v), x[:, 0].at[i].add(1.0))),
    "dynamic_slice": (
        _window, lambda j, jnp: lambda x, i, u: (
            j.lax.dynamic_slice(x, (i[0], i[1]), (2, 2)),
            j.lax.dynamic_update_slice(x, u, (i[2], np.int32(0)))),
        lambda x, i, u: (pto.lax.dynamic_slice(x, (i[0], i[1]), (2, 2)),
                         pto.lax.dynamic_update_slice(x, u, (i[2], np.int32(0))))),
    "scatter": (_scatter, lambda j, jnp: lambda x, i, u: (x.at[i].add(u), x.at[i].max(u)),
                lambda x, i, u: (x.at[i].add(u), x.at[i].max(u))),
    "sort": (_matrix, lambda j, jnp: lambda x: (jnp.sort(x, 0), jnp.argsort(x, 1),
                                                jnp.sort(x, None)),
             lambda x: (pnp.sort(x, 0), pnp.argsort(x, 1), pnp.sort(x, None))),
    "iota and convert": (
        _matrix, lambda j, jnp: lambda x: (x.astype(np.int32) + jnp.arange(x.shape[1],
                                                                          dtype=np.int32),
                                           jnp.arange(x.shape[0], dtype=np.float32) @ x),
        lambda x: (x.astype(np.int32) + pnp.arange(x.shape[1], dtype=np.int32),
                   pnp.arange(x.shape[0], dtype=np.float32) @ x)),
    "random": (_random_keys, lambda j, jnp: lambda k: j.random.uniform(k, (3,), np.float32),
        lambda k: pto.random.uniform(k, (3,))),
}


@functools.lru_cache(maxsize=None)
def _jax_fn(name):
    import jax
    return FAMILIES[name][1](jax, jax.numpy)


def _draw_in_axes(data, args):
    axes = []
    for i, a in enumerate(args):
        choices = st.none() | st.integers(-(a.ndim + 1), a.ndim)
        axes.append(data.draw(choices, label=f"in_axes[{i}]"))
    if all(a is None for a in axes):
        axes[0] = 0
    return tuple(axes)


def _stack(examples, in_axes):
    return [examples[0][i] if ax is None else pnp.stack([ex[i] for ex in examples], ax)
            for i, ax in enumerate(in_axes)]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_matches_jax_and_a_loop(jax, name):
    """Hypothesis draws the examples; each is checked against the loop inside the hypothesis
    run, and JAX then computes all of them in one ``jax.jit`` (XLA's compile of one program
    per example was most of this test's time). A JAX mismatch names its example."""
    draw_sampler, _, pto_fn = FAMILIES[name]
    checked = []

    @settings(max_examples=EXAMPLES)
    @given(data=st.data())
    def draw(data):
        sample = draw_sampler(data)
        rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
        n = data.draw(st.integers(1, 3), label="batch size")
        examples = [[pnp.asarray(a) for a in sample(rng)] for _ in range(n)]
        in_axes = _draw_in_axes(data, examples[0])
        stacked = _stack(examples, in_axes)

        loop = [pto_fn(*[ex[i] if ax is not None else examples[0][i]
                         for i, ax in enumerate(in_axes)]) for ex in examples]
        single = not isinstance(loop[0], tuple)
        loop = [[o] if single else list(o) for o in loop]
        out_axes = [data.draw(st.integers(-(np.ndim(o) + 1), np.ndim(o)), label="out_axis")
                    for o in loop[0]]
        spec = out_axes[0] if single else tuple(out_axes)

        got = pto.vmap(pto_fn, in_axes, spec)(*stacked)
        got = [got] if single else list(got)
        for k, axis in enumerate(out_axes):
            expected = np.stack([np.asarray(o[k]) for o in loop], axis)
            assert_close(got[k], expected, rtol=1e-5, atol=1e-5)
        checked.append((in_axes, spec, single, [np.asarray(a) for a in stacked], got))

    draw()
    assert checked

    def reference(inputs):
        return [jax.vmap(_jax_fn(name), in_axes, spec)(*args)
                for (in_axes, spec, *_), args in zip(checked, inputs)]

    inputs = [args for *_, args, _ in checked]
    wants = jax_cheaply(jax, reference, inputs)
    for (in_axes, spec, single, args, got), want in zip(checked, wants):
        want = [want] if single else list(want)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            try:
                assert_close(g, w, rtol=1e-5, atol=1e-5, check_dtype=False)
            except AssertionError as e:
                raise AssertionError(f"{name}: in_axes={in_axes} out_axes={spec} "
                                     f"args={args!r}: {e}") from None
