"""``pto.image.resize`` and ``scale_and_translate`` against ``jax.image`` on the same inputs:
every method, up- and downsampling, with and without antialiasing, dtypes, jit, and the
gradient in the image and in a traced scale."""
import numpy as np
import pytest

import ptojax as pto
from helpers import assert_close
from jax_golden import expected

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 9, 7, 3)).astype(np.float32)
METHODS = ["nearest", "linear", "cubic", "cubic-pytorch", "lanczos3", "lanczos5", "area"]


SHAPES = [(2, 4, 5, 3), (2, 17, 13, 3), (2, 9, 3, 3), (1, 9, 7, 2)]
SCALE_AND_TRANSLATE = ((2, 12, 5, 3), (1, 2), np.array([1.3, 0.7], np.float32),
                       np.array([0.5, -1.0], np.float32))


def _resize_input(shape):
    return X[:shape[0], :, :, :shape[3]]


def _jax_gradients(jax, x, s):
    def theirs(x, s):
        return (jax.image.scale_and_translate(x, (2, 12, 5, 3), (1, 2), s,
                                              jax.numpy.zeros(2), "linear") ** 2).sum()
    return list(jax.jit(jax.grad(theirs, argnums=(0, 1)))(x, s))


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: every resize and
    scale_and_translate of the tests below, and the gradients (JAX compiled each call
    eagerly: ~40 s in all on a busy machine)."""
    for method in METHODS:
        for shape in SHAPES:
            for antialias in (True, False):
                yield (f"image/resize/{method}-{shape}-{antialias}", [_resize_input(shape)],
                       lambda x, method=method, shape=shape, antialias=antialias: [
                           jax.image.resize(x, shape, method, antialias=antialias)])
    for method in SCALE_AND_TRANSLATE_METHODS:
        yield (f"image/scale-and-translate/{method}", [X, *SCALE_AND_TRANSLATE[2:]],
               lambda x, s, t, method=method: [jax.image.scale_and_translate(
                   x, *SCALE_AND_TRANSLATE[:2], s, t, method)])
    yield "image/gradients", [X, GRADIENT_SCALE], lambda x, s: _jax_gradients(jax, x, s)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("antialias", [True, False])
def test_resize_matches_jax(method, shape, antialias):
    """Against JAX's values (and dtype) stored by jax_golden.py."""
    x = _resize_input(shape)
    got = pto.image.resize(x, shape, method, antialias=antialias)
    (want,) = expected(f"image/resize/{method}-{shape}-{antialias}", [x])
    assert got.dtype == want.dtype and got.shape == want.shape
    assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_resize_keeps_integers_for_nearest_and_promotes_otherwise(jax):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    for method in ("nearest", "linear"):
        got, want = pto.image.resize(x, (5, 2), method), jax.image.resize(x, (5, 2), method)
        assert got.dtype == want.dtype
        assert_close(got, want, rtol=1e-6, atol=1e-6)


SCALE_AND_TRANSLATE_METHODS = ["linear", "cubic", "lanczos3", "area", "cubic-pytorch"]
GRADIENT_SCALE = np.array([1.3, 0.7], np.float32)


@pytest.mark.parametrize("method", SCALE_AND_TRANSLATE_METHODS)
def test_scale_and_translate_matches_jax(method):
    """Against JAX's values stored by jax_golden.py."""
    args = (X, *SCALE_AND_TRANSLATE, method)
    (want,) = expected(f"image/scale-and-translate/{method}", [X, *SCALE_AND_TRANSLATE[2:]])
    assert_close(pto.image.scale_and_translate(*args), want, rtol=1e-5, atol=1e-5)


def test_gradients_in_the_image_and_a_traced_scale():
    """Against JAX's gradients stored by jax_golden.py."""
    def ours(x, s):
        return (pto.image.scale_and_translate(x, (2, 12, 5, 3), (1, 2), s,
                                              np.zeros(2, np.float32), "linear") ** 2).sum()

    s = GRADIENT_SCALE
    for got, want in zip(pto.jit(pto.grad(ours, argnums=(0, 1)))(X, s),
                         expected("image/gradients", [X, s]), strict=True):
        assert_close(got, want, rtol=2e-5, atol=2e-5)


def test_errors():
    with pytest.raises(pto.errors.ShapeError, match="number of dimensions"):
        pto.image.resize(X, (4, 4), "linear")
    with pytest.raises(ValueError, match="Unknown resize method"):
        pto.image.resize(X, X.shape, "bogus")
    with pytest.raises(ValueError, match="nearest"):
        pto.image.scale_and_translate(X, X.shape, (1,), [1.0], [0.0], "nearest")
    assert pto.image.ResizeMethod.from_string("bicubic") is pto.image.ResizeMethod.CUBIC
