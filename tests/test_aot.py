"""Ahead-of-time lowering and compilation as JAX's AOT page shows it
(``jit(f).lower(*args).compile()``): ShapeDtypeStruct arguments, static arguments at
lowering only, JAX's TypeError for a call of other types or structure, compiled functions
refusing transformations, ``cost_analysis``; and make_jaxpr's JAX field names."""
import re

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp


def f(x, y):
    return 2 * x + y


def _type_error(fn, *args) -> str:
    with pytest.raises(TypeError) as info:
        fn(*args)
    return str(info.value)


def test_compile_and_call_like_jax(jax, jnp):
    i32 = pto.ShapeDtypeStruct((), np.dtype("int32"))
    assert int(pto.jit(f).lower(3, 4).compile()(3, 4)) == 10
    assert int(pto.jit(f).lower(i32, i32).compile()(3, 4)) == 10
    assert int(pto.jit(f, static_argnums=0).lower(7, 8).compile()(5)) == 19
    assert int(pto.jit(f, static_argnums=0).lower(10, i32).compile()(5)) == 25
    compiled = pto.jit(lambda d, s: d["a"] * s).lower({"a": pnp.ones(2)}, 2.0).compile()
    np.testing.assert_array_equal(compiled({"a": pnp.ones(2)}, 3.0), np.full(2, 3.0, "f4"))


@pytest.mark.parametrize("call", [(np.arange(3, dtype="i4"),) * 2, (np.float32(72),) * 2])
def test_mismatched_arguments_raise_jax_error(jax, jnp, call):
    with jax.enable_x64(False):
        want = _type_error(jax.jit(f).lower(jax.ShapeDtypeStruct((), jnp.int32),
                                            jax.ShapeDtypeStruct((), jnp.int32)).compile(),
                           *(jnp.asarray(a) for a in call))
    i32 = pto.ShapeDtypeStruct((), np.dtype("int32"))
    got = _type_error(pto.jit(f).lower(i32, i32).compile(), *call)
    assert got == want


def test_structure_mismatch_and_transformations_raise():
    compiled = pto.jit(lambda x: x @ pnp.ones(2)).lower(pnp.ones((3, 2))).compile()
    assert "pytree" in _type_error(compiled, (pnp.ones((3, 2)),))
    message = _type_error(pto.vmap(compiled), pnp.ones((4, 3, 2)))
    assert re.search("Cannot apply JAX transformations to a function lowered and compiled",
                     message)
    assert "Cannot apply" in _type_error(pto.grad(lambda x: compiled(x).sum()),
                                         pnp.ones((3, 2)))


def test_cost_analysis_counts_flops():
    lowered = pto.jit(lambda a, b: a @ b + 1.0).lower(pnp.ones((4, 3)), pnp.ones((3, 5)))
    assert lowered.cost_analysis() == {"flops": 2 * 4 * 3 * 5 + 4 * 5}
    assert lowered.compile().cost_analysis()["flops"] == 2 * 4 * 3 * 5 + 4 * 5


def test_make_jaxpr_has_jax_field_names(jax, jnp):
    def g(x, y):
        return pnp.sin(x) * y

    closed = pto.make_jaxpr(g)(pnp.ones(3), 2.0)
    with jax.enable_x64(False):
        want = jax.make_jaxpr(lambda x, y: jnp.sin(x) * y)(jnp.ones(3), 2.0)
    assert closed.jaxpr is closed.ir and len(closed.jaxpr.invars) == len(want.jaxpr.invars)
    assert repr(closed.in_avals) == repr(want.in_avals)
    assert repr(closed.out_avals) == repr(want.out_avals)
    assert closed.in_avals[0].shape == (3,) and closed.out_avals[0].dtype == np.float32
    assert [e.primitive.name for e in closed.eqns][-2:] == ["sin", "mul"]
    assert closed.eqns[-1].invars[0] is closed.eqns[-2].outvars[0]
    _, shape = pto.make_jaxpr(lambda x: {"y": x[:2]}, return_shape=True)(pnp.ones(3))
    with jax.enable_x64(False):
        _, want_shape = jax.make_jaxpr(lambda x: {"y": x[:2]}, return_shape=True)(jnp.ones(3))
    assert repr(shape) == repr(want_shape)


def test_partition_spec_repr_is_jax(jax):
    from jax.sharding import PartitionSpec as JP
    for parts in [(), (None,), ("x",), ("x", None), (("x", "y"),), ("x", ("y", "z"))]:
        assert repr(pto.P(*parts)) == repr(JP(*parts))
