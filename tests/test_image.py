"""``pto.image.resize`` and ``scale_and_translate`` against ``jax.image`` on the same inputs:
every method, up- and downsampling, with and without antialiasing, dtypes, jit, and the
gradient in the image and in a traced scale."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 9, 7, 3)).astype(np.float32)
METHODS = ["nearest", "linear", "cubic", "cubic-pytorch", "lanczos3", "lanczos5", "area"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", [(2, 4, 5, 3), (2, 17, 13, 3), (2, 9, 3, 3), (1, 9, 7, 2)])
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_matches_jax(jax, method, shape, antialias):
    x = X[:shape[0], :, :, :shape[3]]
    got = pto.image.resize(x, shape, method, antialias=antialias)
    want = jax.image.resize(x, shape, method, antialias=antialias)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_resize_keeps_integers_for_nearest_and_promotes_otherwise(jax):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    for method in ("nearest", "linear"):
        got, want = pto.image.resize(x, (5, 2), method), jax.image.resize(x, (5, 2), method)
        assert got.dtype == want.dtype
        assert_close(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "area", "cubic-pytorch"])
def test_scale_and_translate_matches_jax(jax, method):
    args = (X, (2, 12, 5, 3), (1, 2), np.array([1.3, 0.7], np.float32),
            np.array([0.5, -1.0], np.float32), method)
    assert_close(pto.image.scale_and_translate(*args), jax.image.scale_and_translate(*args),
                 rtol=1e-5, atol=1e-5)


def test_gradients_in_the_image_and_a_traced_scale(jax, jnp):
    def ours(x, s):
        return (pto.image.scale_and_translate(x, (2, 12, 5, 3), (1, 2), s,
                                              np.zeros(2, np.float32), "linear") ** 2).sum()

    def theirs(x, s):
        return (jax.image.scale_and_translate(x, (2, 12, 5, 3), (1, 2), s, jnp.zeros(2),
                                              "linear") ** 2).sum()
    s = np.array([1.3, 0.7], np.float32)
    for got, want in zip(pto.jit(pto.grad(ours, argnums=(0, 1)))(X, s),
                         jax.grad(theirs, argnums=(0, 1))(X, s)):
        assert_close(got, want, rtol=2e-5, atol=2e-5)


def test_errors():
    with pytest.raises(pto.errors.ShapeError, match="number of dimensions"):
        pto.image.resize(X, (4, 4), "linear")
    with pytest.raises(ValueError, match="Unknown resize method"):
        pto.image.resize(X, X.shape, "bogus")
    with pytest.raises(ValueError, match="nearest"):
        pto.image.scale_and_translate(X, X.shape, (1,), [1.0], [0.0], "nearest")
    assert pto.image.ResizeMethod.from_string("bicubic") is pto.image.ResizeMethod.CUBIC
