"""``ptojax.custom_derivatives`` against ``jax.custom_derivatives``: its names are JAX's, the
same objects as the top-level ones, and ``linear_call`` (only reachable here, as in JAX)
matches JAX's values and derivatives in every mode."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close


def test_names_are_jaxs_and_the_top_level_ones(jax):
    import jax.custom_derivatives as theirs
    ours = pto.custom_derivatives
    assert set(ours.__all__) <= set(dir(theirs))
    for name in ("custom_jvp", "custom_vjp", "custom_gradient", "closure_convert"):
        assert getattr(ours, name) is getattr(pto, name)


def _scaled(lib, np_):
    def f(w, x):     # linear in x, with its transpose given
        return lib.custom_derivatives.linear_call(
            lambda r, l: np_.sin(r) * l, lambda r, ct: np_.sin(r) * ct, w, x)
    return f


def test_linear_call_matches_jax(jax):
    w = np.float32(0.7)
    x = np.arange(1.0, 4.0, dtype=np.float32)
    f, g = _scaled(pto, pnp), _scaled(jax, jax.numpy)
    assert_close(f(w, x), g(w, x), rtol=1e-6)
    assert_close(pto.jit(f)(w, x), g(w, x), rtol=1e-6)
    loss = lambda lib, fn: lambda x: (fn(w, x) ** 2).sum()
    assert_close(pto.grad(loss(pto, f))(x), jax.grad(loss(jax, g))(x), rtol=1e-6)
    assert_close(pto.jvp(lambda x: f(w, x), (x,), (np.ones(3, np.float32),))[1],
                 jax.jvp(lambda x: g(w, x), (x,), (np.ones(3, np.float32),))[1], rtol=1e-6)
    xs = np.stack([x, 2 * x])     # (JAX has no batching rule for linear_call)
    assert_close(pto.vmap(lambda x: f(w, x))(xs), np.stack([g(w, r) for r in xs]), rtol=1e-6)
