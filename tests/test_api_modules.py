"""JAX API names real programs touch: ``pto.errors``' JAX classes, ``pto.dtypes``'
canonicalize_dtype / itemsize_bits / scalar_type_of, ``pto.random.key_dtype``,
``pto.debug.log`` and ``pto.stages``, each compared with JAX on the same inputs."""
import logging

import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp


# errors -------------------------------------------------------------------------------------
JAX_ERRORS = ["JAXTypeError", "JAXIndexError", "JaxRuntimeError", "JaxprTypeError",
              "KeyReuseError", "ConcretizationTypeError", "NonConcreteBooleanIndexError",
              "TracerBoolConversionError", "TracerIntegerConversionError",
              "TracerArrayConversionError", "UnexpectedTracerError"]


@pytest.mark.parametrize("name", JAX_ERRORS)
def test_errors_have_jax_bases(name, jax):
    """Each JAX error class derives from the builtin classes and the JAX error classes
    that JAX's does."""
    ours, theirs = getattr(pto.errors, name), getattr(jax.errors, name)
    for base in theirs.__mro__:
        if base.__module__ == "builtins":
            assert issubclass(ours, base), (name, base)
        elif base.__module__ == "jax.errors":
            assert issubclass(ours, getattr(pto.errors, base.__name__)), (name, base)


def test_errors_are_raised_as_jax_raises():
    with pytest.raises(pto.errors.JAXTypeError):   # a traced bool
        pto.jit(lambda x: 1 if x > 0 else 0)(1.0)
    with pytest.raises(pto.errors.JAXIndexError):  # a traced boolean mask
        pto.jit(lambda x: x[x > 0])(pnp.ones(3))
    leaked = []
    pto.jit(lambda x: leaked.append(x) or x)(1.0)
    with pto.check_tracer_leaks(False), pytest.raises(pto.errors.UnexpectedTracerError):
        leaked[0] + 1


def test_a_failing_callback_is_a_jax_runtime_error(jax, jnp):
    def bad(x):
        raise ValueError("boom")
    for api, m in ((pto, pnp), (jax, jnp)):
        programs = [lambda x: api.debug.callback(bad, x) or x,
                    lambda x: api.pure_callback(bad, api.ShapeDtypeStruct((), np.float32), x)]
        for program in programs:
            for run in (api.jit(program), program):
                # JAX's eager debug.callback raises the callback's own ValueError (ptojax's
                # JaxRuntimeError is one too)
                expected = ValueError if run is programs[0] else api.errors.JaxRuntimeError
                with pytest.raises(expected, match="boom"):
                    api.block_until_ready(run(m.float32(1.0)))
    with pytest.raises(ValueError, match="boom"):   # ptojax's is also the callback's class
        pto.jit(lambda x: pto.debug.callback(bad, x) or x)(1.0)


# dtypes -------------------------------------------------------------------------------------
DTYPES = [np.float64, np.int64, np.uint64, np.complex128, "float16", ml_dtypes.bfloat16, float,
          int, bool, complex, np.bool_, ml_dtypes.int4, ml_dtypes.float4_e2m1fn, np.uint8]


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_canonicalize_dtype_and_itemsize_bits(dtype, x64, jax):
    """The same in both modes (the fixture's JAX is in x64 mode: each mode set in both)."""
    with pto.enable_x64(x64), jax.enable_x64(x64):
        assert pto.dtypes.canonicalize_dtype(dtype) == jax.dtypes.canonicalize_dtype(dtype)
        assert pto.dtypes.itemsize_bits(dtype) == jax.dtypes.itemsize_bits(dtype)


def test_dtype_helpers_edges(jax):
    with jax.enable_x64(False):
        assert pto.dtypes.canonicalize_dtype(None) == jax.dtypes.canonicalize_dtype(None)
    key = pto.random.key(0)
    assert pto.dtypes.canonicalize_dtype(key.dtype, allow_extended_dtype=True) is key.dtype
    for bad in (lambda: pto.dtypes.canonicalize_dtype(key.dtype),
                lambda: pto.dtypes.itemsize_bits(None),
                lambda: pto.dtypes.itemsize_bits(key.dtype)):
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(TypeError):
        pto.dtypes.canonicalize_dtype("no_such_dtype")


@pytest.mark.parametrize("make", [lambda m: 1, lambda m: 1.0, lambda m: True, lambda m: 1j,
                                  lambda m: np.float32(1), lambda m: np.ones(2, np.uint8),
                                  lambda m: m.ones(2, ml_dtypes.bfloat16),
                                  lambda m: m.ones(2, np.int8), lambda m: m.array(1j),
                                  lambda m: m.array([True])])
def test_scalar_type_of(make, jax, jnp):
    assert pto.dtypes.scalar_type_of(make(pnp)) is jax.dtypes.scalar_type_of(make(jnp))


def test_key_dtype(jax):
    assert pto.random.key_dtype() == pto.random.key(0).dtype
    assert str(pto.random.key_dtype("threefry2x32")) == str(jax.random.key_dtype())
    with pytest.raises(ValueError, match="unrecognized"):
        pto.random.key_dtype("no_such_impl")


# debug.log ----------------------------------------------------------------------------------
class _Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def test_debug_log_goes_to_logging_with_the_callers_line():
    logger, keep = logging.getLogger("ptojax.debug"), _Keep()
    logger.addHandler(keep)
    old = logger.level
    logger.setLevel(logging.INFO)
    try:
        def f(x):
            pto.debug.log("x = {x}", x=x)   # the line the record names
            return x * 2
        line = f.__code__.co_firstlineno + 1
        pto.jit(f)(pnp.arange(2.0))
        pto.vmap(f)(pnp.arange(2.0))
        pto.debug.log("eager {}", 3)
        pto.debug.log(ordered=True)("two-call {}", 4)
    finally:
        logger.removeHandler(keep)
        logger.setLevel(old)
    assert [r.getMessage() for r in keep.records] == [
        "x = [0. 1.]", "x = 0.0", "x = 1.0", "eager 3", "two-call 4"]
    assert {r.levelno for r in keep.records} == {logging.INFO}
    assert keep.records[0].lineno == line and keep.records[0].pathname == __file__
    with pytest.raises(ValueError, match="unused"):
        pto.debug.log("no fields {}", 1, 2)


# stages -------------------------------------------------------------------------------------
def _stages(jit, m, x):
    f = jit(lambda x, y=1, z=None: (x * y, {"z": z + x}), static_argnames="y",
            donate_argnums=2)
    traced = f.trace(x, 2, m.ones(3, np.int32))
    lowered = traced.lower()
    return f, traced, lowered, lowered.compile()


def _info(s):
    return [(a.shape, str(a.dtype)) for a in s]


def test_stages_classes_and_attributes(jax, jnp):
    ours = _stages(pto.jit, pnp, pnp.ones(3, np.float32))
    theirs = _stages(jax.jit, jnp, jnp.ones(3, np.float32))
    for kind, o in zip(["Wrapped", "Traced", "Lowered", "Compiled"], ours):
        assert isinstance(o, getattr(pto.stages, kind)), kind
    assert not isinstance(lambda x: x, pto.stages.Wrapped)
    for o, t in zip(ours[1:], theirs[1:]):
        o_leaves, o_tree = pto.tree_util.tree_flatten(o.out_info)
        t_leaves, t_tree = jax.tree_util.tree_flatten(t.out_info)
        assert _info(o_leaves) == _info(t_leaves) and str(o_tree) == str(t_tree)
        o_args = pto.tree_util.tree_leaves(o.args_info)
        t_args = jax.tree_util.tree_leaves(t.args_info)
        assert all(isinstance(a, pto.stages.ArgInfo) for a in o_args)
        assert _info(o_args) == _info(t_args)
        assert [a.donated for a in o_args] == [a.donated for a in t_args]
        assert o.donate_argnums == t.donate_argnums
        assert str(o.in_tree) == str(t.in_tree) and str(o.out_tree) == str(t.out_tree)
    traced = ours[1]
    assert traced.fun_name == theirs[1].fun_name == "<lambda>"
    assert [e.primitive.name for e in traced.jaxpr.eqns] == \
        [e.primitive.name for e in theirs[1].jaxpr.eqns]
    compiled = ours[3]
    out = compiled.call(pnp.arange(3.0), pnp.ones(3, np.int32))
    np.testing.assert_array_equal(out[0], [0.0, 2.0, 4.0])
    with pytest.raises(TypeError):
        compiled(pnp.ones(4), pnp.ones(3, np.int32))
    assert pto.stages.CompilerOptions == jax.stages.CompilerOptions
