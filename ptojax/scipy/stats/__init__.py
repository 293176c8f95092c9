"""``pto.scipy.stats``: JAX's ``jax.scipy.stats`` distributions, one module each (``norm``,
``beta``, ...), with the functions JAX has for them, written with ``pnp`` and
``pto.scipy.special``.

Not here (yet): the functions that need the incomplete gamma/beta or Bessel functions
(``beta``/``gamma``/``chi2`` ``cdf``, ``logcdf``, ``sf``, ``logsf``; ``gennorm.cdf``;
``poisson.cdf``), ``multivariate_normal`` with a covariance matrix (needs a Cholesky
factorization), ``gaussian_kde``.
"""
from ptojax.scipy.stats import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet,
                                expon, gamma, gennorm, geom, gumbel_l, gumbel_r, laplace,
                                logistic, multinomial, multivariate_normal, nbinom, norm,
                                pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from ptojax.scipy.stats.ranks import mode, rankdata
from ptojax.scipy.stats.summary import sem
from ptojax.public import dir_function

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
           "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson",
           "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]
__dir__ = dir_function(__all__)
