"""pto.scipy.stats against jax.scipy.stats on the same inputs: every function of every
distribution (float32 and float64, inside and outside the support), gradients, jit, vmap."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.scipy import stats
from ptojax.errors import DtypeError, ShapeError
from helpers import assert_close
from jax_golden import expected

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # float64 math: x64 mode

RNG = np.random.default_rng(0)
X = np.concatenate([RNG.normal(size=10) * 2, [-1.0, 0.0, 0.5, 1.0, 3.0]])     # 15 reals
UNIT = np.concatenate([RNG.uniform(size=11), [0.0, 1.0, 1e-4, 0.5]])          # 15 in [0, 1]
POS = np.concatenate([RNG.uniform(0.2, 4, size=12), [0.5, 1.0, 2.0]])         # 15 positive
K = np.array([0, 1, 2, 3, 5, 8, -1, 0, 1, 2, 4, 6, 1.5, 2, 10], float)        # 15 counts
LOC, SCALE = 0.3, 1.7
PROB = np.resize([0.2, 0.5, 0.9], 15)

LOCATION_SCALE = {"logpdf": X, "pdf": X, "cdf": X, "logcdf": X, "sf": X, "logsf": X,
                  "ppf": UNIT, "isf": UNIT}
CASES = [
    *((f"norm.{f}", (x, LOC, SCALE)) for f, x in LOCATION_SCALE.items()),
    *((f"cauchy.{f}", (x, LOC, SCALE)) for f, x in LOCATION_SCALE.items()),
    *((f"logistic.{f}", (x, LOC, SCALE)) for f, x in LOCATION_SCALE.items()
      if f in ("logpdf", "pdf", "cdf", "sf", "ppf", "isf")),
    *((f"expon.{f}", (x, LOC, SCALE)) for f, x in LOCATION_SCALE.items() if f != "isf"),
    *((f"gumbel_l.{f}", (x, LOC, SCALE)) for f, x in LOCATION_SCALE.items() if f != "isf"),
    *((f"gumbel_r.{f}", (x, LOC, SCALE)) for f, x in LOCATION_SCALE.items() if f != "isf"),
    *((f"laplace.{f}", (X, LOC, SCALE)) for f in ("logpdf", "pdf", "cdf")),
    *((f"uniform.{f}", (x, LOC, SCALE)) for f, x in LOCATION_SCALE.items()
      if f in ("logpdf", "pdf", "cdf", "ppf")),
    *((f"pareto.{f}", (x + 2.5 if f not in ("ppf",) else x, POS, LOC, SCALE))
      for f, x in LOCATION_SCALE.items() if f != "isf"),
    *((f"truncnorm.{f}", (X, -1.2, 2.0, LOC, SCALE))
      for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")),
    ("truncnorm.logcdf", (X * 4, 3.0, 9.0)),          # far in the right tail
    ("truncnorm.logpdf", (X * 4 - 8, -12.0, -5.0)),   # far in the left tail
    *((f"beta.{f}", (UNIT, POS, POS[::-1], 0.0, 1.0)) for f in ("logpdf", "pdf")),
    *((f"gamma.{f}", (POS, POS[::-1], LOC, SCALE)) for f in ("logpdf", "pdf")),
    *((f"chi2.{f}", (POS, POS[::-1] * 2, 0.1, SCALE)) for f in ("logpdf", "pdf")),
    *((f"t.{f}", (X, POS, LOC, SCALE)) for f in ("logpdf", "pdf")),
    *((f"gennorm.{f}", (X, POS)) for f in ("logpdf", "pdf")),
    *((f"wrapcauchy.{f}", (np.abs(X), UNIT)) for f in ("logpdf", "pdf")),
    *((f"bernoulli.{f}", (np.resize([0.0, 1.0, 2.0, -1.0, 0.5], 15), PROB))
      for f in ("logpmf", "pmf", "cdf")),
    ("bernoulli.ppf", (UNIT, PROB)),
    *((f"binom.{f}", (K, 8.0, PROB)) for f in ("logpmf", "pmf")),
    *((f"betabinom.{f}", (K, 8.0, POS, POS[::-1])) for f in ("logpmf", "pmf")),
    *((f"nbinom.{f}", (K, POS, PROB)) for f in ("logpmf", "pmf")),
    *((f"geom.{f}", (K, PROB)) for f in ("logpmf", "pmf")),
    *((f"poisson.{f}", (K, POS)) for f in ("logpmf", "pmf")),
    ("poisson.entropy", (np.array([0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 99.0, 100.0, 1e3]),)),
]
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]


def _fn(lib, name):
    module, fn = name.split(".")
    return getattr(getattr(lib.scipy.stats, module), fn)


def _inputs(args, dtype):
    return tuple(np.asarray(a, dtype) for a in args)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_distributions_match_jax(dtype):
    for i, (name, args) in enumerate(CASES):
        inputs = _inputs(args, dtype)
        ours = _fn(pto, name)(*inputs)
        (theirs,) = expected(f"stats/{i}-{name}/{dtype}", inputs)
        r = 2e-5 if dtype == "float32" else 1e-11
        if name.startswith("betabinom") and dtype == "float64":
            r = 1e-6  # JAX's betaln is off by up to 3e-7 (see test_special)
        if name in ("norm.ppf", "norm.isf"):
            # JAX returns the default float dtype (float64 here, as x64 is on for the tests;
            # float32 with x64 off); ours keeps the input dtype
            assert ours.dtype == np.dtype(dtype)
            theirs = theirs.astype(dtype)
        try:
            assert_close(ours, theirs, rtol=r, atol=r)
        except AssertionError as e:
            raise AssertionError(f"{name}{tuple(np.shape(a) for a in args)}: {e}") from None


ALPHA = np.array([0.5, 2.0, 3.0])
MULTIVARIATE = (RNG.dirichlet(ALPHA, size=4).T,        # (3, 4): components first
                np.array([[0.5, 0.5, 0.5, 0.2], [0.5, 0.2, 0.5, 0.2], [0.1, 0.3, 0.0, 0.6]]),
                np.array([[2, 1, 0], [1, 1, 2], [3, 0, 0]]), np.array([0.2, 0.3, 0.5]),
                np.array([0.5, -1.0]), RNG.normal(size=(5, 2)))


def _multivariate(lib, x, off, counts, p, mean, points):
    s = lib.scipy.stats
    return [s.dirichlet.logpdf(x, ALPHA), s.dirichlet.pdf(x[:2], ALPHA),
            s.dirichlet.logpdf(off, ALPHA),
            s.multinomial.logpmf(counts, 3, p), s.multinomial.pmf(counts[0], 3, p),
            s.multivariate_normal.logpdf(points, mean, 0.7),
            s.multivariate_normal.pdf(points[:, 0], 0.5, 0.7)]


def test_dirichlet_multinomial_and_multivariate_normal_match_jax():
    ours = _multivariate(pto, *MULTIVARIATE)
    assert_close(ours, expected("stats/multivariate", MULTIVARIATE), rtol=1e-12, atol=1e-12)


_COV_RNG = np.random.default_rng(3)   # its own stream: fixed inputs for the stored JAX values
_a = _COV_RNG.normal(size=(2, 3, 3))
COVARIANCES = (_COV_RNG.normal(size=(4, 2, 3)), np.array([0.5, -1.0, 0.2]),   # points, mean,
               _a @ np.swapaxes(_a, -1, -2) + 3 * np.eye(3))                  # covariances


def _multivariate_covariances(jax, points, mean, covs):
    """JAX's logpdf and its gradients in the points and the covariance, for one covariance
    matrix and for the stack; then pdf of one point (the order the test reads them in)."""
    mvn = jax.scipy.stats.multivariate_normal
    out = []
    for cov in (covs[0], covs):
        out.append(mvn.logpdf(points, mean, cov))
        out += [jax.grad(lambda *a: mvn.logpdf(*a).sum(), arg)(points, mean, cov)
                for arg in (0, 2)]
    return out + [mvn.pdf(points[0, 0], mean, covs[1])]


def test_multivariate_normal_with_covariance_matrices_matches_jax():
    """Covariance matrices (one, or a stack broadcast against the points) through their
    Cholesky factors: values and gradients in the points and the covariance, as JAX."""
    points, mean, covs = COVARIANCES
    want = iter(expected("stats/multivariate-covariances", COVARIANCES))
    for cov in (covs[0], covs):
        assert_close(stats.multivariate_normal.logpdf(points, mean, cov), next(want),
                     rtol=1e-10)
        for arg in (0, 2):
            got = pto.grad(lambda *a: stats.multivariate_normal.logpdf(*a).sum(), arg)(
                points, mean, cov)
            assert_close(got, next(want), rtol=1e-9, atol=1e-12)
    jitted = pto.jit(stats.multivariate_normal.pdf)(points[0, 0], mean, covs[1])
    assert_close(jitted, next(want), rtol=1e-10)


SEM_INPUT = RNG.normal(size=(4, 5))
SEM_CASES = [{}, {"axis": 1, "ddof": 0}, {"axis": None}, {"keepdims": True},
             {"nan_policy": "omit"}]


def _sem_input(kwargs):
    a = SEM_INPUT.copy()
    if kwargs.get("nan_policy") == "omit":
        a[1, 2] = np.nan
    return a


@pytest.mark.parametrize("index", range(len(SEM_CASES)))
def test_sem_matches_jax(index):
    a, kwargs = _sem_input(SEM_CASES[index]), SEM_CASES[index]
    assert_close(stats.sem(a, **kwargs), expected(f"stats/sem/{index}", [a])[0])


GRADIENTS = [("norm.logpdf", (X[:5], LOC, SCALE)), ("norm.logcdf", (X[:5] * 5, LOC, SCALE)),
             ("t.logpdf", (X[:5], POS[:5], LOC, SCALE)),
             ("beta.logpdf", (UNIT[:5], POS[:5], POS[5:10])),
             ("gamma.logpdf", (POS[:5], POS[5:10], 0.0, SCALE)),
             ("truncnorm.logpdf", (X[:5] / 4, -1.2, 2.0, LOC, SCALE)),
             ("poisson.logpmf", (K[:5], POS[:5])),
             ("binom.logpmf", (K[:5], 8.0, PROB[:5]))]


@pytest.mark.parametrize("name, args", GRADIENTS, ids=[g[0] for g in GRADIENTS])
def test_gradients_match_jax(name, args):
    argnums = tuple(range(1, len(args)))
    args = _inputs(args, "float64")
    ours = pto.grad(lambda *a: pnp.sum(_fn(pto, name)(*a)), argnums=argnums)(*args)
    theirs = tuple(expected(f"stats-grad/{name}", args))
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)


def test_under_jit_and_vmap():
    x = X.reshape(3, 5).astype(np.float32)
    fn = lambda x, s: stats.truncnorm.logcdf(x, -1.0, 2.0, 0.0, s)  # noqa: E731
    assert_close(pto.jit(fn)(x, np.float32(1.5)), fn(x, np.float32(1.5)))
    assert_close(pto.vmap(fn, in_axes=(0, None))(x, np.float32(1.5)), fn(x, np.float32(1.5)))


def test_bad_arguments():
    with pytest.raises(ShapeError, match="alpha"):
        stats.dirichlet.logpdf(np.ones((3,)) / 3, np.ones((3, 1)))
    with pytest.raises(ShapeError, match="entries"):
        stats.dirichlet.logpdf(np.ones((5,)) / 5, np.ones(3))
    with pytest.raises(DtypeError, match="integers"):
        stats.multinomial.logpmf(np.array([1.0, 2.0]), 3, np.array([0.5, 0.5]))
    with pytest.raises(ShapeError, match=r"\(2, 2\) matrices"):
        stats.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(3))
    with pytest.raises(ValueError, match="nan_policy"):
        stats.sem(np.ones(3), nan_policy="raise")


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py."""
    for dtype in ("float32", "float64"):
        for i, (name, args) in enumerate(CASES):
            yield (f"stats/{i}-{name}/{dtype}", _inputs(args, dtype),
                   jax.jit(lambda *a, name=name: [_fn(jax, name)(*a)]))
    yield "stats/multivariate", MULTIVARIATE, lambda *a: _multivariate(jax, *a)
    yield ("stats/multivariate-covariances", COVARIANCES,
           lambda *a: _multivariate_covariances(jax, *a))
    for i, kwargs in enumerate(SEM_CASES):
        yield (f"stats/sem/{i}", [_sem_input(kwargs)],
               lambda a, kwargs=kwargs: [jax.scipy.stats.sem(a, **kwargs)])
    for name, args in GRADIENTS:
        yield (f"stats-grad/{name}", _inputs(args, "float64"), jax.jit(jax.grad(
            lambda *a, name=name: _fn(jax, name)(*a).sum(), argnums=tuple(range(1, len(args))))))


def test_distribution_functions_match_jax_names(jax):
    not_here = {"beta": {"cdf", "logcdf", "sf", "logsf"}, "gamma": {"cdf", "logcdf", "sf", "logsf"},
                "chi2": {"cdf", "logcdf", "sf", "logsf"}, "gennorm": {"cdf"},
                "poisson": {"cdf"}}
    modules = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
               "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
               "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
               "truncnorm", "uniform", "wrapcauchy"]
    for m in modules:
        theirs = {n for n in dir(getattr(jax.scipy.stats, m)) if not n.startswith("_")
                  and callable(getattr(getattr(jax.scipy.stats, m), n))}
        ours = {n for n in dir(getattr(stats, m)) if not n.startswith("_")}
        assert theirs - not_here.get(m, set()) <= ours, (m, theirs - ours)
