"""``lax.dot_general`` with ``preferred_element_type`` — int8 -> int32 (exact, against numpy's
int64 product), narrower integer results (wrapping as XLA's), f16/bf16 -> f32 and fp8 -> f32 —
against JAX, eagerly, under ``jit`` (host kernels and the interpreter) and through the tile
interpreter; and their gradients and vmap."""
import ml_dtypes
import numpy as np
import pytest

import ptojax as pto
from ptojax import lax
from helpers import assert_close

MATMUL = (((1,), (0,)), ((), ()))
F8 = [np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)]
HALF = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)]


def dot(pet):
    return lambda a, b: lax.dot_general(a, b, MATMUL, preferred_element_type=pet)


def int8_operands(m=64, k=96, n=48, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-128, 128, (m, k)).astype(np.int8),
            rng.integers(-128, 128, (k, n)).astype(np.int8))


def every_path(fn, *args):
    """fn's results eagerly, jitted (host kernels), jitted on the interpreter, tiled."""
    return {"eager": fn(*args), "jit": pto.jit(fn)(*args),
            "interpreter": pto.jit(fn, backend="interpreter")(*args),
            "tile": pto.tile(fn, target=pto.targets.host_cpu)(*args)}


def test_int8_matmul_accumulates_exactly_in_int32_on_every_path():
    a, b = int8_operands()
    exact = a.astype(np.int64) @ b.astype(np.int64)
    assert np.abs(exact).max() > 2 ** 15          # far outside int8 and int16
    for path, out in every_path(dot(np.int32), a, b).items():
        assert out.dtype == np.int32, path
        np.testing.assert_array_equal(np.asarray(out), exact, err_msg=path)


@pytest.mark.parametrize("pet", [None, np.int16, np.int32, np.uint32, np.float32,
                                 ml_dtypes.bfloat16])
def test_int8_preferred_types_match_jax(jax, pet):
    a, b = int8_operands(8, 300, 5, seed=1)
    want = jax.lax.dot_general(a, b, MATMUL, preferred_element_type=pet)
    for path, out in every_path(dot(pet), a, b).items():
        assert out.dtype == want.dtype, path
        assert_close(out, np.asarray(want))


@pytest.mark.parametrize("dtype", HALF + F8, ids=str)
def test_low_precision_floats_accumulate_in_f32(jax, dtype):
    rng = np.random.default_rng(2)
    a = rng.normal(size=(16, 200)).astype(dtype)
    b = rng.normal(size=(200, 24)).astype(dtype)
    want = np.asarray(jax.lax.dot_general(a, b, MATMUL, preferred_element_type=np.float32))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    for path, out in every_path(dot(np.float32), a, b).items():
        assert out.dtype == np.float32, path
        assert_close(out, want, rtol=1e-5, atol=1e-4)
        assert_close(out, exact.astype(np.float32), rtol=1e-5, atol=1e-4)


def test_narrower_integer_preference_is_an_error():
    a, b = int8_operands(2, 3, 2)
    with pytest.raises(pto.errors.DtypeError, match="narrower"):
        dot(np.int8)(a.astype(np.int32), b.astype(np.int32))


def test_gradients_of_bf16_matmul_with_f32_accumulation_match_jax(jax, jnp):
    rng = np.random.default_rng(3)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    a, b = rng.normal(size=(6, 40)).astype(bf16), rng.normal(size=(40, 5)).astype(bf16)

    def loss(lhs, rhs, lax_):
        out = lax_.dot_general(lhs, rhs, MATMUL, preferred_element_type=np.float32)
        return (out * out).sum()

    got = pto.grad(lambda x, y: loss(x, y, lax), argnums=(0, 1))(a, b)
    want = jax.grad(lambda x, y: loss(x, y, jax.lax), argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype == bf16
        assert_close(g, np.asarray(w), scale=2)


def test_vmap_of_int8_matmul_keeps_the_preferred_type(jax):
    rng = np.random.default_rng(4)
    a = rng.integers(-128, 128, (3, 5, 70)).astype(np.int8)
    b = rng.integers(-128, 128, (70, 4)).astype(np.int8)
    got = pto.vmap(dot(np.int32), in_axes=(0, None))(a, b)
    want = jax.vmap(lambda x: jax.lax.dot_general(x, b, MATMUL,
                                                  preferred_element_type=np.int32))(a)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
