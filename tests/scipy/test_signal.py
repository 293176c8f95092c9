"""``pto.scipy.signal`` against ``jax.scipy.signal``: convolve/correlate (direct and FFT),
convolve2d/correlate2d and fftconvolve in every mode, inputs swapped, integer inputs promoted;
JAX's errors."""
import numpy as np
import pytest

import ptojax.numpy as pnp
from ptojax.scipy import signal
from helpers import assert_close

RNG = np.random.RandomState(0)
SHAPES = [((7,), (3,)), ((6,), (6,)), ((5, 6), (2, 3)), ((2, 3), (5, 4)),
          ((4, 4), (4, 4)), ((4, 5, 3), (2, 2, 2))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", SHAPES)
def test_convolve_correlate_match_jax(jax, mode, shapes):
    import jax.scipy.signal as jsig
    a, b = (RNG.randn(*s).astype(np.float32) for s in shapes)
    names = ["convolve", "correlate"] + (["convolve2d", "correlate2d"] if a.ndim == 2 else [])
    with jax.enable_x64(False):
        for name in names:
            want = getattr(jsig, name)(a, b, mode=mode)
            got = getattr(signal, name)(a, b, mode=mode)
            assert got.shape == want.shape and got.dtype == want.dtype, name
            assert_close(got, np.asarray(want), rtol=1e-5, atol=1e-5)
        for name in ("convolve", "correlate"):
            got = getattr(signal, name)(a, b, mode=mode, method="fft")
            assert_close(got, np.asarray(getattr(jsig, name)(a, b, mode=mode, method="fft")),
                         rtol=1e-4, atol=1e-4)


def test_integer_inputs_and_axes(jax):
    import jax.scipy.signal as jsig
    a, b = np.arange(6), np.array([1, 0, -1])
    with jax.enable_x64(False):
        want = jsig.convolve(a, b)
        x, y = RNG.randn(3, 8).astype(np.float32), RNG.randn(3, 3).astype(np.float32)
        want_axes = jsig.fftconvolve(x, y, mode="same", axes=1)
    got = signal.convolve(a, b)
    assert got.dtype == want.dtype
    assert_close(got, np.asarray(want))
    assert_close(signal.fftconvolve(x, y, mode="same", axes=1), np.asarray(want_axes),
                 rtol=1e-4, atol=1e-5)


def test_errors_as_jax():
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(pnp.ones(3), pnp.ones((2, 2)))
    with pytest.raises(ValueError, match="smaller than the other in every dimension"):
        signal.convolve(pnp.ones((2, 5)), pnp.ones((3, 1)))
    with pytest.raises(ValueError, match="mode must be one of"):
        signal.convolve(pnp.ones(3), pnp.ones(2), mode="wrap")
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        signal.convolve2d(pnp.ones((3, 3)), pnp.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match="mapped axes must have same shape"):
        signal.fftconvolve(pnp.ones((3, 4)), pnp.ones((2, 2)), axes=1)
    with pytest.raises(ValueError, match="2-dimensional"):
        signal.correlate2d(pnp.ones(3), pnp.ones(2))
