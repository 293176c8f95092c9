"""``pto.flatten_util.ravel_pytree`` against JAX's ``jax.flatten_util.ravel_pytree``: the flat
array (values, dtype by promotion), ``unravel``'s shapes and dtypes, its errors, and use under
jit and grad."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.flatten_util  # noqa: F401  (as in JAX, not imported by `import ptojax`)
import ptojax.numpy as pnp
from helpers import assert_close

CASES = [
    lambda np_: {"w": np_.ones((2, 3), np.float32), "b": np_.arange(3, dtype=np.float32)},
    lambda np_: [np_.ones(2, np.int32), np_.ones((1, 2), np.float32), (np.float32(5),)],
    lambda np_: (np_.arange(3, dtype=np.int8), np_.arange(2, dtype=np.int32)),
    lambda np_: {"a": np_.ones(2, np.float16), "b": None, "c": [np_.zeros((0,), np.float16)]},
    lambda np_: [],
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_ravel_and_unravel_match_jax(jax, jnp, case):
    from jax.flatten_util import ravel_pytree as jax_ravel
    with jax.enable_x64(False):
        want_flat, want_unravel = jax_ravel(CASES[case](jnp))
        want_back = want_unravel(want_flat * 2)
    got_flat, got_unravel = pto.flatten_util.ravel_pytree(CASES[case](pnp))
    assert_close(got_flat, np.asarray(want_flat))
    assert got_flat.dtype == want_flat.dtype and got_flat.shape == want_flat.shape
    got_back = got_unravel(got_flat * 2)
    assert pto.tree.structure(got_back) == pto.tree.structure(
        jax.tree.map(np.asarray, want_back))
    for g, w in zip(pto.tree.leaves(got_back), jax.tree.leaves(want_back)):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert_close(g, np.asarray(w))


def test_unravel_checks_size_and_dtype():
    _, unravel = pto.flatten_util.ravel_pytree([pnp.ones(2, pnp.int32), pnp.ones(2)])
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(pnp.ones(4, pnp.int32))
    with pytest.raises(ValueError, match="4 elements"):
        unravel(pnp.ones(5))
    _, same = pto.flatten_util.ravel_pytree([pnp.ones(2), pnp.ones(1)])
    assert same(pnp.ones(3, pnp.int32))[0].dtype == np.int32   # one dtype: kept as given


def test_under_jit_and_grad():
    params = {"w": pnp.ones((2, 2)), "b": pnp.arange(2.0)}
    flat, unravel = pto.flatten_util.ravel_pytree(params)
    loss = lambda f: pnp.sum(unravel(f)["w"] ** 2) + pnp.sum(unravel(f)["b"])
    assert_close(pto.jit(pto.grad(loss))(flat), np.array([1, 1, 2, 2, 2, 2], np.float32))
