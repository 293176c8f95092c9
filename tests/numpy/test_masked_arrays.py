"""numpy masked arrays, as JAX treats them (compared live): every operation, transform
argument and device_put refuses one with a ValueError at the user's line (ptojax dropped the
mask silently: ``pnp.sum`` of a masked array summed the masked values too); ``pnp.array``
takes a masked array's data, alone or in a list, as ``jnp.array`` does."""
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
    with pytest.raises(ValueError, match=r"masked arrays[\s\S]*test_masked_arrays.py"):
        use(pto, pnp)


def test_array_takes_the_data_as_jax(jax):
    for make in (lambda m: m.array(MASKED), lambda m: m.array([MASKED, MASKED])):
        with jax.enable_x64(False):
            want = make(jax.numpy)
        got = make(pnp)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_array_equal(got, want)
