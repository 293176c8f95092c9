"""``pto.scipy.ndimage.map_coordinates`` against ``jax.scipy.ndimage``: JAX's test grid
(input shapes, coordinate shapes, float and integer inputs, rounded integer coordinates,
orders 0 and 1, every mode, cval) including points outside the input; rounding half away
from zero; grad (JAX's continuous-gradient case), jit and vmap; JAX's errors."""
import itertools

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy import ndimage
from helpers import assert_close

RNG = np.random.RandomState(0)
MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]


@pytest.mark.parametrize("shape,coords_shape,dtype,rounded", [
    ((5,), (7,), np.float32, False), ((3, 4), (2, 3, 4), np.float32, False),
    ((3, 4, 5), (7,), np.float32, False), ((3, 4), (2, 3, 4), np.int32, False),
    ((3, 4), (7,), np.float32, True), ((5,), (2, 3, 4), np.int32, True)])
def test_map_coordinates_matches_jax(jax, shape, coords_shape, dtype, rounded):
    import jax.scipy.ndimage as jnd
    image = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    coords = [((size - 1) * RNG.uniform(-0.75, 1.75, coords_shape)).astype(np.float32)
              for size in shape]
    if rounded:
        coords = [c.round().astype(np.int32) for c in coords]
    cases = [(order, mode, cval) for order, mode in itertools.product((0, 1), MODES)
             for cval in ((0.0, -1.5) if mode == "constant" else (0.0,))]
    with jax.enable_x64(False):
        run = jax.jit(lambda x, c: [jnd.map_coordinates(x, c, order, mode=mode, cval=cval)
                                    for order, mode, cval in cases])
        wants = run(image, coords)
    for (order, mode, cval), want in zip(cases, wants):
        got = ndimage.map_coordinates(image, coords, order, mode=mode, cval=cval)
        assert got.dtype == want.dtype and got.shape == want.shape, (order, mode)
        assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-5)


def test_round_half_away_from_zero(jax):
    import jax.scipy.ndimage as jnd
    x, c = np.arange(5), [np.array([-0.5, 0.5, 1.5, 2.5, 3.5, 4.5])]
    with jax.enable_x64(False):
        want = jnd.map_coordinates(x, c, order=0)
    assert_close(ndimage.map_coordinates(x, c, order=0), np.asarray(want))
    assert_close(ndimage.map_coordinates(x * 1.0, c, order=1),
                 np.array([0.0, 0.5, 1.5, 2.5, 3.5, 2.0], np.float32))


def test_grad_jit_vmap(jax):
    import jax.scipy.ndimage as jnd

    def loss(delta, mc):   # JAX's test: linear interpolation of y = x is exact
        x = pnp.arange(100.0) if mc is ndimage.map_coordinates else np.arange(100.0)
        shifted = mc(x, [np.arange(100.0) + delta], order=1)
        return ((x - shifted) ** 2)[10:-10].mean()

    for delta, want in ((0.5, 1.0), (1.0, 2.0)):
        assert abs(float(pto.grad(loss)(delta, ndimage.map_coordinates)) - want) < 1e-4
    image = RNG.randn(4, 5).astype(np.float32)
    coords = RNG.uniform(-1, 5, (3, 2, 6)).astype(np.float32)
    with jax.enable_x64(False):
        want = jax.jit(jax.vmap(lambda c: jnd.map_coordinates(image, list(c), 1,
                                                              mode="mirror")))(coords)
    got = pto.vmap(lambda c: ndimage.map_coordinates(image, [c[0], c[1]], 1,
                                                     mode="mirror"))(coords)
    assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-5)
    assert_close(pto.jit(lambda x, c: ndimage.map_coordinates(x, [c[0], c[1]], 0))(
        image, coords[0]), ndimage.map_coordinates(image, [coords[0, 0], coords[0, 1]], 0))


def test_errors_as_jax():
    x, c = pnp.arange(5.0), [pnp.linspace(0, 5, num=3)]
    with pytest.raises(NotImplementedError, match="requires order<=1"):
        ndimage.map_coordinates(x, c, order=2)
    with pytest.raises(NotImplementedError, match="does not yet support mode"):
        ndimage.map_coordinates(x, c, order=1, mode="grid-wrap")
    with pytest.raises(ValueError, match="sequence of length"):
        ndimage.map_coordinates(x, [c[0], c[0]], order=1)
