"""The logistic function and its inverse, the Box-Cox transforms, and the softmax family
(shared with ``pto.nn``)."""
from __future__ import annotations

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.nn import softmax_family
from ptojax.scipy.special.normal import inexact

logsumexp = softmax_family.logsumexp


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``.

    Args:
      x: real array.

    Returns:
      An array of floats in ``[0, 1]``.

    Example:
      >>> pto.scipy.special.expit(pnp.array([0.0]))
      Array([0.5], dtype=float32)
    """
    return lax.logistic(inexact("expit", x))


@custom_jvp
def _logit(x):
    return pnp.log(pnp.divide(x, pnp.subtract(1.0, x)))


_logit.defjvps(lambda t, out, x: pnp.divide(t, pnp.multiply(x, pnp.subtract(1.0, x))))


def logit(x):
    """The inverse of ``expit``: ``log(x / (1 - x))``.

    Args:
      x: real array in ``[0, 1]``.

    Returns:
      An array of floats; the derivative is ``1 / (x (1 - x))``.

    Example:
      >>> pto.scipy.special.logit(pnp.array([0.5, 0.75]))
      Array([0.       , 1.0986123], dtype=float32)
    """
    return _logit(inexact("logit", x))


def _boxcox(name, x, lmbda, log_fn):
    x, lmbda = pnp.broadcast_arrays(*inexact(name, x, lmbda))
    zero = pnp.equal(lmbda, 0)
    safe = pnp.where(zero, pnp.ones_like(lmbda), lmbda)
    log_x = log_fn(x)
    return pnp.where(zero, log_x, pnp.divide(pnp.expm1(pnp.multiply(safe, log_x)), safe))


def boxcox(x, lmbda):
    """The Box-Cox transform ``(x^lmbda - 1) / lmbda`` (``log x`` for ``lmbda == 0``).

    Args:
      x: positive real array.
      lmbda: real array broadcasting against ``x``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.boxcox(pnp.array([4.0]), pnp.array([0.5]))
      Array([2.], dtype=float32)
    """
    return _boxcox("boxcox", x, lmbda, pnp.log)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of ``1 + x``: ``((1 + x)^lmbda - 1) / lmbda`` (``log1p(x)``
    for ``lmbda == 0``).

    Args:
      x: real array greater than -1.
      lmbda: real array broadcasting against ``x``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.boxcox1p(pnp.array([3.0]), pnp.array([0.5]))
      Array([2.], dtype=float32)
    """
    return _boxcox("boxcox1p", x, lmbda, pnp.log1p)


def softmax(x, /, *, axis=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default, as SciPy).

    Args:
      x: real array.
      axis: an int, a tuple of ints or None (all axes).

    Returns:
      An array of ``x``'s shape.

    Example:
      >>> pto.scipy.special.softmax(pnp.array([0.0, 0.0]))
      Array([0.5, 0.5], dtype=float32)
    """
    return softmax_family.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (all axes by default, as SciPy).

    Args:
      x: real array.
      axis: an int, a tuple of ints or None (all axes).

    Returns:
      An array of ``x``'s shape.

    Example:
      >>> pto.scipy.special.log_softmax(pnp.array([0.0, 0.0]))
      Array([-0.6931472, -0.6931472], dtype=float32)
    """
    return softmax_family.log_softmax(x, axis=axis)
