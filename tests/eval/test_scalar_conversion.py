"""Python's scalar conversions (int, float, complex, bool, operator.index) of an Array and of a
traced value accept and refuse what JAX's do, compared live: JAX decides from the shape and
dtype first (int() of a shape-(1,) array is a TypeError even when its value is known, and
operator.index of a bool or float array too), and only then asks for the value (a
concretization error under jit/vmap). JAX's deep_qlearning_cartpole example calls int() on a
shape-(1,) action: both refuse it."""
import operator

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

SHAPES = [(), (1,), (2,), (1, 1)]
DTYPES = ["float32", "int32", "bool", "complex64"]
CONVERSIONS = {"int": int, "float": float, "complex": complex, "bool": bool,
               "index": operator.index, "range": lambda x: len(range(x))}


def _outcome(call, concretization_error):
    """The value, or which kind of error: a refusal from shape/dtype, or a concretization."""
    try:
        return ("value", call())
    except concretization_error:
        return ("concretization", None)
    except TypeError:
        return ("TypeError", None)
    except ValueError:  # bool() of an empty or many-element array
        return ("ValueError", None)


def _jax_concretization(jax):
    errors = jax.errors
    return (errors.ConcretizationTypeError, errors.TracerBoolConversionError,
            errors.TracerIntegerConversionError)


@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_eager_array_conversion_matches_jax(jax, conversion):
    convert = CONVERSIONS[conversion]
    for shape in SHAPES:
        for dtype in DTYPES:
            a = np.full(shape, 1, dtype)
            theirs = _outcome(lambda: convert(jax.numpy.asarray(a)), _jax_concretization(jax))
            ours = _outcome(lambda: convert(pnp.asarray(a)), pto.errors.ConcretizationError)
            assert ours == theirs, (conversion, shape, dtype)


@pytest.mark.parametrize("transform", ["jit", "vmap", "grad"])
@pytest.mark.parametrize("conversion", sorted(CONVERSIONS))
def test_traced_conversion_matches_jax(jax, transform, conversion):
    """Under jit and vmap the value is abstract; under grad (float32 only) it is known but
    differentiated. A conversion whose shape or dtype can never succeed is refused as JAX
    refuses it (a TypeError, not a concretization error)."""
    convert = CONVERSIONS[conversion]

    def use(x):
        convert(x)
        return x.sum().real.astype("float32")

    def run(lib, a):
        if transform == "vmap":
            return lambda: lib.vmap(use)(a[None])
        return lambda: getattr(lib, transform)(use)(a)

    for shape in SHAPES:
        for dtype in (["float32"] if transform == "grad" else DTYPES):
            a = np.full(shape, 1, dtype)
            theirs = _outcome(run(jax, jax.numpy.asarray(a)), _jax_concretization(jax))
            ours = _outcome(run(pto, pnp.asarray(a)), pto.errors.ConcretizationError)
            assert ours[0] == theirs[0], (conversion, transform, shape, dtype)


def test_refusal_names_the_users_line_and_the_shape():
    with pytest.raises(TypeError, match=r"shape \(1,\)[\s\S]*test_scalar_conversion.py"):
        int(pnp.zeros(1, "int32"))
    with pytest.raises(TypeError, match=r"bool\[\][\s\S]*test_scalar_conversion.py"):
        range(pnp.asarray(True))
    with pytest.raises(TypeError, match=r"shape \(2,\)[\s\S]*test_scalar_conversion.py"):
        pto.jit(lambda x: float(x))(np.ones(2, np.float32))
