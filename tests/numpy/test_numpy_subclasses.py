"""Subclasses of numpy.ndarray, as JAX treats them (compared live). A masked array: every
operation, transform argument and device_put refuses one with a ValueError at the user's line
(ptojax dropped the mask silently: ``pnp.sum`` of a masked array summed the masked values
too); ``pnp.array`` takes its data, alone or in a list, as ``jnp.array`` does. Any other
subclass (np.matrix, np.memmap) is taken as its base array, by jit and bind too (they were
refused there)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

MASKED = np.ma.masked_array([1.0, 2.0, 4.0], mask=[0, 1, 0])

REFUSED = {
    "asarray": lambda j, m: m.asarray(MASKED),
    "sum": lambda j, m: m.sum(MASKED),
    "sin": lambda j, m: m.sin(MASKED),
    "Array + masked": lambda j, m: m.ones(3) + MASKED,
    "masked + Array": lambda j, m: MASKED + m.ones(3),
    "where": lambda j, m: m.where(True, MASKED, 0.0),
    "stack": lambda j, m: m.stack([MASKED, MASKED]),
    "lax.add": lambda j, m: j.lax.add(MASKED, MASKED),
    "jit argument": lambda j, m: j.jit(lambda x: x * 2)(MASKED),
    "grad argument": lambda j, m: j.grad(lambda x: (x * 2).sum())(MASKED),
    "vmap argument": lambda j, m: j.vmap(lambda x: x * 2)(MASKED),
    "jit pytree argument": lambda j, m: j.jit(lambda d: d["a"] + 1)({"a": MASKED}),
    "device_put": lambda j, m: j.device_put(MASKED),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_masked_array_is_refused_as_in_jax(jax, name):
    use = REFUSED[name]
    with pytest.raises(ValueError):
        use(jax, jax.numpy)
    with pytest.raises(ValueError, match=r"masked arrays[\s\S]*test_numpy_subclasses.py"):
        use(pto, pnp)


def test_array_takes_the_data_as_jax(jax):
    for make in (lambda m: m.array(MASKED), lambda m: m.array([MASKED, MASKED])):
        with jax.enable_x64(False):
            want = make(jax.numpy)
        got = make(pnp)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_array_equal(got, want)


# np.matrix is "not recommended" by numpy (PendingDeprecationWarning), yet users still pass it
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
MATRIX = np.asmatrix(np.arange(4.0).reshape(2, 2))
MATRIX_USES = {
    "jit argument": lambda j, m, x: j.jit(lambda v: v * v)(x),
    "lax.mul": lambda j, m, x: j.lax.mul(x, x),
    "multiply": lambda j, m, x: m.multiply(x, x),
    "Array * matrix": lambda j, m, x: m.ones((2, 2)) * x,
    "grad argument": lambda j, m, x: j.grad(lambda v: (v * v).sum())(x),
    "vmap argument": lambda j, m, x: j.vmap(lambda v: v.sum())(x),
    "sum axis 0": lambda j, m, x: m.sum(x, axis=0),
}


@pytest.mark.parametrize("name", sorted(MATRIX_USES))
def test_matrix_is_its_base_array_as_in_jax(jax, name, tmp_path):
    use = MATRIX_USES[name]
    with jax.enable_x64(False):
        want = use(jax, jax.numpy, MATRIX)
    mapped = np.memmap(tmp_path / "m.bin", np.float64, "w+", shape=(2, 2))
    mapped[:] = MATRIX
    for value in (MATRIX, mapped):
        got = use(pto, pnp, value)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_allclose(got, want)
