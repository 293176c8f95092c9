"""Derivatives at special points — ties, zeros, infinities, clamped edges — agree with JAX's
conventions: max/min split the cotangent among tied arguments, products are exact with zeros,
abs has derivative 1 at 0, and so on. All JAX references come from one ``jax.jit`` call."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax, nn
from ptojax.ops.gather_scatter import scatter as point_scatter
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

W5 = np.arange(1.0, 6.0)
TIES = np.array([1.0, 3.0, 3.0, 2.0, 3.0])
TARGETS = np.array([[1], [1], [0]], np.int32)

# name -> (ptojax fn, jax -> the same fn in JAX, float64 args); gradients w.r.t. every arg
CONVENTIONS = {
    "reduce_max_ties": (pnp.max, lambda jax: jax.numpy.max, [TIES]),
    "reduce_min_ties_2d": (lambda x: pnp.sum(pnp.min(x, axis=1) * W5[:2]),
                           lambda jax: lambda x: jax.numpy.sum(jax.numpy.min(x, 1) * W5[:2]),
                           [np.array([[2.0, 1.0, 1.0], [0.0, 5.0, 0.0]])]),
    "maximum_ties": (lambda x, y: pnp.sum(pnp.maximum(x, y) * W5),
                     lambda jax: lambda x, y: jax.numpy.sum(jax.numpy.maximum(x, y) * W5),
                     [TIES, TIES[::-1].copy()]),
    "minimum_tie_with_scalar": (lambda x, y: pnp.sum(pnp.minimum(x, y)),
                                lambda jax: lambda x, y: jax.numpy.sum(jax.numpy.minimum(x, y)),
                                [TIES, np.array(3.0)]),
    "cummax_ties": (lambda x: pnp.sum(lax.cummax(x, 0) * W5),
                    lambda jax: lambda x: jax.numpy.sum(jax.lax.cummax(x, 0) * W5), [TIES]),
    "cummin_reverse_ties": (
        lambda x: pnp.sum(lax.cummin(x, 0, reverse=True) * W5),
        lambda jax: lambda x: jax.numpy.sum(jax.lax.cummin(x, 0, reverse=True) * W5), [-TIES]),
    "sort_ties_stable": (lambda x: pnp.sum(pnp.sort(x) * W5),
                         lambda jax: lambda x: jax.numpy.sum(jax.numpy.sort(x) * W5), [TIES]),
    "scatter_max_ties": (
        lambda x, u: pnp.sum(point_scatter(x, TARGETS, u, (0,), 0, "max") * W5[:3]),
        lambda jax: lambda x, u: jax.numpy.sum(x.at[TARGETS[:, 0]].max(u) * W5[:3]),
        [np.array([1.0, 5.0, 2.0]), np.array([5.0, 4.0, 5.0])]),
    "prod_one_zero": (pnp.prod, lambda jax: jax.numpy.prod, [np.array([0.0, 2.0, 3.0])]),
    "prod_two_zeros": (pnp.prod, lambda jax: jax.numpy.prod, [np.array([0.0, 2.0, 0.0])]),
    "cumprod_zeros": (lambda x: pnp.sum(pnp.cumprod(x) * W5[:4]),
                      lambda jax: lambda x: jax.numpy.sum(jax.numpy.cumprod(x) * W5[:4]),
                      [np.array([2.0, 0.0, 3.0, 0.5])]),
    "abs_at_zero": (pnp.abs, lambda jax: jax.numpy.abs, [np.array(0.0)]),
    "sqrt_at_zero": (pnp.sqrt, lambda jax: jax.numpy.sqrt, [np.array(0.0)]),
    "log_at_zero": (pnp.log, lambda jax: jax.numpy.log, [np.array(0.0)]),
    "pow_at_zero": (lambda x, y: x ** y, lambda jax: lambda x, y: x ** y,
                    [np.array(0.0), np.array(2.5)]),
    "pow_zero_to_zero": (lambda x, y: x ** y, lambda jax: lambda x, y: x ** y,
                         [np.array(0.0), np.array(0.0)]),
    "integer_pow_negative_at_zero": (lambda x: lax.integer_pow(x, -2),
                                     lambda jax: lambda x: jax.lax.integer_pow(x, -2),
                                     [np.array(0.0)]),
    "relu_at_zero": (lambda x: pnp.sum(nn.relu(x)),
                     lambda jax: lambda x: jax.numpy.sum(jax.nn.relu(x)),
                     [np.array([0.0, -1.0, 2.0])]),
    "clamp_at_low_edge": (lax.clamp, lambda jax: jax.lax.clamp,
                          [np.array(1.0), np.array(1.0), np.array(2.0)]),
    "clamp_at_high_edge": (lax.clamp, lambda jax: jax.lax.clamp,
                           [np.array(1.0), np.array(2.0), np.array(2.0)]),
    "where_with_nan_branch": (
        lambda x: pnp.where(x > 0, pnp.sqrt(x), 0.0),
        lambda jax: lambda x: jax.numpy.where(x > 0, jax.numpy.sqrt(x), 0.0), [np.array(-1.0)]),
    "logsumexp_with_minus_inf": (nn.logsumexp, lambda jax: jax.nn.logsumexp,
                                 [np.array([-np.inf, 0.0, 1.0])]),
    "softmax_uniform": (lambda x: nn.softmax(x)[1], lambda jax: lambda x: jax.nn.softmax(x)[1],
                        [np.ones(3)]),
    "rem_negative_divisor": (lax.rem, lambda jax: jax.lax.rem, [np.array(5.5), np.array(-2.0)]),
    "atan2_at_origin": (lax.atan2, lambda jax: jax.lax.atan2, [np.array(0.0), np.array(0.0)]),
}


@pytest.fixture(scope="module")
def jax_gradients(jax):
    @jax.jit
    def references():
        return {name: jax.grad(make(jax), argnums=tuple(range(len(args))))(*args)
                for name, (_, make, args) in CONVENTIONS.items()}
    return references()


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_gradient_convention_matches_jax(name, jax_gradients):
    fn, _, args = CONVENTIONS[name]
    grads = pto.grad(fn, argnums=tuple(range(len(args))))(*args)
    for got, expected in zip(grads, jax_gradients[name]):
        assert_close(got, np.asarray(expected), rtol=1e-12, atol=1e-12)
