"""Python's ``round(x)`` and ``round(x, ndigits)`` of an Array and of a traced value, as
JAX's (compared live): without ``ndigits`` an integer array of the default int dtype (not
weak), as ``round(2.5)`` is an int; with it the array's own dtype, rounded to ``ndigits``
decimals (values within an ulp: XLA divides by the power of ten as a multiplication)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

VALUES = {"float32": [1.567, -2.5, 0.5, 3.49], "int32": [7, -3, 12], "float16": [1.25, 2.75]}


def _described(x):
    return str(x.dtype), bool(x.weak_type), tuple(x.shape)


@pytest.mark.parametrize("dtype", sorted(VALUES))
def test_round_builtin_matches_jax(jax, dtype):
    values = np.array(VALUES[dtype], dtype)
    for ndigits in (None, 0, 2):
        with jax.enable_x64(False):
            want = [round(jax.numpy.asarray(values), ndigits),
                    jax.jit(lambda x: round(x, ndigits))(values[0])]
        got = [round(pnp.asarray(values), ndigits),
               pto.jit(lambda x: round(x, ndigits))(values[0])]
        for g, w in zip(got, want):
            assert _described(g) == _described(w), (dtype, ndigits)
            np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(w, np.float64),
                                       rtol=1e-3 if dtype == "float16" else 1e-6)


def test_round_of_a_weak_python_float_array_is_weak_only_with_ndigits(jax):
    with jax.enable_x64(False):
        want = [_described(round(jax.numpy.asarray(2.5), n)) for n in (None, 1)]
    assert [_described(round(pnp.asarray(2.5), n)) for n in (None, 1)] == want
