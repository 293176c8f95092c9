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


def test_matches_jax(jax):
    from jax.scipy.interpolate import RegularGridInterpolator as JaxInterpolator
    with jax.enable_x64(False):
        wants = jax.jit(lambda *a: _program(JaxInterpolator, *a))(VALUES, VALUES3, QUERY)
    for got, want in zip(_program(RegularGridInterpolator, VALUES, VALUES3, QUERY), wants):
        _check(got, want)


def test_one_dimensional_integer_grid(jax):
    from jax.scipy.interpolate import RegularGridInterpolator as JaxInterpolator
    points, values, query = (np.arange(5),), np.arange(5) * 2, np.array([0.5, 3.2, 7.0])
    with jax.enable_x64(False):
        want = jax.jit(lambda v, q: JaxInterpolator(points, v)(q))(values, query)
    _check(RegularGridInterpolator(points, values)(query), want)


def test_pytree_jit_grad_vmap(jax):
    from jax.scipy.interpolate import RegularGridInterpolator as JaxInterpolator
    interpolator = RegularGridInterpolator(GRID, VALUES, method="nearest")
    leaves, tree = tree_flatten(interpolator)
    assert len(leaves) == 4 and tree_unflatten(tree, leaves).method == "nearest"
    _check(pto.jit(lambda f, q: f(q))(interpolator, QUERY), interpolator(QUERY))
    inside = QUERY[2:]
    with jax.enable_x64(False):
        want_values, want_points, want_vmap = jax.jit(lambda values, points, stack: (
            jax.grad(lambda v: JaxInterpolator(GRID, v)(inside).sum())(values),
            jax.grad(lambda q: JaxInterpolator(GRID, VALUES)(q).sum())(points),
            jax.vmap(lambda v: JaxInterpolator(GRID, v)(QUERY))(stack)))(
                VALUES, inside, VALUES3.transpose(2, 0, 1))
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
