"""``x log y`` and the entropies built on it: ``xlogy``, ``xlog1py``, ``entr``, ``rel_entr``,
``kl_div``. Each is 0 where its ``x`` (or ``p``) is 0 and has a well-defined derivative
there (custom JVPs, as in JAX)."""
from __future__ import annotations

import numpy as np

from ptojax import numpy as pnp
from ptojax.autodiff.custom_derivatives import custom_jvp
from ptojax.scipy.special.normal import inexact


def _x_times(log_fn):
    """``x * log_fn(y)``, 0 where ``x == 0`` unless ``y`` is NaN."""
    def fn(x, y):
        keep = pnp.not_equal(x, 0) | pnp.isnan(y)
        return pnp.where(keep, pnp.multiply(x, log_fn(y)), pnp.zeros_like(x))
    return fn


_xlogy = custom_jvp(_x_times(pnp.log))
_xlogy.defjvps(lambda t, out, x, y: pnp.multiply(t, pnp.log(y)),
               lambda t, out, x, y: pnp.multiply(t, pnp.divide(x, y)))
_xlog1py = custom_jvp(_x_times(pnp.log1p))
_xlog1py.defjvps(lambda t, out, x, y: pnp.multiply(t, pnp.log1p(y)),
                 lambda t, out, x, y: pnp.multiply(t, pnp.divide(x, pnp.add(1.0, y))))


def xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (NaN ``y`` still propagates).

    Args:
      x: real array.
      y: real array broadcasting against ``x``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.xlogy(pnp.array([0.0, 2.0]), pnp.array([0.0, 1.0]))
      Array([0., 0.], dtype=float32)
    """
    return _xlogy(*pnp.broadcast_arrays(*inexact("xlogy", x, y)))


def xlog1py(x, y):
    """``x * log1p(y)``, 0 where ``x == 0`` (NaN ``y`` still propagates).

    Args:
      x: real array.
      y: real array broadcasting against ``x``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.xlog1py(pnp.array([0.0, 2.0]), pnp.array([-1.0, 0.0]))
      Array([0., 0.], dtype=float32)
    """
    return _xlog1py(*pnp.broadcast_arrays(*inexact("xlog1py", x, y)))


_xlogx = custom_jvp(lambda x: _xlogy(x, x))
_xlogx.defjvps(lambda t, out, x: pnp.multiply(t, pnp.add(pnp.log(x), 1.0)))


def entr(x):
    """The elementwise entropy ``-x log x`` (0 at 0, ``-inf`` for ``x < 0``).

    Args:
      x: real array.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.entr(pnp.array([0.0, 0.5, -1.0]))
      Array([-0.       ,  0.3465736,       -inf], dtype=float32)
    """
    x = inexact("entr", x)
    return pnp.where(pnp.less(x, 0), -np.inf, pnp.negative(_xlogx(x)))


def rel_entr(p, q):
    """The relative entropy ``p log(p / q)`` for ``p, q > 0``; 0 for ``p == 0, q >= 0``;
    ``inf`` otherwise.

    Args:
      p: real array.
      q: real array broadcasting against ``p``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.rel_entr(pnp.array([0.5, 0.0]), pnp.array([0.25, 1.0]))
      Array([0.3465736, 0.       ], dtype=float32)
    """
    p, q = pnp.broadcast_arrays(*inexact("rel_entr", p, q))
    both_positive = pnp.greater(p, 0) & pnp.greater(q, 0)
    p_zero = pnp.equal(p, 0) & pnp.greater_equal(q, 0)
    safe_p, safe_q = pnp.where(both_positive, p, 1.0), pnp.where(both_positive, q, 1.0)
    value = pnp.subtract(_xlogx(safe_p), _xlogy(safe_p, safe_q))
    return pnp.where(both_positive, value, pnp.where(p_zero, 0.0, np.inf))


def kl_div(p, q):
    """The elementwise Kullback-Leibler divergence ``p log(p / q) - p + q`` for
    ``p, q > 0``; ``q`` for ``p == 0, q >= 0``; ``inf`` otherwise.

    Args:
      p: real array.
      q: real array broadcasting against ``p``.

    Returns:
      An array of floats.

    Example:
      >>> pto.scipy.special.kl_div(pnp.array([0.5]), pnp.array([0.25]))
      Array([0.09657359], dtype=float32)
    """
    p, q = inexact("kl_div", p, q)
    return pnp.add(pnp.subtract(rel_entr(p, q), p), q)
