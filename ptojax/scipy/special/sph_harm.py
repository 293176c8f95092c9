"""The spherical harmonics ``sph_harm_y(n, m, theta, phi) = N_n^|m| P_n^|m|(cos theta) e^(i |m|
phi)`` (conjugated and times ``(-1)^m`` for ``m < 0``), ``N`` normalizing them on the sphere,
as JAX's: the normalized associated Legendre functions ``P[m, l]`` for all ``m, l <= n_max`` by
the standard recurrences (Condon-Shortley phase): ``P[0, 0] = 1 / (2 sqrt(pi))``, the diagonal
``P[m, m] = prod_{a <= m} (-sqrt(1 + 1/(2a))) sin(theta)^m / (2 sqrt(pi))``, the next one
``P[m, m+1] = sqrt(2m + 3) cos(theta) P[m, m]`` and ``P[m, l] = d0 cos(theta) P[m, l-1] - d1
P[m, l-2]`` with ``d0 = sqrt((4l^2 - 1) / (l^2 - m^2))``, ``d1 = sqrt((2l + 1)((l-1)^2 - m^2) /
((2l - 3)(l^2 - m^2)))``. Composed of ``pnp`` operations, so ``jit``/``grad``/``vmap`` trace
through it (``n_max`` must be static)."""
from __future__ import annotations

import math
import operator

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray


def _recurrence_coefficients(l_max, dtype):
    """``d0[m, l]``, ``d1[m, l]`` (NumPy, in ``dtype``), zero where the recurrence is unused."""
    m, l = np.meshgrid(np.arange(l_max + 1, dtype=dtype), np.arange(l_max + 1, dtype=dtype),
                       indexing="ij")
    used = l >= m + 2
    l2, m2 = l * l, m * m
    denominator = np.where(used, l2 - m2, 1)
    d0 = np.sqrt(np.where(used, 4 * l2 - 1, 1) / denominator)
    d1 = np.sqrt(np.abs((2 * l + 1) * ((l - 1) * (l - 1) - m2)) /
                 np.where(used, (2 * l - 3) * denominator, 1))
    return np.where(used, d0, 0).astype(dtype), np.where(used, d1, 0).astype(dtype)


def normalized_legendre(l_max, x):
    """``P[l, m, k]``: the normalized associated Legendre function of degree ``l`` and order
    ``m`` at ``x[k]`` (1-D ``x``), zero for ``m > l``."""
    dtype = np.dtype(x.dtype)
    first = 0.5 / math.sqrt(math.pi)
    a = np.arange(1, l_max + 1, dtype=dtype)
    f_a = np.cumprod(-np.sqrt(1 + 0.5 / a)).astype(dtype)
    sine = pnp.sqrt(1 - x * x)
    powers = [pnp.ones_like(x)]
    for _ in range(l_max):
        powers.append(powers[-1] * sine)
    diagonal = [pnp.full_like(x, first)] + [first * (f_a[i] * powers[i + 1])
                                            for i in range(l_max)]
    d0, d1 = _recurrence_coefficients(l_max, dtype)
    zeros = pnp.zeros((l_max + 1,) + x.shape, x.dtype)
    m_index = np.arange(l_max + 1)[:, None]
    columns = []
    for l in range(l_max + 1):
        column = zeros
        if l >= 2:
            column = (d0[:, l][:, None] * (columns[l - 1] * x)
                      - d1[:, l][:, None] * columns[l - 2])
            column = pnp.where(m_index <= l - 2, column, 0)
        if l >= 1:
            below = math.sqrt(2.0 * (l - 1) + 3.0) * x * diagonal[l - 1]
            column = column.at[l - 1].set(below.astype(x.dtype))
        columns.append(column.at[l].set(diagonal[l]))
    return pnp.stack(columns)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonics of degree ``n`` and order ``m`` at colatitude ``theta`` and
    longitude ``phi`` (see the module).

    Args:
      n: integer degrees ``>= 0`` (a 1-D array; values above ``n_max`` are clipped to it).
      m: integer orders, ``|m| <= n`` (1-D).
      theta: colatitudes in ``[0, pi]`` (1-D, or a scalar).
      phi: longitudes in ``[0, 2 pi]``.
      diff_n: not supported (must be None), as in JAX.
      n_max: the largest degree, a static int (default ``max(n)``, which needs a concrete
        ``n``), as JAX's extra argument.

    Returns:
      A complex 1-D array, one harmonic per ``(n[k], m[k], theta[k], phi[k])``.

    Example:
      >>> pto.scipy.special.sph_harm_y(pnp.array([1]), pnp.array([1]), pnp.array([0.5]),
      ...                              pnp.array([0.0]))
      Array([-0.16563873-0.j], dtype=complex64)
    """
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to ptojax.scipy.special.sph_harm_y is not supported.")
    if pnp.isscalar(theta):
        theta = pnp.array([theta])
    n, m, theta = (asarray(v, op="sph_harm_y") for v in (n, m, theta))
    if n_max is None:
        try:
            n_max = np.max(np.asarray(n))
        except Exception as error:
            raise TypeError("sph_harm_y: n_max must be given (a static int) when n is traced "
                            "(under jit, grad or vmap)") from error
    try:
        n_max = operator.index(int(n_max))
    except Exception as error:
        raise TypeError(f"sph_harm_y: n_max must be a concrete int, got {n_max!r}") from error
    cos_theta = pnp.cos(theta)
    legendre = normalized_legendre(n_max, cos_theta)
    order = pnp.abs(m)
    index = (pnp.clip(n, 0, n_max), pnp.clip(order, 0, n_max),
             pnp.clip(pnp.arange(n.shape[0]), 0, cos_theta.shape[0] - 1))
    value = legendre[index]
    angle = order * phi
    harmonic = lax.complex(value * pnp.cos(angle), value * pnp.sin(angle))
    return pnp.where(m < 0, (-1.0) ** order * pnp.conjugate(harmonic), harmonic)
