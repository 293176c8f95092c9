"""Bad uses of autodiff raise a specific ``pto.errors`` exception whose message says what was
wrong and what to do, and points at the user's line (file:line of the call in this file)."""
import linecache

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import CustomRuleError, GradError


def _assert_points_at(error, snippet):
    """``error`` names this file and a line of it containing ``snippet``."""
    source = error.source
    assert source is not None and source.file == __file__
    assert snippet in linecache.getline(source.file, source.line)
    assert f"{source.file}:{source.line}" in str(error)


def test_grad_of_a_non_scalar_output():
    with pytest.raises(GradError) as info:
        pto.grad(lambda x: x * 2.0)(np.ones((3, 2)))
    assert "shape (3, 2)" in str(info.value)
    assert "pto.vjp" in str(info.value) and "pto.jacrev" in str(info.value)
    _assert_points_at(info.value, "pto.grad(lambda x: x * 2.0)")


def test_grad_of_a_pytree_output():
    with pytest.raises(GradError, match="2 leaves") as info:
        pto.grad(lambda x: (x, x))(1.0)
    _assert_points_at(info.value, "pto.grad(lambda x: (x, x))")


def test_grad_with_respect_to_an_integer_input():
    with pytest.raises(GradError, match="allow_int=True") as info:
        pto.grad(lambda x, i: x * i, argnums=1)(1.0, 3)
    assert "argument 1" in str(info.value) and "i32" in str(info.value)
    _assert_points_at(info.value, "pto.grad(lambda x, i: x * i, argnums=1)")


def test_grad_argnums_out_of_range():
    with pytest.raises(GradError, match="argnums 2") as info:
        pto.grad(lambda x: x, argnums=2)(1.0)
    _assert_points_at(info.value, "pto.grad(lambda x: x, argnums=2)")


def test_has_aux_without_a_pair():
    with pytest.raises(GradError, match="pair") as info:
        pto.grad(lambda x: x * 2.0, has_aux=True)(1.0)
    _assert_points_at(info.value, "lambda x: x * 2.0")


def test_jvp_tangent_of_the_wrong_dtype_or_shape():
    with pytest.raises(GradError, match="float32") as info:
        pto.jvp(pnp.sin, (np.ones(2, np.float32),), (np.ones(2, np.float16),))
    _assert_points_at(info.value, "pto.jvp(pnp.sin")
    with pytest.raises(GradError, match="float0") as info:
        pto.jvp(lambda i: i * 2, (np.arange(2),), (np.ones(2),))
    _assert_points_at(info.value, "pto.jvp(lambda i: i * 2")
    with pytest.raises(GradError, match=r"shape \(3,\)") as info:
        pto.jvp(pnp.sin, (np.ones(2),), (np.ones(3),))
    _assert_points_at(info.value, "pto.jvp(pnp.sin")


def test_vjp_cotangent_of_the_wrong_shape():
    _, vjp_fn = pto.vjp(pnp.sin, np.ones(2))
    with pytest.raises(GradError, match=r"shape \(3,\)") as info:
        vjp_fn(np.ones(3))
    _assert_points_at(info.value, "vjp_fn(np.ones(3))")


def _custom_vjp_with_bwd(bwd):
    @pto.custom_vjp
    def scale(x, y):
        return x * y
    scale.defvjp(lambda x, y: (x * y, (x, y)), bwd)
    return scale


def test_custom_vjp_bwd_returning_too_few_cotangents():
    scale = _custom_vjp_with_bwd(lambda res, g: (g * res[1],))
    with pytest.raises(CustomRuleError, match="one cotangent per differentiable argument") \
            as info:
        pto.grad(lambda x: scale(x, 2.0))(1.0)
    assert "length 1" in str(info.value) and "test_ad_errors.py" in str(info.value)
    _assert_points_at(info.value, "scale(x, 2.0)")


def test_custom_vjp_bwd_returning_a_wrong_shape_names_the_input():
    scale = _custom_vjp_with_bwd(lambda res, g: (g * res[1], np.ones(3)))
    with pytest.raises(CustomRuleError) as info:
        pto.grad(lambda x: scale(x, 2.0))(1.0)
    assert "argument 1 (`y`)" in str(info.value) and "shape (3,)" in str(info.value)
    _assert_points_at(info.value, "scale(x, 2.0)")


def test_custom_vjp_bwd_returning_a_wrong_structure_names_the_input():
    @pto.custom_vjp
    def total(params):
        return params["a"] + params["b"]
    total.defvjp(lambda p: (total(p), None), lambda _, g: ((g, g),))
    with pytest.raises(CustomRuleError, match=r"argument 0 \(`params`\)") as info:
        pto.grad(lambda p: total(p))({"a": 1.0, "b": 2.0})
    _assert_points_at(info.value, "total(p)")


def test_custom_vjp_fwd_not_returning_a_pair():
    scale = _custom_vjp_with_bwd(lambda res, g: (g, g))
    scale.defvjp(lambda x, y: x * y, lambda res, g: (g, g))
    with pytest.raises(CustomRuleError, match="pair") as info:
        pto.grad(lambda x: scale(x, 2.0))(1.0)
    _assert_points_at(info.value, "scale(x, 2.0)")


def test_custom_jvp_rule_returning_a_wrong_shape():
    @pto.custom_jvp
    def double(x):
        return x * 2.0
    double.defjvp(lambda p, t: (double(p[0]), np.ones(5, np.float32)))
    with pytest.raises(CustomRuleError, match="tangent output") as info:
        pto.jvp(double, (np.ones(2, np.float32),), (np.ones(2, np.float32),))
    _assert_points_at(info.value, "pto.jvp(double")



def test_differentiating_a_custom_rule_with_respect_to_a_closed_over_value():
    def loss(x, w):
        @pto.custom_jvp
        def times_w(y):
            return y * w
        times_w.defjvp(lambda p, t: (times_w(p[0]), t[0] * w))
        return times_w(x)
    with pytest.raises(CustomRuleError, match="closes over") as info:
        pto.grad(loss, argnums=1)(1.0, 2.0)
    _assert_points_at(info.value, "return times_w(x)")
