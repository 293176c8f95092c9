"""``pto.scipy.interpolate.RegularGridInterpolator`` against ``jax.scipy.interpolate``:
linear and nearest, fill values (NaN, None, a number), trailing value dimensions, tuple and
shaped query points, points on grid nodes and outside; the pytree through jit, grad (values
and points) and vmap; JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy.interpolate import RegularGridInterpolator
from ptojax.tree_util import tree_flatten, tree_unflatten
from helpers import assert_close
from jax_golden import expected

RNG = np.random.RandomState(0)
GRID = (np.array([0.0, 1.0, 2.5, 4.0], np.float32), np.array([-1.0, 0.0, 2.0], np.float32))
VALUES = RNG.randn(4, 3).astype(np.float32)
VALUES3 = RNG.randn(4, 3, 2).astype(np.float32)
QUERY = np.stack([RNG.uniform(-1, 5, 7), RNG.uniform(-2, 2, 7)], -1).astype(np.float32)
QUERY[:2] = [[1.0, 0.0], [4.0, 2.0]]     # on grid nodes (the last one the upper corner)


def _check(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-6)


def _program(interpolator_cls, values, values3, query):
    """The shared API on both implementations, as a list of arrays."""
    out = []
    for v in (values, values3):
        for method in ("linear", "nearest"):
            out += [interpolator_cls(GRID, v, method, fill_value=fill)(query)
                    for fill in (np.nan, None, 0.5)]
        ours = interpolator_cls(GRID, v)
        out += [ours(query, method="nearest"), ours((query[:, 0], query[:, 1])),
                ours(query.reshape(7, 1, 2))]
    return out


ONE_DIMENSIONAL = [np.arange(5) * 2, np.array([0.5, 3.2, 7.0])]   # values, query (points:
# np.arange(5))


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py (JAX in 32-bit mode, as
    the tests compare; compiling the three programs took ~10 s on a busy machine)."""
    from jax.scipy.interpolate import RegularGridInterpolator as JaxInterpolator

    def in_32_bits(fn):
        def run(*args):
            with jax.enable_x64(False):
                return jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        return run
    yield ("interpolate/program", [VALUES, VALUES3, QUERY, *GRID],
           in_32_bits(lambda *a: _program(JaxInterpolator, *a[:3])))
    yield ("interpolate/one-dimensional", ONE_DIMENSIONAL,
           in_32_bits(lambda v, q: [JaxInterpolator((np.arange(5),), v)(q)]))
    inside = QUERY[2:]
    yield ("interpolate/grad-vmap", [VALUES, inside, VALUES3.transpose(2, 0, 1), *GRID],
           in_32_bits(lambda values, points, stack, *_: (
               jax.grad(lambda v: JaxInterpolator(GRID, v)(inside).sum())(values),
               jax.grad(lambda q: JaxInterpolator(GRID, VALUES)(q).sum())(points),
               jax.vmap(lambda v: JaxInterpolator(GRID, v)(QUERY))(stack))))


def test_matches_jax():
    """Against JAX's values stored by jax_golden.py."""
    got = _program(RegularGridInterpolator, VALUES, VALUES3, QUERY)
    wants = expected("interpolate/program", [VALUES, VALUES3, QUERY, *GRID])
    assert len(got) == len(wants)
    for g, want in zip(got, wants):
        _check(g, want)


def test_one_dimensional_integer_grid():
    """Against JAX's values stored by jax_golden.py."""
    values, query = ONE_DIMENSIONAL
    (want,) = expected("interpolate/one-dimensional", ONE_DIMENSIONAL)
    _check(RegularGridInterpolator((np.arange(5),), values)(query), want)


def test_pytree_jit_grad_vmap():
    interpolator = RegularGridInterpolator(GRID, VALUES, method="nearest")
    leaves, tree = tree_flatten(interpolator)
    assert len(leaves) == 4 and tree_unflatten(tree, leaves).method == "nearest"
    _check(pto.jit(lambda f, q: f(q))(interpolator, QUERY), interpolator(QUERY))
    inside = QUERY[2:]
    want_values, want_points, want_vmap = expected(   # stored by jax_golden.py
        "interpolate/grad-vmap", [VALUES, inside, VALUES3.transpose(2, 0, 1), *GRID])
    _check(pto.grad(lambda v: RegularGridInterpolator(GRID, v)(inside).sum())(VALUES),
           want_values)
    _check(pto.grad(lambda q: RegularGridInterpolator(GRID, VALUES)(q).sum())(inside),
           want_points)
    _check(pto.vmap(lambda v: RegularGridInterpolator(GRID, v)(QUERY))(
        VALUES3.transpose(2, 0, 1)), want_vmap)


def test_errors_as_jax():
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(GRID, VALUES, method="cubic")
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(GRID, VALUES)(QUERY, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(GRID, VALUES, bounds_error=True)
    with pytest.raises(ValueError, match="there are 3 point arrays"):
        RegularGridInterpolator(GRID + GRID[:1], VALUES)
    with pytest.raises(ValueError, match="fill_value must be either 'None'"):
        RegularGridInterpolator(GRID, VALUES, fill_value=1j)
    with pytest.raises(ValueError, match="have dimension 3"):
        RegularGridInterpolator(GRID, VALUES)(pnp.ones((4, 3)))
