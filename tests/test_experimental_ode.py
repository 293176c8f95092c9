"""``ptojax.experimental.ode.odeint`` against ``jax.experimental.ode.odeint`` on the cases of
JAX's ``tests/ode_test.py`` (ported as data: the same ODEs, initial values, times and
arguments): values, reverse-mode gradients (also against finite differences), pytree states,
closures, jit and vmap, and the errors for bad input."""
import functools

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.experimental import ode
from ptojax.experimental.ode import odeint

from tests.helpers import assert_close
from jax_golden import expected

jax = pytest.importorskip("jax")
jnp = jax.numpy
jode = pytest.importorskip("jax.experimental.ode")


# The ODEs of JAX's tests, written once over a numpy module (``np_`` is pnp or jnp).
def pend(np_, y, _, m, g):
    theta, omega = y
    return [omega, -m * omega - g * np_.sin(theta)]


def weird_time(np_, y, t):
    return np_.array([y[1] * -t, -1 * y[1] - 9.8 * np_.sin(y[0])])


def decay(np_, y, t, arg1, arg2):
    return -np_.sqrt(t) - y + arg1 - np_.mean((y + arg2) ** 2)


def swoop(np_, y, t, arg1, arg2):
    return np_.array(y - np_.sin(t) - np_.cos(t) * arg1 + arg2)


_rng = np.random.RandomState(0)
_decay_args = (_rng.randn(3).astype(np.float32), _rng.randn(3).astype(np.float32))
# (dynamics, y0, ts, args)
CASES = {
    "pend": (pend, [np.float32(np.pi - 0.1), np.float32(0.0)], np.linspace(0., 1., 11),
             (np.float32(0.25), np.float32(9.8))),
    "weird_time": (weird_time, [np.float32(np.pi - 0.1), np.float32(0.0)],
                   np.linspace(0., 1., 11), ()),
    "decay": (decay, _rng.randn(3), np.linspace(0.1, 0.2, 4), _decay_args),
    "swoop": (swoop, np.linspace(0.1, 0.9, 10), np.array([0.1, 0.2]), (0.1, 0.2)),
    "swoop_bigger": (swoop, np.linspace(1.1, 10.9, 10), np.array([0.1, 0.2]), (0.1, 0.3)),
}


def _as(module, tree):
    return jax.tree_util.tree_map(lambda x: module.asarray(x, np.float32), tree)


def _both(name):
    fun, y0, ts, args = CASES[name]
    ours = (functools.partial(fun, pnp), _as(pnp, y0), _as(pnp, ts), args)
    theirs = (functools.partial(fun, jnp), _as(jnp, y0), _as(jnp, ts), args)
    return ours, theirs


def _loss(integrate, y0, ts, *args):
    """A scalar of every output, weighted so that each time point counts differently."""
    ys = integrate(y0, ts, *args)
    leaves = jax.tree_util.tree_leaves(ys)
    return sum((leaf * leaf).sum() + (0.3 * leaf).sum() for leaf in leaves)


@pytest.mark.parametrize("name", ["swoop_bigger", "weird_time"])
def test_values_match_jax(name):
    (fun, y0, ts, args), (jfun, jy0, jts, jargs) = _both(name)
    ys = odeint(fun, y0, ts, *args)
    assert_close(ys, jode.odeint(jfun, jy0, jts, *jargs), rtol=2e-5, atol=2e-5)


def _cotangent(ys):
    """A cotangent that weighs every output differently."""
    return jax.tree_util.tree_map(
        lambda y: np.cos(np.arange(y.size, dtype=np.float32)).reshape(y.shape), ys)


def _inputs(name):
    """The case's y0, ts and args as float32 arrays (the stored values' digest)."""
    _, y0, ts, args = CASES[name]
    return [np.asarray(a, np.float32) for a in jax.tree_util.tree_leaves((y0, ts, args))]


VJP_CASES = ["decay", "pend"]


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py: odeint's values and its
    pullback of _cotangent (JAX compiled each case for 3-4 s)."""
    for name in VJP_CASES:
        def run(*_, name=name):
            _, (jfun, jy0, jts, jargs) = _both(name)
            jys, jpullback = jax.vjp(lambda *a: jode.odeint(jfun, *a), jy0, jts, *jargs)
            return jax.tree_util.tree_leaves((jys, jpullback(_cotangent(jys))))
        yield f"ode/vjp/{name}", _inputs(name), run


@pytest.mark.parametrize("name", VJP_CASES)
def test_values_and_gradients_match_jax(name):
    """Against JAX's values and pullback stored by jax_golden.py."""
    (fun, y0, ts, args), _ = _both(name)
    ys, pullback = pto.vjp(lambda *a: odeint(fun, *a), y0, ts, *args)
    want = expected(f"ode/vjp/{name}", _inputs(name))
    n = len(jax.tree_util.tree_leaves(ys))
    assert_close(ys, want[:n], rtol=2e-5, atol=2e-5)
    assert_close(pullback(_cotangent(ys)), want[n:], rtol=2e-4, atol=2e-4, check_dtype=False)


def test_gradients_match_finite_differences_in_float64():
    with pto.enable_x64(True):
        fun, y0, ts, args = CASES["decay"]
        fun = functools.partial(fun, pnp)
        y0, ts = np.asarray(y0, np.float64), np.asarray(ts, np.float64)
        args = tuple(np.asarray(a, np.float64) for a in args)

        def loss(y0, ts, a1, a2):
            return _loss(functools.partial(odeint, fun), y0, ts, a1, a2)

        grads = pto.grad(loss, (0, 1, 2, 3))(y0, ts, *args)
        eps = 1e-6
        primals = [y0, ts, *args]
        for which, grad in enumerate(grads):
            assert grad.dtype == np.float64
            for j in {0 if which != 1 else primals[which].size - 1}:  # (fewer solves)
                up = [p.copy() for p in primals]
                down = [p.copy() for p in primals]
                up[which].flat[j] += eps
                down[which].flat[j] -= eps
                fd = (float(loss(*up)) - float(loss(*down))) / (2 * eps)
                np.testing.assert_allclose(np.asarray(grad).flat[j], fd, rtol=1e-5, atol=1e-6)


def test_pytree_state_and_its_gradient():
    def dynamics(y, _t):
        return jax.tree_util.tree_map(lambda x: -x, y)

    ts = np.linspace(0., 1., 11).astype(np.float32)
    y0 = (np.float32(-0.1), np.array([[[0.1]]], np.float32))
    ys = odeint(dynamics, _as(pnp, y0), pnp.asarray(ts))
    assert [y.shape for y in ys] == [(11,), (11, 1, 1, 1)]
    decay = np.exp(-ts.astype(np.float64))
    assert_close(ys, (y0[0] * decay, y0[1] * decay[:, None, None, None]), rtol=1e-6,
                 atol=1e-7, check_dtype=False)
    # sum of y(t) = y0 exp(-t) over the times: d/dy0 = sum exp(-t), d/dt_i = -y(t_i)
    # (for i > 0; t[0] moves the start: d/dt_0 = sum y(t_i) for i > 0)
    y_grad, t_grad = pto.grad(lambda y, t: sum(x.sum() for x in odeint(dynamics, y, t)),
                              (0, 1))(_as(pnp, y0), pnp.asarray(ts))
    assert_close(y_grad, (decay.sum(), np.full((1, 1, 1), decay.sum())), rtol=1e-5,
                 check_dtype=False)
    total = float(y0[0] + y0[1].sum())
    expected_t = -total * decay
    expected_t[0] = total * decay[1:].sum()
    assert_close(t_grad, expected_t, rtol=1e-4, atol=1e-6, check_dtype=False)


def test_closure_gradient_and_vmap_of_jitted_value_and_grad():
    @pto.jit
    def experiment(x):
        def model(y, t):
            return -x * y
        return odeint(model, 1., pnp.arange(0, 2, 0.1))[-1]

    xs = np.arange(0., 1., 0.25).astype(np.float32)
    h, g = pto.vmap(pto.value_and_grad(experiment))(pnp.asarray(xs))
    # y(1.9) = exp(-1.9 x), so dy/dx = -1.9 exp(-1.9 x)
    assert_close(h, np.exp(-1.9 * xs), rtol=1e-5)
    assert_close(g, -1.9 * np.exp(-1.9 * xs), rtol=1e-5)
    fd = (experiment(xs[1] + 1e-3) - experiment(xs[1] - 1e-3)) / 2e-3
    np.testing.assert_allclose(g[1], fd, rtol=1e-2)


def test_vmap_over_initial_conditions_inside_grad():
    def dx_dt(x, *args):
        return 0.1 * x

    def g(x):
        y0 = pnp.array([[x, 0.1], [x, 0.2]])
        return pto.vmap(lambda y0: odeint(dx_dt, y0, pnp.array([0., 5.])))(y0)[:, -1].sum()

    # y(5) = y0 exp(0.5); x appears in both rows
    assert_close(pto.grad(g)(2.),
                 np.float32(2 * np.exp(0.5)), rtol=1e-6)
    ys = pto.vmap(lambda y0: odeint(lambda x, t: x, y0, pnp.array([0., 1.])))(pnp.ones((5, 2)))
    assert ys.shape == (5, 2, 2)
    assert_close(ys[:, 1], np.full((5, 2), np.e, np.float32), rtol=1e-6)


def test_jit_and_tolerance_options():
    fun, y0, ts, args = CASES["pend"]

    def solve(y0, ts, **options):
        return odeint(functools.partial(fun, pnp), y0, ts, *args, **options)

    y0, ts = _as(pnp, y0), pnp.asarray(ts, np.float32)
    options = dict(rtol=1e-4, atol=1e-4, hmax=0.05, mxstep=200)
    ys = pto.jit(functools.partial(solve, **options))(y0, ts)
    assert_close(ys, solve(y0, ts, **options), rtol=1e-6, atol=1e-6)
    assert_close(ys, solve(y0, ts), rtol=1e-3, atol=1e-3)
    # too few steps: the integration stops early, as JAX's does
    # (with tolerances above float32's rounding, so that both take the same steps)
    y0, ts = np.float32(1.0), np.array([0., 5.], np.float32)
    short = odeint(lambda y, t: y, pnp.asarray(y0), pnp.asarray(ts), mxstep=3,
                   rtol=1e-4, atol=1e-4)
    assert_close(short, jode.odeint(lambda y, t: y, jnp.asarray(y0), jnp.asarray(ts),
                                    mxstep=3, rtol=1e-4, atol=1e-4), rtol=1e-4)


def test_closure_over_nondifferentiated_values():
    def dz_dt(z, t):
        return pnp.stack([z[0], z[1]])

    grad = pto.grad(lambda z: pnp.sum(odeint(dz_dt, z, pnp.arange(4.))))(pnp.ones(2))
    assert_close(grad, np.full(2, np.sum(np.exp(np.arange(4.))), np.float32), rtol=1e-5)


def test_forward_mode_is_an_error():
    def f(k):
        return odeint(lambda x, t: k * x, 1., pnp.linspace(0, 1., 5)).sum()

    with pytest.raises(TypeError, match="forward-mode"):
        pto.jacfwd(f)(3.)


def test_bad_input_errors():
    f = lambda y, t: -y
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(f, 1., [0., 1.])
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(f, 1., pnp.array([0, 1]))
    with pytest.raises(TypeError, match="y0 must hold floating"):
        odeint(f, 1, pnp.array([0., 1.]))
    with pytest.raises(TypeError, match="odeint \\*args must be arrays or scalars"):
        odeint(lambda y, t, a: -y, 1., pnp.array([0., 1.]), "a")


def test_public_names_are_jaxs():
    public = {n for n in dir(jode) if not n.startswith("_") and callable(getattr(jode, n))
              and getattr(getattr(jode, n), "__module__", "") == jode.__name__}
    # ravel_first_arg wraps a function in JAX's internal linear_util: not API here
    assert set(ode.__all__) == public - {"ravel_first_arg"}
    assert dir(ode) == sorted(ode.__all__)


def test_complex_state():
    """y' = i y: y(t) = exp(i t); JAX's gradient of Re y(1) in y0 is exp(i) too."""
    ts = np.array([0., 0.5, 1.], np.float32)
    solve = lambda y0: odeint(lambda y, t: 1j * y, y0, pnp.asarray(ts))
    y0 = pnp.array(1.0 + 0j, pnp.complex64)
    assert_close(solve(y0), np.exp(1j * ts).astype(np.complex64), rtol=2e-6, atol=2e-6)
    assert_close(pto.grad(lambda y0: solve(y0)[-1].real)(y0), np.complex64(np.exp(1j)),
                 rtol=2e-6, atol=2e-6)
