"""pnp.fft against jnp.fft beyond the records (jax_records/numpy_fft.py): the lax primitive's
four kinds with their transposes, gradients with JAX's complex convention, vmap, jit,
precision kept, and JAX's errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 8))
Z = X + 1j * RNG.standard_normal((3, 8))


@pytest.mark.parametrize("kind, operand, lengths", [
    ("FFT", Z, (8,)), ("FFT", Z, (3, 8)), ("IFFT", Z, (8,)), ("RFFT", X, (8,)),
    ("RFFT", X[:, :7], (7,)), ("RFFT", X, (3, 8)), ("IRFFT", Z[:, :5], (8,)),
    ("IRFFT", Z[:, :5], (9,)), ("IRFFT", Z[:, :5], (3, 8))])
def test_lax_fft_values_and_both_derivatives_match_jax(kind, operand, lengths, jax):
    f = lambda v: lax.fft(v, kind, lengths)
    jf = lambda v: jax.lax.fft(v, kind, lengths)
    out = f(operand)
    assert_close(out, jf(operand), rtol=1e-12)
    ct = np.asarray(out) * (0.5 - 0.25j if np.iscomplexobj(out) else 0.5) + 0.3
    assert_close(pto.vjp(f, operand)[1](ct), jax.vjp(jf, operand)[1](ct), rtol=1e-12)
    t = operand * 0.7
    assert_close(pto.jvp(f, (operand,), (t,)), jax.jvp(jf, (operand,), (t,)), rtol=1e-12)


def test_grads_of_real_losses_follow_jaxs_complex_convention(jax, jnp):
    losses = [(lambda z: pnp.sum(pnp.abs(pnp.fft.fft2(z)) ** 2),
               lambda z: jnp.sum(jnp.abs(jnp.fft.fft2(z)) ** 2)),
              (lambda z: pnp.sum(pnp.fft.irfft(z, n=10) ** 3),
               lambda z: jnp.sum(jnp.fft.irfft(z, n=10) ** 3)),
              (lambda z: pnp.sum(pnp.real(pnp.fft.ihfft(pnp.real(z)) * (1 - 2j))),
               lambda z: jnp.sum(jnp.real(jnp.fft.ihfft(jnp.real(z)) * (1 - 2j))))]
    for ours, theirs in losses:
        assert_close(pto.grad(ours)(Z), jax.grad(theirs)(Z), rtol=1e-10)
    assert_close(pto.jit(pto.grad(losses[0][0]))(Z), jax.grad(losses[0][1])(Z), rtol=1e-10)


def test_vmap_moves_the_batch_out_of_the_transformed_axes(jax, jnp):
    for in_axes in (0, 1):
        assert_close(pto.vmap(lambda z: pnp.fft.fft(z, norm="ortho"), in_axes)(Z),
                     jax.vmap(lambda z: jnp.fft.fft(z, norm="ortho"), in_axes)(Z), rtol=1e-12)
    assert_close(pto.vmap(pnp.fft.rfftn)(X.reshape(3, 2, 4)),
                 jax.vmap(jnp.fft.rfftn)(X.reshape(3, 2, 4)), rtol=1e-12)


def test_precision_and_dtypes_follow_the_operand():
    assert pnp.fft.fft(Z.astype(np.complex64)).dtype == np.complex64
    assert pnp.fft.rfft(X.astype(np.float32)).dtype == np.complex64
    assert pnp.fft.irfft(Z).dtype == np.float64
    assert pnp.fft.fft(np.arange(4, dtype=np.int32)).dtype == np.complex64
    assert pnp.fft.fft(np.arange(4, dtype=np.int64)).dtype == np.complex128   # 64-bit stays
    with pto.enable_x64(False):   # the default dtype (x64 off)
        assert pnp.fft.fftfreq(4).dtype == np.float32


def test_errors_match_jax():
    with pytest.raises(TypeError, match="real"):
        pnp.fft.rfft(Z)
    with pytest.raises(TypeError, match="float32 or float64"):
        pnp.fft.rfft(X.astype(np.float16))
    with pytest.raises(ValueError, match="only supports 2 axes"):
        pnp.fft.fft2(Z, axes=(0,))
    with pytest.raises(ValueError, match="repeated axes"):
        pnp.fft.fftn(Z, axes=(1, 1))
    with pytest.raises(ValueError, match="norm"):
        pnp.fft.fft(Z, norm="both")
    with pytest.raises(ValueError, match="only takes an int"):
        pnp.fft.fftfreq([0, 1, 2])
