"""``hyp2f1`` against ``jax.scipy.special.hyp2f1`` on the same inputs, float32 and float64:
random ``a, b, c`` in ``[0.5, 10]`` with ``x`` in ``[-1, 1]``, and the special cases of each
branch (``x = 0``, ``a = 0``, ``c`` a non-positive integer, ``x = 1``, ``x > 1``, ``a = c``,
``b = c``, Euler's transformation, terminating series, the digamma expansion near 1);
derivatives in all four arguments under ``vmap`` where the series converge well (``0 <= x <=
0.8``: elsewhere JAX's parameter-derivative series cancel badly and both are inaccurate)."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from jax_golden import expected

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

_rng = np.random.default_rng(0)
RANDOM = np.concatenate([_rng.uniform(0.5, 10, (3, 20)), _rng.uniform(-1, 1, (1, 20))])
EDGES = np.array([
    (1, 1, 2, 0.5), (0, 2, 3, 0.5), (1, 2, 0, 0.5), (1, 2, -2, 0.5), (0.5, 0.5, 2.0, 0.95),
    (1, 1, 2, 0.95), (1.5, 2.5, 2, 0.95), (1.5, 2.5, 2.0, 0.3), (-3, 2, 3, 0.5), (2, -3, 4, 0.7),
    (-3, -2, 3, 0.5), (1, 2, 3, 1.0), (1, 2, 2.5, 1.0), (1, 2, 3, 1.5), (1, 2, 2, 0.5),
    (2, 1, 2, 0.5), (2, 3, 4, -0.5), (1, 1, 1.5, 0.99), (0.3, 0.7, 4.0, 0.95), (2, 3, 4, 0.97),
    (1, 2, 5, 0.93), (3.0, 4.0, 5.0, 0.95), (-2.0, 3, 1.5, 0.95), (1, 2, 3, 0.0)]).T
_GRAD = np.concatenate([_rng.uniform(0.5, 5, (3, 8)), _rng.uniform(0, 0.8, (1, 8))])
TOL = {np.float32: 1e-5, np.float64: 1e-12}


def _inputs(dtype):
    return [np.concatenate([RANDOM, EDGES], axis=1).astype(dtype), _GRAD.astype(dtype)]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: 2F1 on the table and its
    derivatives in a, b, c under vmap. (The x derivative is left out: compiling 2F1 twice more
    is slow; it is a b / c 2F1(a+1, b+1; c+1; x), checked below on our side.)"""
    import jax.scipy.special as jsp

    def reference(args, grad_args):
        grads = [jax.vmap(jax.grad(jsp.hyp2f1, argnums=i))(*grad_args) for i in range(3)]
        return [jsp.hyp2f1(*args), *grads]
    for dtype in (np.float32, np.float64):
        yield f"hyp2f1/{np.dtype(dtype).name}", _inputs(dtype), jax.jit(reference)
    yield ("hyp2f1/python-scalars", [np.array([1.0, 1.0, 2.0, 0.5])],
           lambda _: [jsp.hyp2f1(1.0, 1.0, 2.0, 0.5)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hyp2f1_matches_jax(dtype):
    """Against JAX's values stored by jax_golden.py (compiling JAX's 2F1 and its three
    derivatives took 12-20 s)."""
    args, grad_args = _inputs(dtype)
    want, *want_grads = expected(f"hyp2f1/{np.dtype(dtype).name}", [args, grad_args])
    got = pto.scipy.special.hyp2f1(*pnp.asarray(args))
    assert_close(got, np.asarray(want), rtol=TOL[dtype], atol=0)
    for i, want_grad in enumerate(want_grads):
        got_grad = pto.vmap(pto.grad(pto.scipy.special.hyp2f1, argnums=i))(
            *pnp.asarray(grad_args))
        assert_close(got_grad, np.asarray(want_grad), rtol=TOL[dtype] * 100, atol=0)
    a, b, c, x = pnp.asarray(grad_args)
    d_dx = pto.vmap(pto.grad(pto.scipy.special.hyp2f1, argnums=3))(a, b, c, x)
    assert_close(d_dx, a * b / c * pto.scipy.special.hyp2f1(a + 1, b + 1, c + 1, x),
                 rtol=TOL[dtype], atol=0)


def test_hyp2f1_types_jit_and_errors(jax):
    """Python scalars: JAX's type traced (jax.eval_shape), its value stored by jax_golden.py
    (JAX compiles 2F1 for an eager call: 2-4 s)."""
    got = pto.scipy.special.hyp2f1(1.0, 1.0, 2.0, 0.5)
    want = jax.eval_shape(lambda: jax.scipy.special.hyp2f1(1.0, 1.0, 2.0, 0.5))
    assert (got.dtype, got.aval.weak_type) == (want.dtype, want.weak_type)
    (value,) = expected("hyp2f1/python-scalars", [np.array([1.0, 1.0, 2.0, 0.5])])
    assert value.dtype == want.dtype
    assert_close(got, value, rtol=1e-14)
    x = pnp.linspace(-0.5, 0.95, 5)
    assert_close(pto.jit(pto.scipy.special.hyp2f1)(1.5, 2.0, 3.5, x),
                 pto.scipy.special.hyp2f1(1.5, 2.0, 3.5, x))
    with pytest.raises(ValueError, match="complex"):
        pto.scipy.special.hyp2f1(1.0, 1.0, 2.0, pnp.ones(2, pnp.complex64))
