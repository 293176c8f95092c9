"""``pto.scipy.integrate``: JAX's ``jax.scipy.integrate``, the composite trapezoidal rule
``trapezoid`` (the same computation as ``pnp.trapezoid``)."""
from __future__ import annotations

from ptojax import numpy as pnp
from ptojax.public import add_examples, dir_function


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at the sample points
    ``x`` (default: spaced ``dx`` apart)."""
    return pnp.trapezoid(y, x, dx, axis)


__all__ = ["trapezoid"]
__dir__ = dir_function(__all__)

add_examples(globals(), """
trapezoid:
    >>> from ptojax.scipy import integrate
    >>> integrate.trapezoid(pnp.array([1, 2, 3, 2, 3, 2, 1]))
    Array(13., dtype=float32)
    >>> integrate.trapezoid(pnp.array([1, 2, 3, 2, 3, 2, 1]), pnp.array([0, 2, 5, 7, 10, 15, 20]))
    Array(43., dtype=float32)
""")
