"""``pto.random``: reproducible pseudo-random numbers from explicit keys, as ``jax.random``.

``core.py`` holds the keys (Threefry-2x32, JAX's raw ``PRNGKey`` layout) and the basic
samplers (bits, uniform, normal, gamma, ...); ``distributions.py`` the distributions JAX builds
from them by formula; ``discrete.py`` the counting distributions (poisson, binomial,
multinomial).
"""
from ptojax.random.core import (PRNGKey, bernoulli, beta, bits, categorical, choice, dirichlet,
                                fold_in, gamma, gumbel, key, key_data, loggamma,
                                multivariate_normal, normal, permutation, randint, split,
                                truncated_normal, uniform, wrap_key_data)
from ptojax.random.distributions import (ball, cauchy, chisquare, clone, double_sided_maxwell,
                                         exponential, f, generalized_normal, geometric,
                                         key_impl, laplace, logistic, lognormal, maxwell,
                                         orthogonal, pareto, rademacher, rayleigh, t,
                                         triangular, wald, weibull_min)
from ptojax.random.discrete import binomial, multinomial, poisson
from ptojax.public import dir_function as _dir_function, public_names as _public_names

__all__ = _public_names(globals())
__dir__ = _dir_function(__all__)
