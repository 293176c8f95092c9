"""``pto.scipy.stats``: JAX's ``jax.scipy.stats`` distributions, one module each (``norm``,
``beta``, ...), with the functions JAX has for them, written with ``pnp`` and
``pto.scipy.special``; also ``gaussian_kde``, ``mode``, ``rankdata`` and ``sem``.
"""
from ptojax.scipy.stats import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet,
                                expon, gamma, gennorm, geom, gumbel_l, gumbel_r, laplace,
                                logistic, multinomial, multivariate_normal, nbinom, norm,
                                pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from ptojax.scipy.stats.kde import gaussian_kde
from ptojax.scipy.stats.ranks import mode, rankdata
from ptojax.scipy.stats.summary import sem
from ptojax.public import dir_function

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
           "logistic", "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson",
           "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]
__dir__ = dir_function(__all__)
