"""User-defined derivatives and rematerialization: custom_vjp (gradient clipping,
nondiff_argnums, pytrees), custom_jvp (a numerically safe log1pexp, defjvps, higher order) and
checkpoint/remat (same gradient, recomputation visible in the IR), under jit and vmap."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import nn
from ptojax.ir.core import sub_irs
from ptojax.ir.verify import verify
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

X = np.array([-2.0, 0.5, 3.0])


# custom_vjp ----------------------------------------------------------------------------------
@pto.custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (pnp.clip(g, -1.0, 1.0),))


@pytest.mark.parametrize("transform", [lambda f: f, pto.jit], ids=["eager", "jit"])
def test_custom_vjp_clips_the_gradient(transform):
    grad = transform(pto.grad(lambda x: pnp.sum(clip_gradient(x) * np.array([5.0, 0.5, -3.0]))))
    assert_close(grad(X), np.array([1.0, 0.5, -1.0]))
    assert_close(transform(clip_gradient)(X), X)


def test_custom_vjp_with_nondiff_argnums():
    def clip(lo, hi, x):
        return x

    clip = pto.custom_vjp(clip, nondiff_argnums=(0, 1))
    clip.defvjp(lambda lo, hi, x: (x, None), lambda lo, hi, _, g: (pnp.clip(g, lo, hi),))
    grad = pto.grad(lambda x: pnp.sum(clip(-0.5, 2.0, x) * 3.0))(X)
    assert_close(grad, np.full(3, 2.0))


def test_custom_vjp_with_pytree_arguments_residuals_and_a_none_cotangent():
    @pto.custom_vjp
    def scaled(params, x):
        return params["a"] * x + params["b"]

    def fwd(params, x):
        return scaled(params, x), (params["a"], x)

    def bwd(residuals, g):
        a, x = residuals
        return {"a": pnp.sum(g * x) * 10.0, "b": None}, g * a

    scaled.defvjp(fwd, bwd)
    params = {"a": np.array(2.0), "b": np.array(1.0)}
    g_params, g_x = pto.grad(lambda p, x: pnp.sum(scaled(p, x)), argnums=(0, 1))(params, X)
    assert_close(g_params["a"], np.sum(X) * 10.0)
    assert_close(g_params["b"], np.array(0.0))
    assert_close(g_x, np.full(3, 2.0))


def test_custom_vjp_residual_may_be_a_python_scalar_argument():
    @pto.custom_vjp
    def times(x, y):
        return x * y
    times.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1], g * r[0]))
    assert float(pto.grad(lambda x: times(x, 4.0))(3.0)) == 4.0


def test_vmap_of_grad_through_custom_vjp():
    per_example = pto.vmap(pto.grad(lambda x: clip_gradient(x) * 7.0))(X)
    assert_close(per_example, np.ones(3))


# custom_jvp ----------------------------------------------------------------------------------
@pto.custom_jvp
def log1pexp(x):
    return pnp.log1p(pnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * nn.sigmoid(x)


def test_custom_jvp_log1pexp_is_numerically_safe():
    naive = pto.grad(lambda x: pnp.log1p(pnp.exp(x)))(np.float32(100.0))
    assert np.isnan(naive)  # exp overflows: inf / inf
    assert float(pto.grad(log1pexp)(np.float32(100.0))) == 1.0
    assert_close(pto.jit(pto.grad(log1pexp))(np.float32(0.0)), np.float32(0.5))


def test_custom_jvp_higher_order_jvp_and_vmap():
    with pto.enable_x64(False):   # a Python float is float32 in the default mode
        second = pto.grad(pto.grad(log1pexp))(0.0)
    assert_close(second, np.float32(0.25))
    _, tangent = pto.jvp(log1pexp, (X,), (np.ones(3),))
    assert_close(tangent, 1 / (1 + np.exp(-X)))
    assert_close(pto.vmap(pto.grad(log1pexp))(X), 1 / (1 + np.exp(-X)))


def test_custom_jvp_with_nondiff_argnums_and_defjvps():
    def power(n, x):
        return x ** n

    power = pto.custom_jvp(power, nondiff_argnums=(0,))
    power.defjvp(lambda n, primals, tangents: (power(n, primals[0]),
                                               tangents[0] * n * primals[0] ** (n - 1) * 10))
    assert float(pto.grad(lambda x: power(3, x))(2.0)) == 120.0

    @pto.custom_jvp
    def product(x, y):
        return x * y
    product.defjvps(lambda tx, out, x, y: tx * y * 2, lambda ty, out, x, y: ty * x * 3)
    gx, gy = pto.grad(product, argnums=(0, 1))(2.0, 5.0)
    assert (float(gx), float(gy)) == (10.0, 6.0)


# checkpoint ----------------------------------------------------------------------------------
def block(x):
    return pnp.sin(pnp.sin(x))


def _count(ir, name):
    """Equations named ``name`` in ``ir`` and its sub-IRs."""
    return sum((e.prim.name == name) + sum(_count(b.ir, name) for b in sub_irs(e.params))
               for e in ir.eqns)


def test_checkpoint_has_the_same_gradient_and_recomputes_in_the_backward_pass():
    plain = lambda x: pnp.sum(block(x) ** 2)  # noqa: E731
    remat = lambda x: pnp.sum(pto.checkpoint(block)(x) ** 2)  # noqa: E731
    assert_close(pto.grad(remat)(X), pto.grad(plain)(X), rtol=1e-12)
    assert_close(pto.jit(pto.grad(remat))(X), pto.grad(plain)(X), rtol=1e-12)

    ir = pto.make_ir(pto.grad(remat))(X)
    verify(ir)
    regions = [e for e in ir.eqns if e.prim.name == "checkpoint"]
    assert len(regions) == 2  # the forward region and its recomputing copy
    forward, backward = regions
    assert len(forward.outputs) == 1  # no intermediates are saved...
    assert _count(backward.params["body"].ir, "sin") == 1  # ...sin(x) is recomputed
    optimized = pto.jit(pto.grad(remat)).lower(X).optimized_ir.ir
    plain_ir = pto.jit(pto.grad(plain)).lower(X).optimized_ir.ir
    assert (_count(optimized, "sin"), _count(plain_ir, "sin")) == (3, 2)


def test_checkpoint_with_closure_static_argnums_nesting_and_jvp():
    w = np.array([1.0, 2.0, 3.0])

    def layer(x, power):
        return pnp.tanh(x * w) ** power

    remat_layer = pto.remat(layer, static_argnums=(1,))
    nested = pto.checkpoint(lambda x: remat_layer(remat_layer(x, 2), 3))
    plain = lambda x: pnp.sum(layer(layer(x, 2), 3))  # noqa: E731
    assert_close(pto.grad(lambda x: pnp.sum(nested(x)))(X), pto.grad(plain)(X), rtol=1e-12)
    _, tangent = pto.jvp(nested, (X,), (np.ones(3),))
    _, expected = pto.jvp(lambda x: layer(layer(x, 2), 3), (X,), (np.ones(3),))
    assert_close(tangent, expected, rtol=1e-12)
    per_example = pto.vmap(pto.grad(lambda x: pnp.sum(nested(x))))(np.stack([X, X * 2]))
    assert_close(per_example[1], pto.grad(plain)(X * 2), rtol=1e-12)


# rules closing over traced values --------------------------------------------------------------
def scaled_sin_sum(x, w):
    scale = w * 2.0  # a value of the trace being differentiated, captured by the rule

    @pto.custom_jvp
    def scaled_sin(y):
        return pnp.sin(y) * scale
    scaled_sin.defjvp(lambda p, t: (scaled_sin(p[0]), t[0] * pnp.cos(p[0]) * scale))
    return pnp.sum(scaled_sin(x))


def test_custom_jvp_rule_closing_over_a_traced_value():
    x = np.array([0.5, 1.0])
    assert_close(pto.grad(scaled_sin_sum)(x, 2.0), 4.0 * np.cos(x))
    assert_close(pto.jit(pto.grad(scaled_sin_sum))(x, 2.0), 4.0 * np.cos(x))
    with pto.enable_x64(False):   # a Python float is float32 in the default mode
        second = pto.grad(pto.grad(lambda y: scaled_sin_sum(y, 2.0)))(0.5)
    assert_close(second, np.float32(-4.0 * np.sin(0.5)), rtol=1e-6)


def test_custom_vjp_with_a_traced_nondiff_argument():
    def floor_gradient(lo, x):
        return x

    floor_gradient = pto.custom_vjp(floor_gradient, nondiff_argnums=(0,))
    floor_gradient.defvjp(lambda lo, x: (x, None), lambda lo, _, g: (pnp.maximum(g, lo),))
    weights = np.array([-5.0, 1.0, 2.0])

    def loss(x, lo):
        return pnp.sum(floor_gradient(lo * 1.0, x) * weights)
    x = np.array([-1.0, 0.5, 2.0])
    assert_close(pto.jit(pto.grad(loss))(x, -1.0), np.array([-1.0, 1.0, 2.0]))
    per_example = pto.vmap(pto.grad(loss))(np.stack([x, x]), np.array([-1.0, -3.0]))
    assert_close(per_example, np.array([[-1.0, 1.0, 2.0], [-3.0, 1.0, 2.0]]))


def test_grad_of_vmap_of_custom_rules_closing_over_a_batched_value():
    def with_custom_jvp(x, w):
        @pto.custom_jvp
        def scaled_sin(y):
            return pnp.sin(y) * w
        scaled_sin.defjvp(lambda p, t: (scaled_sin(p[0]), t[0] * pnp.cos(p[0]) * w))
        return scaled_sin(x)

    def with_custom_vjp(x, w):
        @pto.custom_vjp
        def scaled_sin(y):
            return pnp.sin(y) * w
        scaled_sin.defvjp(lambda y: (scaled_sin(y), pnp.cos(y) * w), lambda r, g: (g * r,))
        return scaled_sin(x)

    xs, ws = np.array([0.1, 0.2]), np.array([2.0, 3.0])
    for fn in (with_custom_jvp, with_custom_vjp):
        assert_close(pto.grad(lambda x: pnp.sum(pto.vmap(fn)(x, ws)))(xs), np.cos(xs) * ws)
        assert_close(pto.vmap(pto.grad(fn))(xs, ws), np.cos(xs) * ws)
