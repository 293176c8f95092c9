"""Bernoulli numbers, exactly (as fractions), and the series coefficients built from them:
``bernoulli(n)``, Stirling's series for ``lgamma`` and the Euler-Maclaurin tail of ``zeta``."""
from __future__ import annotations

import operator

import numpy as np

from ptojax import dtypes
from ptojax import numpy as pnp
from ptojax.errors import ConcretizationError
from ptojax.ops.zeta import bernoulli_numbers
from ptojax.source_info import user_frame


def stirling_coefficients(terms: int) -> list:
    """``B_2k / (2k (2k - 1))`` for k = 1..terms: ``lgamma(x) - Stirling(x)`` is
    ``sum_k c_k / x^(2k - 1)``."""
    b = bernoulli_numbers(2 * terms)
    return [float(b[2 * k] / (2 * k * (2 * k - 1))) for k in range(1, terms + 1)]


def bernoulli(n):
    """The first ``n + 1`` Bernoulli numbers ``B_0 .. B_n`` (with ``B_1 = -1/2``), computed
    exactly and rounded to float32.

    Args:
      n: a non-negative static Python int.

    Returns:
      A float32 array of shape ``(n + 1,)``.

    Example:
      >>> pto.scipy.special.bernoulli(4)
      Array([ 1.        , -0.5       ,  0.16666667,  0.        , -0.03333334],      dtype=float32)
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise ConcretizationError(f"bernoulli: n must be a static Python int, got {n!r}",
                                  user_frame()) from None
    if n < 0:
        raise ValueError(f"bernoulli: n must be a non-negative integer, got {n}")
    values = np.array([float(b) for b in bernoulli_numbers(n)], dtypes.float32)
    return pnp.asarray(values)
