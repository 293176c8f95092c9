"""``pto.random``: reproducible pseudo-random numbers from explicit keys, as ``jax.random``.

``keys.py`` holds the keys (typed ``key<fry>`` keys and raw ``PRNGKey`` words, Threefry-2x32),
``core.py`` the basic samplers (bits, uniform, normal, ...); ``gamma.py`` gamma, loggamma,
beta and dirichlet as JAX draws them; ``distributions.py`` the distributions JAX builds
from them by formula; ``discrete.py`` the counting distributions (poisson, binomial,
multinomial).
"""
from ptojax.random.core import (bernoulli, bits, categorical, choice, gumbel,
                                multivariate_normal, normal, permutation, randint,
                                truncated_normal, uniform)
from ptojax.random.gamma import beta, dirichlet, gamma, loggamma
from ptojax.random.keys import (PRNGKey, clone, fold_in, key, key_data, key_dtype, key_impl,
                                split,
                                wrap_key_data)
from ptojax.random.distributions import (ball, cauchy, chisquare, double_sided_maxwell,
                                         exponential, f, generalized_normal, geometric,
                                         laplace, logistic, lognormal, maxwell,
                                         orthogonal, pareto, rademacher, rayleigh, t,
                                         triangular, wald, weibull_min)
from ptojax.random.discrete import binomial, multinomial, poisson
from ptojax.public import dir_function as _dir_function, public_names as _public_names

__all__ = _public_names(globals())
__dir__ = _dir_function(__all__)
