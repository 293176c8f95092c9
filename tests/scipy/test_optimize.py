"""``pto.scipy.optimize.minimize`` (BFGS) against ``jax.scipy.optimize.minimize`` on the same
problems: the solution, value, gradient, and the same iteration/evaluation counts and status
(the line search takes the same trial steps), in 32- and 64-bit mode, eagerly and under jit."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy.optimize import OptimizeResults, minimize
from helpers import assert_close

RNG = np.random.RandomState(0)
A = RNG.randn(20, 4)
B = (A @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 * RNG.randn(20) > 0).astype(np.float64)


def problems(np_):
    def rosen(x):
        return np_.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    def logistic(w, a, b):
        z = a @ w
        return np_.mean(np_.logaddexp(0.0, z) - b * z) + 0.05 * np_.dot(w, w)

    def quartic(x):
        return np_.sum((x - 1.5) ** 4 + x ** 2)

    return [(rosen, np.zeros(3), (), {}), (logistic, np.zeros(4), (A, B), {}),
            (quartic, np.full(2, 3.0), (), {"maxiter": 4}),
            (rosen, np.array([-1.2, 1.0]), (), {"gtol": 1e-3, "norm": 2})]


# JAX 0.10.2's jax.jit(jax.scipy.optimize.minimize(..., method="BFGS")) on problems(jnp):
# (case, x64) -> (nit, nfev, njev, status, success, x, fun). Compiling JAX's nested while
# loops takes seconds per problem on a busy machine, so they are recorded here; the live test
# below re-checks one against the installed JAX. (Rosenbrock from zeros stops with status 3
# in JAX, zoom failed, in both modes; ptojax follows.)
RECORDED = {
    (0, False): (11, 27, 27, 3, False, [0.675635576248169, 0.4467765986919403, 0.17914634943008423], 0.46256396174430847),
    (1, False): (13, 16, 16, 3, False, [0.5991783738136292, -1.2284038066864014, -0.06285785883665085, 0.40358513593673706], 0.4318161904811859),
    (2, False): (4, 6, 6, 1, False, [0.8796811699867249, 0.8796811699867249], 1.8438130617141724),
    (3, False): (8, 17, 17, 3, False, [-0.27780628204345703, 0.043341174721717834], 1.7472707033157349),
    (0, True): (11, 27, 27, 3, False, [0.6756357414697438, 0.4467768339319005, 0.17914672163247358], 0.4625629723508024),
    (1, True): (14, 15, 15, 0, True, [0.5990838810174476, -1.2283168500979669, -0.06285086979847682, 0.40359819032751837], 0.43181616673973333),
    (2, True): (4, 6, 6, 1, False, [0.8796811812873097, 0.8796811812873043], 1.8438130178618597),
    (3, True): (8, 17, 17, 3, False, [-0.2778069614751379, 0.04333877520016309], 1.747291199355539),
}
FIELDS = ("nit", "nfev", "njev", "status", "success")


def _run(minimize_fn, jit, np_, case, x64):
    dtype = np.float64 if x64 else np.float32
    fun, x0, args, options = problems(np_)[case]
    return jit(lambda x0, *a: minimize_fn(fun, x0, a, method="BFGS", options=options))(
        x0.astype(dtype), *(a.astype(dtype) for a in args))


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("case", range(4))
def test_bfgs_matches_jax_records(case, x64):
    with pto.enable_x64(x64):
        got = _run(minimize, pto.jit, pnp, case, x64)
    assert isinstance(got, OptimizeResults)
    *counts, x, fun = RECORDED[case, x64]
    assert [int(getattr(got, f)) for f in FIELDS] == [int(c) for c in counts]
    tol = 1e-9 if x64 else 2e-4
    assert_close(got.x, np.array(x, got.x.dtype), rtol=tol, atol=tol)
    assert_close(got.fun, np.array(fun, got.x.dtype), rtol=tol, atol=tol)


def test_bfgs_matches_live_jax(jax):
    """One problem against the installed JAX: counts, x, fun, jac and hess_inv."""
    import jax.scipy.optimize as jopt
    with jax.enable_x64(True):
        want = jax.tree.map(np.asarray, _run(jopt.minimize, jax.jit, jax.numpy, 1, True))
    with pto.enable_x64(True):
        got = _run(minimize, pto.jit, pnp, 1, True)
    assert [int(getattr(got, f)) for f in FIELDS] == [int(getattr(want, f)) for f in FIELDS]
    assert [int(getattr(want, f)) for f in FIELDS] == [int(c) for c in RECORDED[1, True][:5]]
    for name in ("x", "fun", "jac", "hess_inv"):
        assert_close(getattr(got, name), getattr(want, name), rtol=1e-8, atol=1e-10)


def test_eager_and_errors():
    r = minimize(lambda x, c: pnp.sum((x - c) ** 2), pnp.zeros(2), (3.0,), method="BFGS")
    assert_close(r.x, np.full(2, 3.0, np.float32))
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(lambda x: x.sum(), pnp.zeros(2), 1.0, method="BFGS")
    with pytest.raises(ValueError, match="not recognized"):
        minimize(lambda x: x.sum(), pnp.zeros(2), method="nelder-mead")
