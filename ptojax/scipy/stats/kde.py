"""``gaussian_kde``: a Gaussian kernel density estimate of (weighted) samples, as JAX's (a
registered pytree, so it passes through ``jit``/``vmap``/``grad``): the kernel covariance is
the weighted sample covariance times ``factor^2`` (Scott's ``neff^(-1/(d+4))``, Silverman's
``(neff (d+2) / 4)^(-1/(d+4))``, a scalar or a callable of the estimate);
``neff = 1 / sum(w^2)`` for weights normalized to sum 1."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ptojax import dtypes
from ptojax import numpy as pnp
from ptojax import random
from ptojax.batching.api import vmap
from ptojax.numpy._promote import asarray, promote_dtypes
from ptojax.scipy import linalg
from ptojax.scipy.special.logistic import logsumexp
from ptojax.scipy.special.normal import ndtr
from ptojax.tree_util import register_pytree_node_class


def _bandwidth_factor(kde, bw_method, neff, d):
    if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
        return pnp.power(neff, -1.0 / (d + 4))
    if isinstance(bw_method, str) and bw_method == "silverman":
        return pnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
    if pnp.isscalar(bw_method) and not isinstance(bw_method, str):
        return bw_method
    if callable(bw_method):
        return bw_method(kde)
    raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
    """A Gaussian kernel density estimate of ``dataset`` (shape ``(n,)`` or ``(d, n)``).

    Args:
      dataset: real array of samples, ``(n,)`` (one dimension) or ``(d, n)``.
      bw_method: ``"scott"`` (default, None), ``"silverman"``, a scalar factor, or a
        callable of the estimate giving the factor.
      weights: optional weights of the ``n`` samples (normalized to sum 1).

    ``integrate_box`` and ``set_bandwidth`` raise ``NotImplementedError``, as in JAX.

    Example:
      >>> kde = pto.scipy.stats.gaussian_kde(pnp.array([0.0, 1.0, 3.0]))
      >>> kde.evaluate(pnp.array([0.0, 2.0]))
      Array([0.19165564, 0.18421534], dtype=float32)
    """
    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = pnp.atleast_2d(asarray(dataset, op="gaussian_kde"))
        if pnp.iscomplexobj(dataset):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            weights = asarray(weights, op="gaussian_kde")
            dataset, weights = promote_dtypes("gaussian_kde", dataset, weights, kind="float")
            weights = pnp.atleast_1d(weights)
            weights = weights / pnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = promote_dtypes("gaussian_kde", dataset, kind="float")
            weights = pnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / pnp.sum(weights ** 2))
        factor = _bandwidth_factor(self, bw_method, neff, d)
        data_covariance = pnp.atleast_2d(pnp.cov(dataset, rowvar=True, bias=False,
                                                 aweights=weights))
        self._set("covariance", data_covariance * factor ** 2)
        self._set("inv_cov", pnp.linalg.inv(data_covariance) / factor ** 2)

    def _set(self, name, value):
        object.__setattr__(self, name, value)   # a frozen dataclass: set once, here
        return value

    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        kde = cls.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                               children):
            kde._set(name, value)
        return kde

    @property
    def d(self):
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """The number of samples."""
        return self.dataset.shape[1]

    def evaluate(self, points):
        """The density at ``points`` (``(d, m)``, or ``(m,)`` for one dimension)."""
        points = self._reshape_points(asarray(points, op="evaluate"))
        return _kernel_sum(False, self.dataset.T, self.weights, points.T, self.inv_cov)

    def __call__(self, points):
        return self.evaluate(points)

    def pdf(self, x):
        """The density at ``x`` (as ``evaluate``)."""
        return self.evaluate(x)

    def logpdf(self, x):
        """The log density at ``x``, by ``logsumexp`` over the kernels."""
        x = self._reshape_points(asarray(x, op="logpdf"))
        return _kernel_sum(True, self.dataset.T, self.weights, x.T, self.inv_cov)

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the Gaussian ``N(mean, cov)``."""
        mean = pnp.atleast_1d(pnp.squeeze(mean))
        cov = pnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (math.sqrt(2 * math.pi) ** self.d * pnp.prod(pnp.diag(chol[0])))
        return _convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low, high):
        """The probability of ``[low, high]`` (one dimension, scalar limits)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = pnp.squeeze(pnp.sqrt(self.covariance))
        low = pnp.squeeze((low - self.dataset) / sigma)
        high = pnp.squeeze((high - self.dataset) / sigma)
        return pnp.sum(self.weights * (ndtr(high) - ndtr(low)))

    def integrate_kde(self, other):
        """The integral of the product of this density and ``other``'s."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (math.sqrt(2 * math.pi) ** self.d * pnp.prod(pnp.diag(chol[0])))
        small, large = (self, other) if self.n < other.n else (other, self)
        per_sample = vmap(partial(_convolve, chol, norm, large.dataset, large.weights),
                          in_axes=1)(small.dataset)
        return pnp.sum(per_sample * small.weights)

    def resample(self, key, shape=()):
        """``shape`` samples from the density (shape ``(d, *shape)``): a sample index drawn by
        the weights plus kernel noise."""
        index_key, noise_key = random.split(key)
        index = random.choice(index_key, self.n, shape=shape, p=self.weights)
        noise = random.multivariate_normal(noise_key, pnp.zeros(self.d, self.covariance.dtype),
                                           self.covariance, shape=shape,
                                           dtype=self.dataset.dtype).T
        return self.dataset[:, index] + noise

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not implemented (as in JAX): use ``integrate_box_1d``."""
        raise NotImplementedError("only 1D box integrations are supported; use "
                                  "`integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not implemented (as in JAX): make a new ``gaussian_kde`` with ``bw_method``."""
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points):
        if dtypes.issubdtype(points.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = pnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return pnp.reshape(points, (self.d, 1))
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _convolve(chol, norm, target, weights, mean):
    """``norm * sum_j w_j exp(-(t_j - mean)' C^-1 (t_j - mean) / 2)`` (``C`` by ``chol``)."""
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    return norm * pnp.sum(pnp.exp(-0.5 * pnp.sum(diff * alpha, axis=0)) * weights)


def _kernel_sum(in_log, points, weights, xi, precision):
    """``sum_j w_j N(xi_i; points_j, precision^-1)`` for each row ``xi_i`` (its log with
    ``in_log``), in the whitened coordinates of ``precision``'s Cholesky factor."""
    points, weights, xi, precision = promote_dtypes("gaussian_kde", points, weights, xi,
                                                    precision, kind="float")
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points, xi = pnp.dot(points, whitening), pnp.dot(xi, whitening)
    log_norm = pnp.sum(pnp.log(pnp.diag(whitening))) - 0.5 * d * math.log(2 * math.pi)
    arg = log_norm - 0.5 * pnp.sum(pnp.square(points[None, :, :] - xi[:, None, :]), axis=-1)
    if in_log:
        return logsumexp(pnp.log(weights) + arg, axis=1)
    return pnp.sum(weights * pnp.exp(arg), axis=1)
