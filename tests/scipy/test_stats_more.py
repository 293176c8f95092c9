"""``vonmises``, ``mode``, ``rankdata`` and ``gaussian_kde`` against ``jax.scipy.stats`` on the
same inputs: values, dtypes and weak types, gradients, ``jit``/``vmap``, pytree behaviour
and errors."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close
from jax_golden import expected

pytestmark = pytest.mark.usefixtures("ptojax_x64")   # JAX runs with x64: the same defaults

stats = pto.scipy.stats


VONMISES = [np.linspace(-4, 4, 7).astype(np.float32),                          # x, kappa
            np.array([0.0, -1.0, 0.1, 1.0, 10.0, 100.0, 1000.0], np.float32)]


def _jax_vonmises(jax, x, kappa):
    jst = jax.scipy.stats
    return [jst.vonmises.logpdf(x, kappa), jst.vonmises.pdf(x, kappa),
            *jax.vmap(jax.grad(jst.vonmises.logpdf, argnums=(0, 1)))(x[2:], kappa[2:])]


def test_vonmises_matches_jax(jax):
    """JAX's values stored by jax_golden.py; its types of Python scalars traced."""
    import jax.scipy.stats as jst
    x, kappa = VONMISES
    want = expected("stats-more/vonmises", VONMISES)
    for k, fn in enumerate(("logpdf", "pdf")):
        got = getattr(stats.vonmises, fn)(pnp.asarray(x), pnp.asarray(kappa))
        assert_close(got, want[k], rtol=2e-6, atol=1e-7)
        scalar = getattr(stats.vonmises, fn)(0.5, 2.0)
        traced = jax.eval_shape(lambda: getattr(jst.vonmises, fn)(0.5, 2.0))
        assert (scalar.dtype, scalar.aval.weak_type) == (traced.dtype, traced.weak_type)
    got = pto.vmap(pto.grad(stats.vonmises.logpdf, argnums=(0, 1)))(pnp.asarray(x[2:]),
                                                                    pnp.asarray(kappa[2:]))
    assert_close(got, tuple(want[2:]), rtol=1e-5, atol=1e-6)


SAMPLES = [np.array([[1, 2, 2, 0], [3, 3, 1, 1], [0, 0, 0, 2], [3, 1, 2, 2], [1, 0, 3, 3]]),
           np.array([[[1.0, 2.0, 2.0], [np.nan, 1.0, np.nan]], [[0.5, 0.5, 3.0], [2.0, 2.0, 1.0]]],
                    np.float32),
           np.array([1.0, np.nan, np.nan, 2.0, 2.0, -1.0], np.float32)]
METHODS = ("average", "min", "max", "dense", "ordinal")
# (sample, method, axis) and (sample, axis, keepdims): a few of each (JAX compiles each)
RANK_CASES = [(0, m, None) for m in METHODS] + [(2, "average", None), (1, "min", 0),
                                                (1, "average", -1), (0, "dense", -1)]
MODE_CASES = [(0, 0, False), (0, -1, True), (0, None, True), (1, -1, False), (1, None, False),
              (2, 0, False)]


def _jax_mode_and_rankdata(jax, *samples):
    jst = jax.scipy.stats
    return ([jst.rankdata(samples[i], m, axis=axis) for i, m, axis in RANK_CASES] +
            [leaf for i, axis, keepdims in MODE_CASES
             for leaf in jst.mode(samples[i], axis=axis, keepdims=keepdims)])


def test_mode_and_rankdata_match_jax():
    """Against JAX's values stored by jax_golden.py (one JAX program for all the cases)."""
    want = expected("stats-more/mode-rankdata", SAMPLES)
    want_ranks, want_modes = want[:len(RANK_CASES)], want[len(RANK_CASES):]
    assert len(want_modes) == 2 * len(MODE_CASES)
    for (i, method, axis), want in zip(RANK_CASES, want_ranks):
        assert_close(stats.rankdata(pnp.asarray(SAMPLES[i]), method, axis=axis), want)
    for k, (i, axis, keepdims) in enumerate(MODE_CASES):
        got = stats.mode(pnp.asarray(SAMPLES[i]), axis=axis, keepdims=keepdims)
        assert type(got).__name__ == "ModeResult" and got._fields == ("mode", "count")
        assert_close(tuple(got), tuple(want_modes[2 * k:2 * k + 2]))


def test_mode_and_rankdata_edges(jax):
    import jax.scipy.stats as jst
    for got, want in [(stats.mode(pnp.zeros((0, 3)), axis=0), jst.mode(np.zeros((0, 3)), 0)),
                      (stats.mode(3.0), jst.mode(3.0)),
                      (stats.rankdata(3.0), jst.rankdata(3.0))]:
        for g, w in zip(pto.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert (g.dtype, g.aval.weak_type) == (w.dtype, w.aval.weak_type)
            assert_close(g, np.asarray(w))
    rows = pnp.array([[1, 2, 2], [3, 1, 1]])
    assert_close(pto.vmap(stats.rankdata)(rows), np.array([[1, 2.5, 2.5], [3, 1.5, 1.5]]))
    assert_close(pto.jit(lambda v: stats.mode(v, axis=1))(rows).mode, np.array([2, 1]))
    with pytest.raises(ValueError, match="unknown method"):
        stats.rankdata(rows, "middle")
    with pytest.raises(ValueError, match="nan_policy"):
        stats.mode(rows, nan_policy="skip")
    with pytest.raises(NotImplementedError, match="omit"):
        stats.rankdata(rows, nan_policy="omit")
    with pytest.raises(TypeError):
        stats.mode([1, 2, 2])


KDE_CASES = [(1, "silverman", True), (1, 0.5, False), (2, lambda kde: kde.neff ** -0.3, True)]


def _kde_inputs(d, weighted):
    rng = np.random.default_rng(d)
    data = rng.normal(size=(d, 15)).astype(np.float32)
    weights = rng.uniform(0.5, 1.0, 15).astype(np.float32) if weighted else None
    return data, weights, rng.normal(size=(d, 4)).astype(np.float32)


def _kde_results(module, random, d, bw_method, data, weights, points):
    kde = module.gaussian_kde(data, bw_method, weights)
    other = module.gaussian_kde(data[:, ::2])
    mean, cov = np.full(d, 0.3, np.float32), np.eye(d, dtype=np.float32)
    out = dict(fields=[getattr(kde, f) for f in ("neff", "dataset", "weights", "covariance",
                                                  "inv_cov")],
               evaluate=kde.evaluate(points), pdf=kde.pdf(points), call=kde(points),
               logpdf=kde.logpdf(points), integrate_gaussian=kde.integrate_gaussian(mean, cov),
               integrate_kde=kde.integrate_kde(other),
               resample=kde.resample(random.PRNGKey(3), (5,)))
    if d == 1:
        out["integrate_box_1d"] = kde.integrate_box_1d(-0.5, 1.0)
    return out


def _kde_digest_inputs(args):
    """The case's arrays (weights only where there are weights)."""
    return [a for a in args if a is not None]


def test_gaussian_kde_matches_jax():
    """Against JAX's values stored by jax_golden.py, in the order of the results' names."""
    for i, (d, bw_method, weighted) in enumerate(KDE_CASES):
        args = _kde_inputs(d, weighted)
        want = expected(f"stats-more/kde/{i}", _kde_digest_inputs(args))
        got = _kde_results(stats, pto.random, d, bw_method,
                           *(None if a is None else pnp.asarray(a) for a in args))
        assert_close([got[key] for key in sorted(got)], want, rtol=2e-6, atol=1e-6)
        kde = stats.gaussian_kde(pnp.asarray(args[0]))
        assert (kde.d, kde.n) == (d, 15)


def jax_reference_tables(jax):
    """(key, inputs, fn computing JAX's outputs) for jax_golden.py."""
    import jax.scipy.stats as jst
    yield "stats-more/vonmises", VONMISES, jax.jit(lambda *a: _jax_vonmises(jax, *a))
    yield "stats-more/mode-rankdata", SAMPLES, jax.jit(
        lambda *a: _jax_mode_and_rankdata(jax, *a))
    for i, (d, bw_method, weighted) in enumerate(KDE_CASES):
        args = _kde_inputs(d, weighted)

        def kde(*_, d=d, bw_method=bw_method, args=args):
            out = jax.jit(lambda a: _kde_results(jst, jax.random, d, bw_method, *a))(args)
            return jax.tree_util.tree_leaves([out[key] for key in sorted(out)])
        yield f"stats-more/kde/{i}", _kde_digest_inputs(args), kde


def test_gaussian_kde_is_a_pytree_and_differentiable(jax):
    import jax.scipy.stats as jst
    data = np.array([0.0, 1.0, 3.0], np.float32)
    kde = stats.gaussian_kde(pnp.asarray(data))
    leaves, treedef = pto.tree_util.tree_flatten(kde)
    assert len(leaves) == 5
    rebuilt = pto.tree_util.tree_unflatten(treedef, leaves)
    assert_close(rebuilt.evaluate(pnp.array([0.5])), kde.evaluate(pnp.array([0.5])))
    points = np.array([0.5, 2.0], np.float32)

    def derivatives(module, grad, data, points):
        kde = module.gaussian_kde(data)
        return (kde.logpdf(points), grad(lambda x: kde.logpdf(x)[0])(points[0]),
                grad(lambda v: module.gaussian_kde(v).logpdf(points[:1])[0])(data))
    want = jax.jit(lambda *a: derivatives(jst, jax.grad, *a))(data, points)
    got = pto.jit(lambda *a: derivatives(stats, pto.grad, *a))(pnp.asarray(data),
                                                              pnp.asarray(points))
    assert_close(got, tuple(np.asarray(w) for w in want), rtol=1e-5, atol=1e-6)
    assert_close(pto.jit(lambda k, x: k.logpdf(x))(kde, pnp.asarray(points)), got[0])
    with pytest.raises(Exception):
        kde.neff = 1.0   # frozen, as JAX's dataclass


def test_gaussian_kde_errors():
    with pytest.raises(ValueError, match="multiple elements"):
        stats.gaussian_kde(pnp.array([1.0]))
    with pytest.raises(ValueError, match="bw_method"):
        stats.gaussian_kde(pnp.arange(3.0), bw_method="x")
    with pytest.raises(ValueError, match="length n"):
        stats.gaussian_kde(pnp.arange(3.0), weights=pnp.ones(2))
    kde = stats.gaussian_kde(pnp.ones((2, 3)) + pnp.eye(2, 3))
    with pytest.raises(ValueError, match="dimension 3, dataset has dimension 2"):
        kde.evaluate(pnp.ones((3, 2)))
    with pytest.raises(ValueError, match="1D"):
        kde.integrate_box_1d(0.0, 1.0)
    with pytest.raises(NotImplementedError):
        kde.integrate_box(pnp.zeros(2), pnp.ones(2))
    with pytest.raises(NotImplementedError):
        kde.set_bandwidth("scott")
    with pytest.raises(NotImplementedError, match="complex"):
        stats.gaussian_kde(pnp.ones(3, pnp.complex64))
