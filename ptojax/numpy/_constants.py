"""The two kinds of constants inside JAX's composite ``jax.numpy`` functions, which decide
whether their results are weakly typed: ``strong_like`` (``jnp.array(value, dtype)``) makes a
result strong even of weak operands; ``lax_like`` (``lax._const``) is weak only beside a weak
0-d operand, so the result is weak of a weak scalar and strong of a weak array."""
from __future__ import annotations

from ptojax import lax


def strong_like(x, value):
    """``value`` as a strongly typed scalar of ``x``'s dtype."""
    return lax.convert_element_type(value, x.dtype)


def lax_like(x, value):
    """``value`` as a scalar of ``x``'s dtype, weak only when ``x`` is a weak 0-d array."""
    weak = x.ndim == 0 and bool(getattr(x, "weak_type", False))
    return lax.convert_element_type(value, x.dtype, weak_type=weak)


def strong(x):
    """``x`` strongly typed, as JAX's composites that convert their operand explicitly
    (``angle``) or compute on its bits (``spacing``) return it, and its reductions (which end
    in a ``convert_element_type`` to the result dtype)."""
    return lax.convert_element_type(x, x.dtype)
