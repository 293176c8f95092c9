"""The public autodiff API with JAX's semantics: grad/value_and_grad (argnums, has_aux,
allow_int, pytrees), vjp, jvp (float0 tangents), linearize, dtypes of cotangents, and
composition with jit, vmap and itself (higher order)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes, lax
from ptojax.ir.verify import verify
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.default_rng(3)


def quadratic(params, x):
    return pnp.sum((x @ params["w"] + params["b"]) ** 2)


def quadratic_grads(params, x):
    residual = 2 * (x @ params["w"] + params["b"])
    return {"w": x.T @ residual, "b": residual.sum(0)}


PARAMS = {"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)}
X = RNG.standard_normal((4, 3))


# grad and value_and_grad -----------------------------------------------------------------------
def test_grad_of_a_pytree_argument_has_its_structure():
    grads = pto.grad(quadratic)(PARAMS, X)
    assert set(grads) == {"w", "b"}
    for key, expected in quadratic_grads(PARAMS, X).items():
        assert_close(grads[key], expected)


def test_grad_argnums_tuple_returns_one_gradient_per_argument():
    gx, gy = pto.grad(lambda x, y, z: pnp.sum(x * y * z), argnums=(0, 1))(2.0, 3.0, 5.0)
    assert (float(gx), float(gy)) == (15.0, 10.0)


def test_value_and_grad_with_aux():
    def loss(x):
        return pnp.sum(x ** 2), {"norm": pnp.sqrt(pnp.sum(x ** 2))}
    (value, aux), g = pto.value_and_grad(loss, has_aux=True)(np.array([3.0, 4.0]))
    assert float(value) == 25.0 and float(aux["norm"]) == 5.0
    assert_close(g, np.array([6.0, 8.0]))
    g2, aux2 = pto.grad(loss, has_aux=True)(np.array([3.0, 4.0]))
    assert_close(g2, g)
    assert float(aux2["norm"]) == 5.0


def test_grad_passes_keyword_arguments_through():
    assert float(pto.grad(lambda x, scale: scale * x ** 2)(3.0, scale=2.0)) == 12.0


def test_allow_int_gives_float0_zeros_for_integer_inputs():
    gx, gi = pto.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(gx) == 3.0
    assert gi.dtype == dtypes.float0 and gi.shape == ()


@pytest.mark.usefixtures("ptojax_default_mode")
def test_gradient_of_a_python_float_is_weak_like_jax():
    g = pto.grad(lambda x: x * 2.0)(3.0)
    assert g.dtype == np.float32 and g.weak_type and float(g) == 2.0


@pytest.mark.parametrize("dtype", [dtypes.bfloat16, dtypes.float16, dtypes.float32])
def test_cotangents_keep_the_primal_dtype(dtype):
    x = (RNG.standard_normal((4, 3))).astype(dtype)
    w = (RNG.standard_normal((3, 2))).astype(dtype)

    def loss(x, w):
        return pnp.sum(lax.dot_general(x, w, (((1,), (0,)), ((), ())),
                                       preferred_element_type=pnp.float32) ** 2)
    gx, gw = pto.grad(loss, argnums=(0, 1))(x, w)
    assert gx.dtype == dtype and gw.dtype == dtype
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    expected = 2 * (x64 @ w64) @ w64.T
    np.testing.assert_allclose(np.asarray(gx, np.float64), expected, rtol=5e-2, atol=5e-2)


def test_grad_through_a_convert_to_low_precision_and_back():
    g = pto.grad(lambda x: pnp.sum(x.astype(pnp.bfloat16).astype(pnp.float32) * 3.0))(
        np.ones(3, np.float32))
    assert g.dtype == np.float32
    assert_close(g, np.full(3, 3.0, np.float32))


# vjp, jvp, linearize ------------------------------------------------------------------------
def test_vjp_with_pytree_output_and_aux():
    def fn(x):
        return {"a": pnp.sin(x), "b": x * 2.0}, pnp.cos(x)
    out, vjp_fn, aux = pto.vjp(fn, np.array([0.0, 1.0]), has_aux=True)
    (ct,) = vjp_fn({"a": np.ones(2), "b": np.ones(2)})
    assert_close(ct, np.cos([0.0, 1.0]) + 2.0)
    assert_close(aux, np.cos([0.0, 1.0]))
    assert_close(out["b"], np.array([0.0, 2.0]))


def test_vjp_of_several_primals_returns_a_tuple():
    _, vjp_fn = pto.vjp(lambda x, y: x * y, 2.0, 5.0)
    cx, cy = vjp_fn(1.0)
    assert (float(cx), float(cy)) == (5.0, 2.0)


def test_vjp_takes_float0_cotangents_for_integer_outputs():
    _, vjp_fn = pto.vjp(lambda x: (x * 2.0, pnp.argmax(x)), np.array([1.0, 3.0]))
    (ct,) = vjp_fn((np.ones(2), np.zeros((), dtypes.float0)))
    assert_close(ct, np.full(2, 2.0))


def test_jvp_takes_float0_tangents_for_integer_primals():
    out, tout = pto.jvp(lambda x, i: x * i, (2.0, 3), (1.0, np.zeros((), dtypes.float0)))
    assert (float(out), float(tout)) == (6.0, 3.0)


def test_jvp_of_an_integer_output_is_float0():
    _, tout = pto.jvp(lambda x: pnp.argmax(x), (np.array([1.0, 3.0]),), (np.ones(2),))
    assert tout.dtype == dtypes.float0


def test_linearize_matches_jvp_and_runs_only_the_linear_part():
    fn = lambda x: pnp.sin(x) * x  # noqa: E731
    x, t = np.array([0.5, 1.5]), np.array([1.0, -2.0])
    out, f_jvp = pto.linearize(fn, x)
    expected_out, expected_t = pto.jvp(fn, (x,), (t,))
    assert_close(out, expected_out)
    assert_close(f_jvp(t), expected_t)
    linear_ir = pto.make_ir(f_jvp)(t)
    assert {e.prim.name for e in linear_ir.eqns} <= {"mul", "add"}  # sin/cos are residuals


# composition ---------------------------------------------------------------------------------
@pytest.mark.usefixtures("ptojax_default_mode")
def test_higher_order_derivatives_of_sin():
    x = 0.7
    assert_close(pto.grad(pto.grad(pnp.sin))(x), np.float32(-np.sin(x)), rtol=1e-6)
    assert_close(pto.grad(pto.grad(pto.grad(pnp.sin)))(x), np.float32(-np.cos(x)), rtol=1e-6)
    fourth = pto.grad(pto.grad(pto.grad(pto.grad(pnp.sin))))
    with pto.enable_x64(True):   # float64 inputs are float64 in x64 mode only
        assert_close(fourth(np.float64(x)), np.sin(np.float64(x)), rtol=1e-12)


def test_jvp_of_grad_and_grad_of_jvp_agree():
    fn = lambda x: pnp.sum(pnp.exp(pnp.sin(x)))  # noqa: E731
    x, t = np.array([0.3, -0.4]), np.array([1.0, 2.0])
    _, hvp_fwd = pto.jvp(pto.grad(fn), (x,), (t,))
    hvp_rev = pto.grad(lambda y: pto.jvp(fn, (y,), (t,))[1])(x)
    assert_close(hvp_fwd, hvp_rev, rtol=1e-12)


def test_grad_under_jit_matches_eager_and_caches():
    step = pto.jit(pto.grad(quadratic))
    first, second = step(PARAMS, X), step(PARAMS, X)
    eager = pto.grad(quadratic)(PARAMS, X)
    for key in eager:
        assert_close(first[key], eager[key])
        assert_close(second[key], eager[key])
    assert step.cache_size() == 1


def test_jit_inside_grad_inside_jit():
    inner = pto.jit(lambda x: pnp.sin(x) * x)
    outer = pto.jit(pto.grad(lambda x: pnp.sum(inner(x))))
    x = np.array([0.1, 0.2])
    assert_close(outer(x), np.sin(x) + x * np.cos(x))


def test_vmap_of_grad_gives_per_example_gradients():
    xs = RNG.standard_normal((5, 3))
    per_example = pto.vmap(pto.grad(quadratic), in_axes=(None, 0))(PARAMS, xs)
    for i in range(5):
        expected = quadratic_grads(PARAMS, xs[i:i + 1])
        assert_close(per_example["w"][i], expected["w"])
        assert_close(per_example["b"][i], expected["b"])


def test_grad_of_vmap():
    g = pto.grad(lambda w: pnp.sum(pto.vmap(lambda x: pnp.tanh(x @ w))(X)))(PARAMS["w"])
    expected = X.T @ (1 - np.tanh(X @ PARAMS["w"]) ** 2)
    assert_close(g, expected)


def test_gradient_ir_is_plain_and_verifies():
    ir = pto.make_ir(pto.grad(quadratic))(PARAMS, X)
    verify(ir)
    names = {e.prim.name for e in ir.eqns}
    assert "dot_general" in names and not names & {"custom_lin", "checkpoint"}
    assert len(ir.outvars) == 2  # the gradients of w and b: the loss value is not an output


# symbolic zeros and dead code --------------------------------------------------------------
def _prims(ir):
    return [e.prim.name for e in ir.eqns]


def test_unused_inputs_get_zero_gradients_without_computing_anything_for_them():
    fn = lambda x, y: pnp.sum(x ** 2)  # noqa: E731
    gx, gy = pto.grad(fn, argnums=(0, 1))(np.ones(3), np.ones((2, 2)))
    assert_close(gy, np.zeros((2, 2)))
    ir = pto.make_ir(pto.grad(fn))(np.ones(3), np.ones((2, 2)))
    assert all(v.type.shape != (2, 2) for e in ir.eqns for v in e.outputs)


def test_jvp_with_a_zero_tangent_path_materializes_no_zeros():
    fn = lambda x, i: pnp.sin(x) * i.astype(pnp.float32) + pnp.cos(x)  # noqa: E731
    ir = pto.make_ir(lambda x, t: pto.jvp(fn, (x, np.arange(3)),
                                          (t, np.zeros(3, dtypes.float0))))(
        np.ones(3, np.float32), np.ones(3, np.float32))
    assert "broadcast_in_dim" not in _prims(ir)


def test_backward_does_not_keep_forward_values_it_does_not_need():
    ir = pto.jit(pto.grad(lambda x, y: pnp.sum(pnp.exp(y) * x))).lower(
        np.ones(3), np.ones(3)).optimized_ir
    assert _prims(ir) == ["exp"]  # d/dx = exp(y): the product and the sum are dead


# empty arrays --------------------------------------------------------------------------------
EMPTY = np.zeros((0, 3))
EMPTY_CASES = {
    "sum": (lambda x: pnp.sum(x * 2), EMPTY),
    "prod_over_an_empty_axis": (lambda x: pnp.sum(pnp.prod(x, axis=0)), EMPTY),
    "max_over_an_empty_axis": (lambda x: pnp.sum(lax.reduce_max(x, (1,))), np.zeros((2, 0))),
    "cumprod": (lambda x: pnp.sum(pnp.cumprod(x, axis=0)), EMPTY),
    "sort": (lambda x: pnp.sum(pnp.sort(x, axis=0)), EMPTY),
    "matmul_with_empty_contraction": (lambda x: pnp.sum(x @ np.ones((0, 2))), np.zeros((3, 0))),
    "concatenate_with_an_empty_piece": (lambda x: pnp.sum(pnp.concatenate([x, EMPTY]) ** 2),
                                        np.ones((2, 3))),
    "empty_slice": (lambda x: pnp.sum(x[1:1] * 2), np.ones((2, 3))),
    "gather_of_no_indices": (lambda x: pnp.sum(x[np.zeros(0, np.int32)]), np.ones((2, 3))),
}


@pytest.mark.parametrize("name", sorted(EMPTY_CASES))
def test_gradients_involving_empty_arrays(name):
    fn, x = EMPTY_CASES[name]
    g = pto.grad(fn)(x)
    expected = 2 * x if name == "concatenate_with_an_empty_piece" else np.zeros_like(x)
    assert_close(g, expected)
