"""Integer division and remainder at their edges -- a zero divisor, -1, the most negative
value -- as JAX computes them (XLA's semantics: ``x / 0 = -1``, ``rem(x, 0) = x``, ``INT_MIN /
-1 = INT_MIN``; ``floor_divide``/``remainder``/``fmod`` built on those), eagerly, under jit, in
a compiled host kernel and in a loop compiled whole."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.lower.host.backend import CpuBackend

DTYPES = (np.int8, np.int16, np.int32, np.uint8, np.uint32)
FUNCTIONS = ("lax.div", "lax.rem", "floor_divide", "remainder", "fmod")


def _function(lib, np_, name):
    return {"lax.div": lib.lax.div, "lax.rem": lib.lax.rem, "floor_divide": np_.floor_divide,
            "remainder": np_.remainder, "fmod": np_.fmod}[name]


def _edges(dtype):
    info = np.iinfo(dtype)
    if info.min < 0:
        return [info.min, info.min + 1, -7, -1, 0, 1, 5, info.max - 1, info.max]
    return [0, 1, 5, info.max // 2 + 1, info.max - 1, info.max]


def _operands(dtype):
    """Every edge divided by every edge: two arrays of the same length."""
    edges = np.array(_edges(dtype), dtype)
    divisors = np.array(sorted(set(_edges(dtype) + [2, 3] +
                                   ([-2, -3] if np.iinfo(dtype).min < 0 else []))), dtype)
    return np.repeat(edges, divisors.size), np.tile(divisors, edges.size)


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_division_edges_match_jax(jax, jnp, dtype, name):
    x, y = _operands(dtype)
    expected = np.asarray(_function(jax, jnp, name)(x, y))
    ours = _function(pto, pnp, name)
    for got in (ours(x, y), pto.jit(ours)(x, y)):
        got = np.asarray(got)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_compiled_kernels_and_loops_divide_as_jax(jax, jnp):
    """The host kernels' ``op_div`` and the whole-compiled loops' ``rem``."""
    x, y = _operands(np.int32)
    x, y = np.tile(x, 400).reshape(400, -1), np.tile(y, 400).reshape(400, -1)

    def divide(lib, a, b):
        return lib.lax.div(a * 1, b), lib.lax.rem(a, b)

    def looped(lib, a, b):
        return lib.lax.scan(lambda c, ab: (c, (lib.lax.div(*ab), lib.lax.rem(*ab))), 0,
                            (a[:40], b[:40]))[1]
    backend = CpuBackend(tiered=False, min_elements=0)
    for program in (divide, looped):
        got = pto.jit(lambda a, b: program(pto, a, b), backend=backend)(x, y)
        expected = jax.jit(lambda a, b: program(jax, a, b))(x, y)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
