"""Shape manipulation of ptojax.numpy against jax.numpy: reshape, ravel, transpose, swapaxes,
moveaxis, concatenate, stack, split, squeeze, expand_dims, broadcast_to, tile, repeat, flip,
roll, tril/triu, pad, diagonal, sort/argsort — hypothesis over shapes and parameters, eagerly,
under jit and through make_ir's IR."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ptojax.numpy as pnp
from ptojax import dtypes
from pnp_reference import check_modes, random_array

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def _axis(data, ndim):
    return data.draw(st.integers(-ndim, ndim - 1))


def _reshape(data, shape):
    sizes = list(shape)
    k = data.draw(st.integers(0, len(sizes) - 1))
    sizes[k:k + 2] = [math.prod(sizes[k:k + 2])]
    sizes.insert(data.draw(st.integers(0, len(sizes))), 1)
    if data.draw(st.booleans()):
        sizes[data.draw(st.integers(0, len(sizes) - 1))] = -1
    order = data.draw(st.sampled_from(["C", "F"]))
    return lambda m, x: m.reshape(x, tuple(sizes), order=order)


def _transpose(data, shape):
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    return lambda m, x: m.transpose(x, perm)


def _swapaxes(data, shape):
    a, b = _axis(data, len(shape)), _axis(data, len(shape))
    return lambda m, x: m.swapaxes(x, a, b)


def _moveaxis(data, shape):
    n = data.draw(st.integers(1, len(shape)))
    src = data.draw(st.permutations(range(len(shape))))[:n]
    dst = data.draw(st.permutations(range(-len(shape), 0)))[:n]
    return lambda m, x: m.moveaxis(x, tuple(src), tuple(dst))


def _concatenate(data, shape):
    axis = _axis(data, len(shape))
    other = list(shape)
    other[axis] = data.draw(st.integers(0, 3))
    y = np.arange(math.prod(other), dtype=np.int8).reshape(other)
    return lambda m, x: m.concatenate([x, y, x], axis=axis)


def _stack(data, shape):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    return lambda m, x: m.stack([x, x * 2, x], axis=axis)


def _split(data, shape):
    axis = _axis(data, len(shape))
    n = shape[axis]
    sections = data.draw(st.one_of(
        st.sampled_from([d for d in range(1, n + 1) if n % d == 0]),
        st.lists(st.integers(0, n), max_size=3).map(sorted)))
    return lambda m, x: m.split(x, sections, axis=axis)


def _squeeze(data, shape):
    ones = [d for d, n in enumerate(shape) if n == 1]
    axis = data.draw(st.one_of(st.none(), st.sampled_from(ones))) if ones else None
    return lambda m, x: m.squeeze(x, axis)


def _expand_dims(data, shape):
    n = data.draw(st.integers(1, 2))
    axes = tuple(data.draw(st.permutations(range(len(shape) + n)))[:n])
    return lambda m, x: m.expand_dims(x, axes)


def _broadcast_to(data, shape):
    lead = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    return lambda m, x: m.broadcast_to(m.reshape(x, shape), lead + shape)


def _tile(data, shape):
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=4)))
    return lambda m, x: m.tile(x, reps)


def _repeat(data, shape):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    n = math.prod(shape) if axis is None else shape[axis]
    repeats = data.draw(st.one_of(st.integers(0, 3),
                                  st.lists(st.integers(0, 2), min_size=n, max_size=n)
                                  .map(np.array)))
    return lambda m, x: m.repeat(x, repeats, axis=axis)


def _flip_roll(data, shape):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    shift = data.draw(st.integers(-5, 5))
    return lambda m, x: [m.flip(x, axis), m.roll(x, shift, axis)]


def _triangles(data, shape):
    k = data.draw(st.integers(-3, 3))
    return lambda m, x: [m.tril(x, k), m.triu(x, k)] if x.ndim >= 2 else [x]


def _pad(data, shape):
    widths = [tuple(data.draw(st.lists(st.integers(0, 2), min_size=2, max_size=2)))
              for _ in shape]
    return lambda m, x: m.pad(x, widths, constant_values=7)


def _sorting(data, shape):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    return lambda m, x: [m.sort(x, axis=axis), m.argsort(x, axis=axis)]


OPS = {"reshape": _reshape, "transpose": _transpose, "swapaxes": _swapaxes,
       "moveaxis": _moveaxis, "concatenate": _concatenate, "stack": _stack, "split": _split,
       "squeeze": _squeeze, "expand_dims": _expand_dims, "broadcast_to": _broadcast_to,
       "tile": _tile, "repeat": _repeat, "flip_roll": _flip_roll, "triangles": _triangles,
       "pad": _pad, "sorting": _sorting}


@given(data=st.data(), name=st.sampled_from(sorted(OPS)), shape=shapes,
       dtype=st.sampled_from([dtypes.float32, dtypes.int16, dtypes.bfloat16]))
def test_shape_functions_match_jax(jnp, data, name, shape, dtype):
    if name == "squeeze" and data.draw(st.booleans()):
        shape = shape + (1,)
    op = OPS[name](data, shape)
    x = random_array(np.random.default_rng(0), shape, dtype)
    index = {1} if name == "sorting" else ()
    check_modes(lambda a: op(pnp, a), lambda a: op(jnp, a), x, index=index)


def _fixed_calls(m, x, y):
    """Every function with a few parameter forms on x: (2, 3, 4) and y: (3, 4)."""
    return [
        m.reshape(x, (4, -1)), m.reshape(x, 24), m.ravel(x), m.ravel(x, order="F"),
        m.transpose(x), m.transpose(x, (1, -1, 0)), m.swapaxes(x, 0, -1), m.moveaxis(x, 0, -1),
        m.concatenate([x, x[:1]], 0), m.concatenate([x, x], axis=None),
        m.concat([y, y], axis=-1), m.stack([y, y]), m.stack([y, y], axis=-1), m.hstack([y, y]),
        m.vstack([y, y[0]]), m.dstack([y, y]), m.column_stack([y[0], y[1]]),
        *m.split(x, 2, axis=0), *m.split(x, [1, 3], axis=2), *m.array_split(y, 3, axis=1),
        m.squeeze(x[:1]), m.expand_dims(y, (0, 3)), m.broadcast_to(y, (2, 3, 4)),
        *m.broadcast_arrays(y, x), m.tile(y, (2, 1, 2)), m.repeat(y, 2, axis=0),
        m.repeat(y, np.array([1, 0, 2]), axis=0), m.flip(x), m.fliplr(y), m.flipud(y),
        m.roll(x, 2), m.roll(x, (1, -1), axis=(0, 2)), m.tril(x), m.triu(y, 1), m.tril(y, -1),
        m.pad(y, 1), m.pad(y, ((0, 1), (2, 0))), m.diagonal(x, 1, 1, 2), m.trace(y),
        m.atleast_1d(y[0, 0]), m.atleast_2d(y[0]), m.atleast_3d(y), m.matrix_transpose(x),
        m.permute_dims(x, (2, 0, 1)), m.diag(y[0]), m.diag(y, -1),
    ]


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.int8], ids=str)
def test_every_shape_function_with_several_parameter_forms_matches_jax(jnp, dtype):
    rng = np.random.default_rng(1)
    x, y = random_array(rng, (2, 3, 4), dtype), random_array(rng, (3, 4), dtype)
    check_modes(lambda a, b: _fixed_calls(pnp, a, b), lambda a, b: _fixed_calls(jnp, a, b),
                x, y)


def test_array_methods_are_the_shape_functions(jnp):
    x = random_array(np.random.default_rng(2), (2, 3, 4), dtypes.float32)

    def calls(a):
        return [a.reshape(4, 6), a.reshape((-1,)), a.T, a.mT, a.transpose(2, 0, 1),
                a.transpose(), a.swapaxes(0, 2), a.ravel(), a.flatten(), a[:1].squeeze(0),
                a.repeat(2, axis=1), a.astype(np.int8), a.astype(float), a.clip(-1, 1),
                a.round(), a.sort(), a.argsort(axis=0), a.diagonal(0, 1, 2), a.copy()]
    check_modes(lambda a: calls(pnp.asarray(a)), calls, x, index={16})


def test_sorting_puts_nans_last_and_keeps_ties_stable_like_jax(jnp):
    x = np.array([[3.0, np.nan, -0.0, 1.0, 0.0, np.nan, 1.0], [2, 2, 1, 1, 3, 3, -np.inf]],
                 np.float32)

    def calls(m, a):
        return [m.sort(a), m.argsort(a), m.sort(a, axis=0), m.argsort(a, axis=None),
                m.sort(a, descending=True), m.argsort(a, descending=True),
                m.argsort(a[1].astype(np.int8), descending=True)]
    check_modes(lambda a: calls(pnp, a), lambda a: calls(jnp, a), x, index={1, 3, 5, 6})


def test_broadcast_shapes_matches_jax(jnp):
    for shapes in [((3, 1), (4,)), ((2, 1, 5), (3, 1), 5), ((),), ((0, 1), (1, 7)), ()]:
        assert pnp.broadcast_shapes(*shapes) == jnp.broadcast_shapes(*shapes)
    from ptojax.errors import ShapeError
    with pytest.raises(ValueError):
        jnp.broadcast_shapes((2,), (3,))
    with pytest.raises(ShapeError, match=r"broadcast_shapes: shapes \(2,\), \(3,\) cannot be"):
        pnp.broadcast_shapes((2,), (3,))
