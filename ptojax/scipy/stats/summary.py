"""Summary statistics: ``sem``."""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.numpy._axes import normalize_axis
from ptojax.scipy.special.normal import inexact


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean: ``std(a, ddof) / sqrt(n)`` along ``axis``.

    Args:
      a: real array.
      axis: an int, or None for all elements, default 0.
      ddof: delta degrees of freedom of the standard deviation, default 1.
      nan_policy: ``"propagate"`` (NaNs give NaN) or ``"omit"`` (NaNs are left out).
      keepdims: keep the reduced axis with size 1.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.stats.sem(pnp.array([1.0, 2.0, 3.0, 4.0]))
      Array(0.6454972, dtype=float32)
    """
    a = inexact("sem", a)
    if axis is not None:
        axis = normalize_axis("sem", axis, a.ndim)
    if nan_policy == "propagate":
        n = a.size if axis is None else a.shape[axis]
        std = pnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
        return pnp.divide(std, pnp.sqrt(pnp.asarray(n, a.dtype)))
    if nan_policy == "omit":
        present = ~pnp.isnan(a)
        count = pnp.sum(present, axis=axis, keepdims=keepdims).astype(a.dtype)
        std = pnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims, where=present)
        return pnp.divide(std, pnp.sqrt(count))
    raise ValueError(f"sem: nan_policy must be 'propagate' or 'omit', got {nan_policy!r}")
