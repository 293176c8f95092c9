"""Complex values against JAX: lax.complex/real/imag/conj and complex arithmetic, promotion
with weak Python complex scalars, JAX's derivative conventions (grad of a real function of
complex inputs, holomorphic=True, the errors), jit, vmap and scan; complex equations stay
tensor-level under tiling and run on the host backend through numpy."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import dtypes, lax
from ptojax.errors import DtypeError, GradError
from ptojax.lower.host.backend import CpuBackend
from helpers import assert_close

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

Z = (np.array([1 + 2j, -3 + 0.5j, 0.25 - 1j, 2 + 0j]) * np.array([1, 1, 1, 1])).astype(
    np.complex64)
Z128 = Z.astype(np.complex128)
X = np.array([0.5, -1.5, 2.0, 3.0], np.float32)


def test_parts_and_conj_match_jax(jax):
    for ours, theirs in [(lax.real(Z), jax.lax.real(Z)), (lax.imag(Z), jax.lax.imag(Z)),
                         (lax.conj(Z), jax.lax.conj(Z)), (lax.conj(X), jax.lax.conj(X)),
                         (lax.complex(X, X[::-1]), jax.lax.complex(X, X[::-1])),
                         (lax.abs(Z128), jax.lax.abs(Z128)), (lax.sign(Z), jax.lax.sign(Z))]:
        assert_close(ours, theirs)
    with pytest.raises(DtypeError, match="complex"):
        lax.real(X)
    with pytest.raises(DtypeError, match="float32 or float64"):
        lax.complex(X.astype(np.float16), X.astype(np.float16))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
                                  "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
                                  "atanh", "log1p", "expm1", "exp2", "logistic"])
def test_transcendental_functions_of_complex_values_match_jax(name, jax):
    assert_close(getattr(lax, name)(Z128), getattr(jax.lax, name)(Z128), rtol=1e-12)


@pytest.mark.usefixtures("ptojax_default_mode")
def test_weak_complex_scalars_promote_like_jax(jnp):
    cases = [(np.ones(2, np.float32), 1j), (np.ones(2, np.int32), 1j),
             (np.ones(2, np.float16), 2j), (np.ones(2, np.float64), 1j),
             (np.ones(2, np.complex64), 2.0), (np.ones(2, np.complex64), 1j)]
    for x, s in cases:
        got = pnp.multiply(x, s)
        want = jnp.multiply(x, s)
        expected = np.complex64 if want.dtype == np.complex128 \
            else want.dtype   # JAX runs with x64 here; ptojax without x64 is 32-bit
        assert got.dtype == expected, (x.dtype, s, got.dtype)
    assert pnp.asarray(1j).dtype == np.complex64 and pnp.asarray(1j).weak_type
    assert dtypes.promote(((dtypes.float32, False), (dtypes.complex64, True)))[0] == \
        dtypes.complex64
    assert pnp.finfo(pnp.complex64).eps == np.finfo(np.float32).eps


def _real_loss(z):
    return pnp.sum(pnp.abs(z) ** 2 + pnp.real(pnp.exp(z) * (0.3 - 2j)) + pnp.imag(z * z))


def test_grad_of_a_real_function_of_complex_inputs_is_jaxs_conjugate_convention(jax, jnp):
    def jax_loss(z):
        return jnp.sum(jnp.abs(z) ** 2 + jnp.real(jnp.exp(z) * (0.3 - 2j)) + jnp.imag(z * z))
    ours = pto.grad(_real_loss)(Z128)
    assert_close(ours, jax.grad(jax_loss)(Z128), rtol=1e-12)
    # |z|^2 alone: 2 conj(z)
    assert_close(pto.grad(lambda z: pnp.sum(pnp.abs(z) ** 2))(Z), 2 * np.conj(Z))


def test_holomorphic_grad_and_jacobians_match_jax(jax, jnp):
    f = lambda z: pnp.sum(pnp.sin(z) * z)
    jf = lambda z: jnp.sum(jnp.sin(z) * z)
    assert_close(pto.grad(f, holomorphic=True)(Z128), jax.grad(jf, holomorphic=True)(Z128),
                 rtol=1e-12)
    g, jg = (lambda z: pnp.exp(z) * z), (lambda z: jnp.exp(z) * z)
    for ours, theirs in [(pto.jacfwd, jax.jacfwd), (pto.jacrev, jax.jacrev)]:
        assert_close(ours(g, holomorphic=True)(Z128), theirs(jg, holomorphic=True)(Z128),
                     rtol=1e-12)
    assert_close(pto.jacrev(lambda z: pnp.abs(z))(Z128), jax.jacrev(jnp.abs)(Z128),
                 rtol=1e-12)


def test_grad_refuses_what_jax_refuses():
    with pytest.raises(GradError, match="holomorphic=True"):
        pto.grad(lambda z: pnp.sum(z * z))(Z)
    with pytest.raises(GradError, match="complex inputs"):
        pto.grad(lambda x: pnp.sum(x * 1j), holomorphic=True)(X)
    with pytest.raises(GradError, match="real-valued inputs"):
        pto.jacfwd(lambda z: pnp.abs(z))(Z)
    with pytest.raises(GradError, match="real-valued outputs"):
        pto.jacrev(lambda z: z * 2)(Z)


def test_jvp_and_vjp_of_complex_functions_match_jax(jax, jnp):
    f = lambda z, x: pnp.exp(z) * x + pnp.conj(z) * 1j
    jf = lambda z, x: jnp.exp(z) * x + jnp.conj(z) * 1j
    x, tz, tx = X.astype(np.float64), Z128[::-1] * 0.5, X.astype(np.float64) * 0.25
    assert_close(pto.jvp(f, (Z128, x), (tz, tx)), jax.jvp(jf, (Z128, x), (tz, tx)),
                 rtol=1e-12)
    ct = (Z128 * (0.5 - 1j)).astype(np.complex128)
    assert_close(pto.vjp(f, Z128, x)[1](ct), jax.vjp(jf, Z128, x)[1](ct), rtol=1e-12)


def test_jit_vmap_and_scan_carry_complex_values(jax, jnp):
    w = (Z128[:, None] * Z128[None, :]).astype(np.complex128)

    def step(h, x):
        h = pnp.tanh(h @ w + x)
        return h, pnp.abs(h)

    def jstep(h, x):
        h = jnp.tanh(h @ w + x)
        return h, jnp.abs(h)

    xs = np.stack([Z128 * k for k in (0.1, 0.2, 0.3)])
    ours = pto.jit(lambda h, xs: lax.scan(step, h, xs))(Z128 * 0.1, xs)
    theirs = jax.lax.scan(jstep, Z128 * 0.1, xs)
    assert_close(ours, theirs, rtol=1e-12)
    assert_close(pto.vmap(lambda z: pnp.vdot(z, z))(w), jax.vmap(lambda z: jnp.vdot(z, z))(w),
                 rtol=1e-12)
    loss = lambda h: pnp.sum(pnp.abs(lax.scan(step, h, xs)[0]))
    jloss = lambda h: jnp.sum(jnp.abs(jax.lax.scan(jstep, h, xs)[0]))
    assert_close(pto.grad(loss)(Z128 * 0.1), jax.grad(jloss)(Z128 * 0.1), rtol=1e-10)


def test_complex_equations_stay_tensor_level_when_tiled():
    def f(x):
        return pnp.real(pnp.exp(x * 1j)) * 2.0 + 1.0
    reasons = " | ".join(u.reason for u in pto.jit(f).lower(X).unfused())
    assert "c64 tensors have no tile form" in reasons
    assert_close(pto.tile(f)(X), f(X))


def test_host_backend_runs_complex_programs_through_numpy():
    f = pto.jit(lambda x: pnp.abs(pnp.fft.fft(x * (1 + 1j))) + x,
                backend=CpuBackend(min_elements=0))
    x = np.linspace(0, 1, 64).astype(np.float32)
    for _ in range(3):   # the compiled program takes over after the first call
        out = f(x)
    assert_close(out, np.abs(np.fft.fft(x * (1 + 1j))).astype(np.float32) + x, rtol=1e-5)
