"""``pto.scipy.cluster.vq.vq`` against ``jax.scipy.cluster.vq``: 2-d and 1-d observations,
integer inputs (promoted to float); jit and vmap; JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy.cluster import vq
from helpers import assert_close

RNG = np.random.RandomState(0)
OBS = RNG.randn(10, 3).astype(np.float32)
CODES = RNG.randn(4, 3).astype(np.float32)


@pytest.mark.parametrize("obs,code_book", [
    (OBS, CODES), (OBS[:, 0], CODES[:, 0]), (np.arange(5), np.array([0, 3])),
    (RNG.randn(1, 5).astype(np.float32), RNG.randn(3, 5).astype(np.float32))])
def test_vq_matches_jax(jax, obs, code_book):
    import jax.scipy.cluster.vq as jvq
    with jax.enable_x64(False):
        want = jvq.vq(obs, code_book)
    got = vq.vq(obs, code_book)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert_close(g, np.asarray(w), rtol=1e-5, atol=1e-6)


def test_jit_vmap():
    stacked = np.stack([OBS, OBS[::-1]])
    codes, dist = pto.vmap(lambda o: vq.vq(o, CODES))(stacked)
    assert_close(codes[1], vq.vq(OBS[::-1], CODES)[0])
    assert_close(dist[0], vq.vq(OBS, CODES)[1])
    assert_close(pto.jit(vq.vq)(OBS, CODES), vq.vq(OBS, CODES))


def test_errors_as_jax():
    with pytest.raises(ValueError, match="same rank"):
        vq.vq(pnp.ones((3, 2)), pnp.ones(2))
    with pytest.raises(ValueError, match="ndim different than 1 or 2"):
        vq.vq(pnp.ones((2, 3, 2)), pnp.ones((2, 3, 2)))
