"""The examples in the docstrings of the public API run and print what they show."""
import doctest
import functools
import importlib

import numpy as np

import pytest

import ptojax as pto
import ptojax.numpy as pnp
import ptojax.scipy  # noqa: F401  (pto.scipy in the examples)

MODULES = ["ptojax.sharding", "ptojax.shard.explicit", "ptojax.config", "ptojax.test_util", "ptojax.shard.runtime.arrays", "ptojax.debug",
           "ptojax.nn.activations", "ptojax.nn.softmax_family", "ptojax.nn.normalization",
           "ptojax.nn.encoding", "ptojax.nn.attention", "ptojax.nn.initializers",
           "ptojax.scipy.special.normal", "ptojax.scipy.special.gamma_family",
           "ptojax.scipy.special.zeta", "ptojax.scipy.special.entropy",
           "ptojax.scipy.special.logistic", "ptojax.scipy.special.bernoulli",
           *(f"ptojax.scipy.stats.{name}" for name in (
               "norm", "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet",
               "expon", "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
               "logistic", "multinomial", "multivariate_normal", "nbinom", "pareto", "poisson",
               "t", "truncnorm", "uniform", "wrapcauchy", "summary"))]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"pto": pto, "pnp": pnp, "np": np,
                                                       "functools": functools}, report=False,
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, \
        f"{result.failed} of {result.attempted} examples in {name} failed (run doctest -v)"
