"""The ``accuracy=`` of JAX's transcendental functions (``lax.exp(x, accuracy=...)``):
``AccuracyMode`` and ``Tolerance``. As on JAX's CPU backend the host results do not depend
on it (they are the host math library's, within an ulp or two); it is checked and accepted
so that programs written for accelerators run unchanged."""
from __future__ import annotations

import enum

from ptojax.public import add_examples as _add_examples


class AccuracyMode(enum.Enum):
    """A named accuracy for a transcendental function (JAX's ``lax.AccuracyMode``)."""
    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """The tolerances a transcendental function may meet instead of its default accuracy
    (JAX's ``lax.Tolerance``): at most two of ``atol``, ``rtol`` and ``ulps``, one non-zero."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def __repr__(self):
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


def check_accuracy(name: str, accuracy) -> None:
    """``accuracy`` is None, an ``AccuracyMode`` or a ``Tolerance`` (JAX's CPU error else)."""
    if accuracy is not None and not isinstance(accuracy, (AccuracyMode, Tolerance)):
        raise NotImplementedError(f"{name}: accuracy {accuracy!r} is not supported: pass a "
                                  f"lax.AccuracyMode or a lax.Tolerance")


def with_accuracy(fn):
    """The unary lax function ``fn`` taking JAX's keyword ``accuracy``."""
    def unary(x, *, accuracy=None):
        check_accuracy(fn.__name__, accuracy)
        return fn(x)
    unary.__name__ = unary.__qualname__ = fn.__name__
    unary.__doc__ = fn.__doc__
    return unary


_add_examples(globals(), """
AccuracyMode:
    >>> pto.lax.exp(pnp.zeros(2), accuracy=pto.lax.AccuracyMode.HIGHEST)
    Array([1., 1.], dtype=float32)
Tolerance:
    >>> pto.lax.tanh(pnp.zeros(2), accuracy=pto.lax.Tolerance(atol=1e-6))
    Array([0., 0.], dtype=float32)
""")
