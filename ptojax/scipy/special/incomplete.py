"""The regularized incomplete gamma and beta functions: ``gammainc``, ``gammaincc`` and
``betainc``, JAX's ``lax.igamma``/``igammac``/``betainc`` on promoted floats (so their
gradients are those primitives')."""
from __future__ import annotations

from ptojax import dtypes, lax
from ptojax.scipy.special.normal import inexact


def gammainc(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``.

    Example:
      >>> pto.scipy.special.gammainc(2.0, pnp.array([0.5, 1.0, 4.0]))
      Array([0.09020401, 0.26424113, 0.9084218 ], dtype=float32)
    """
    return lax.igamma(*inexact("gammainc", a, x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``.

    Example:
      >>> pto.scipy.special.gammaincc(2.0, pnp.array([0.5, 1.0, 4.0]))
      Array([0.909796  , 0.7357589 , 0.09157819], dtype=float32)
    """
    return lax.igammac(*inexact("gammaincc", a, x))


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)``.

    Example:
      >>> pto.scipy.special.betainc(2.0, 3.0, pnp.array([0.25, 0.5]))
      Array([0.26171875, 0.6875    ], dtype=float32)
    """
    a, b, x = inexact("betainc", a, b, x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("betainc does not support complex-valued inputs.")
    return lax.betainc(a, b, x)
