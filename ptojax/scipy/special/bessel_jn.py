"""``bessel_jn``: the Bessel functions of the first kind ``J_0 .. J_v`` of real argument, by
Miller's backward recurrence as JAX (Zhang and Jin, *Computation of Special Functions*,
1996): ``F_k = 2 (k+1) F_{k+1} / z - F_{k+2}`` from ``k = n_iter`` down to 0, starting at
``F = (0, 1e-16)``, normalized by ``J_0 + 2 J_2 + 2 J_4 + ... = 1``. A ``lax.scan``, so it
traces under ``jit``, ``grad`` and ``vmap``."""
from __future__ import annotations

import operator

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import promote_dtypes
from ptojax.scipy.special.normal import strong


def _concrete(value, convert, what):
    try:
        return convert(value)
    except TypeError as error:
        raise TypeError(f"bessel_jn: {what} must be a concrete Python int (a static "
                        f"argument), got {value!r}: {error}") from None


def bessel_jn(z, *, v, n_iter=50):
    """The Bessel functions of the first kind of orders ``0 .. v`` at real ``z``.

    Args:
      z: real array.
      v: the highest order (a Python int).
      n_iter: the number of backward recurrence steps (the smallest ``n`` with ``0.5 log10(6.28
        + n) - n log10(1.36 + |z| / n) > 20`` is enough), default 50.

    Returns:
      An array of shape ``(v + 1, *z.shape)`` in the (floating) dtype of ``z``. As JAX's,
      the recurrence overflows in float32 for small ``|z|`` (about ``|z| < 3`` with the
      default ``n_iter``), giving NaN: use float64 or a smaller ``n_iter`` there.

    Example:
      >>> pto.scipy.special.bessel_jn(pnp.array([5.0, 10.0]), v=1)
      Array([[-0.17759673, -0.24593572],
             [-0.3275791 ,  0.04347268]], dtype=float32)
    """
    (z,) = promote_dtypes("bessel_jn", pnp.asarray(z), kind="float")
    if pnp.iscomplexobj(z):
        raise ValueError("complex input not supported.")
    v = _concrete(v, operator.index, "the order v")
    n_iter = _concrete(n_iter, int, "n_iter")

    def step(carry, k):
        f0, f1, even_sum = carry
        f = 2.0 * (k + 1.0) * f1 / z - f0
        even_sum = pnp.where(k % 2 == 0, even_sum + 2.0 * f, even_sum)
        return (f1, f, even_sum), f

    zero = pnp.zeros_like(z)
    init = (zero, pnp.full_like(z, 1e-16), zero)
    (_, _, even_sum), values = lax.scan(step, init, pnp.arange(n_iter + 1, dtype=z.dtype),
                                        reverse=True)
    return strong(values[:v + 1] / (even_sum - values[0]))

