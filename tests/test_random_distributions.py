"""The distributions of ``pto.random`` built from basic draws (``random/distributions.py``)
and the counting ones (``random/discrete.py``) against ``jax.random`` on the same key: equal
up to last-bit differences for those built on uniform/normal draws, and (the loops drawing
JAX's uniforms) poisson/binomial/multinomial. Those built on ``gamma`` are compared with JAX's
draws in test_random_gamma.py, and here by their moments."""
import hashlib
import math
import pathlib

import numpy as np
import pytest

import ptojax as pto
from ptojax import random as pr
from ptojax.errors import DtypeError, ShapeError
from helpers import assert_close

SEED = 1701
F32 = np.float32
# name -> arguments after the key (float32 parameters: ptojax keeps float64 arrays float64)
FORMULAS = {
    "exponential": ((50,),), "laplace": ((50,),), "logistic": ((50,),), "cauchy": ((50,),),
    "lognormal": (F32(0.5), (50,)), "rademacher": ((50,),), "maxwell": ((50,),),
    "double_sided_maxwell": (F32(1.0), F32(2.0), (50,)),
    "weibull_min": (F32(1.5), F32(2.0), (50,)), "pareto": (F32(3.0), (50,)),
    "rayleigh": (np.array([1.0, 2.0], F32), (25, 2)), "wald": (F32(1.5), (50,)),
    "triangular": (F32(0.0), F32(0.3), F32(1.0), (50,)),
    "geometric": (np.array([0.1, 0.5], F32), (25, 2)), "orthogonal": (3, (2,)),
}
COUNTS = {
    "poisson": (np.array([0.0, 0.5, 3.0, 9.0, 12.0, 50.0, 1000.0] * 20, F32),),
    "binomial": (np.array([5.0, 20.0, 100.0, 1000.0, -1.0, np.inf] * 20, F32),
                 np.array([0.1, 0.5, 0.9, 0.3, 0.5, 0.5] * 20, F32)),
    "multinomial": (np.array([10.0, 500.0], F32), np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]], F32)),
}


def _draws(random, key, table):
    return {name: getattr(random, name)(key, *args) for name, args in table.items()}


# JAX's draws, stored: compiling these JAX samplers takes ~40 s on a busy 2-core machine.
# Regenerate after changing SEED, FORMULAS or COUNTS (needs JAX):
#     cd tests && python test_random_distributions.py
STORE = pathlib.Path(__file__).with_name("random_distributions_jax.npz")


def _digest():
    return hashlib.sha256(repr((SEED, FORMULAS, COUNTS)).encode()).hexdigest()[:16]


def _write_store():
    import jax
    with jax.enable_x64(False):
        draws = _draws(jax.random, jax.random.PRNGKey(SEED), {**FORMULAS, **COUNTS})
    np.savez_compressed(STORE, digest=np.asarray(_digest()),
                        **{k: np.asarray(v) for k, v in draws.items()})


@pytest.fixture(scope="module")
def theirs():
    stored = np.load(STORE)
    assert str(stored["digest"]) == _digest(), f"{STORE.name} is stale: regenerate it"
    return {k: stored[k] for k in stored.files if k != "digest"}


def test_formula_samplers_match_jax(theirs):
    ours = _draws(pr, pr.key(SEED), FORMULAS)
    for name, x in ours.items():
        y = theirs[name]
        assert x.shape == y.shape and x.dtype == y.dtype, name
        assert_close(x, y, rtol=3e-6, atol=1e-6)


def test_counting_samplers_match_jax(theirs):
    """Their loops draw JAX's uniforms: an element may differ only where a last-bit
    difference of ``log`` flips an acceptance test."""
    ours = _draws(pr, pr.key(SEED), COUNTS)
    for name, x in ours.items():
        y = theirs[name]
        assert x.shape == y.shape and x.dtype == y.dtype, name
        same = (np.asarray(x) == y) | (np.isnan(x) & np.isnan(y))
        assert same.mean() >= 0.99, name
    assert np.isnan(ours["binomial"][4]) and np.isinf(ours["binomial"][5])
    assert (ours["poisson"][0] == 0) and (np.asarray(ours["multinomial"]).sum(-1) == [10, 500]).all()


def test_gamma_built_samplers_moments():
    """``t``, ``chisquare``, ``f``, ``generalized_normal`` and ``ball`` rest on ``gamma``:
    their moments (n = 20000; their draws against JAX's: test_random_gamma.py)."""
    keys = pr.split(pr.key(SEED), 5)
    n = 20000
    x = np.asarray(pr.chisquare(keys[0], 3.0, (n,)), np.float64)
    assert abs(x.mean() - 3) < 0.1 and abs(x.var() - 6) < 0.4
    x = np.asarray(pr.t(keys[1], 5.0, (n,)), np.float64)
    assert abs(x.mean()) < 0.04 and abs(x.var() - 5 / 3) < 0.15
    x = np.asarray(pr.f(keys[2], 4.0, 10.0, (n,)), np.float64)
    assert abs(x.mean() - 1.25) < 0.05
    p = 1.5
    x = np.asarray(pr.generalized_normal(keys[3], p, (n,)), np.float64)
    assert abs(x.mean()) < 0.03
    assert abs(x.var() - math.gamma(3 / p) / math.gamma(1 / p)) < 0.03
    x = np.asarray(pr.ball(keys[4], 3, shape=(n,)), np.float64)
    r = np.linalg.norm(x, axis=-1)
    assert x.shape == (n, 3) and r.max() <= 1 and abs((r ** 3).mean() - 0.5) < 0.02


def test_grads_and_vmap_jit():
    """Gradients in the parameters against their formulas on the same draws."""
    key = pr.key(SEED)
    n, u = pr.normal(key, (3,)), pr.uniform(key, (3,))
    e = pr.exponential(key, (3,))
    grads = {"lognormal": n * np.exp(1.5 * n), "rayleigh": np.sqrt(-2 * np.log(u)),
             "pareto": -e / 1.5 ** 2 * np.exp(e / 1.5)}
    for name, expected in grads.items():
        g = pto.grad(lambda s: getattr(pr, name)(key, s, (3,)).sum())(F32(1.5))
        assert_close(g, np.sum(expected), rtol=1e-5)
    keys = pr.split(pr.key(0), 3)
    batched = pto.jit(pto.vmap(lambda k: pr.laplace(k, (4,))))(keys)
    assert_close(batched, np.stack([pr.laplace(k, (4,)) for k in keys]))


def test_key_helpers_and_errors(jax):
    key = pr.key(SEED)
    assert pr.key_impl(key) == jax.random.key_impl(jax.random.PRNGKey(SEED)) == "threefry2x32"
    assert pr.clone(key) is key
    with pytest.raises(DtypeError, match="floating"):
        pr.exponential(key, (2,), "int32")
    with pytest.raises(DtypeError, match="integer"):
        pr.poisson(key, 2.0, (2,), "float32")
    with pytest.raises(ShapeError, match="broadcast"):
        pr.pareto(key, np.ones(3, F32), (2,))
    with pytest.raises(DtypeError, match="key"):
        pr.cauchy(np.zeros(3, np.uint32))
    assert pr.double_sided_maxwell(key, np.zeros(2, F32), 1.0).shape == (2, 2)   # as JAX
    assert pr.orthogonal(key, 2, m=4).shape == (2, 4)


if __name__ == "__main__":
    _write_store()
