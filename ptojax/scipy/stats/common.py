"""Shared pieces of the ``pto.scipy.stats`` distributions: argument promotion and the
docstrings (every function documents its parameters the same way)."""
from __future__ import annotations

import inspect

import numpy as np

from ptojax import numpy as pnp
from ptojax.numpy._promote import convert, result_type, to_inexact
from ptojax.scipy.special.normal import inexact

__all__ = ["inexact", "inexact_dtypes", "standardized", "where_outside", "describe"]

PARAMETERS = {
    "x": "values at which to evaluate (array)",
    "k": "counts at which to evaluate (array)",
    "q": "probabilities in [0, 1] (array)",
    "p": "the success probability (array)",
    "loc": "location, default 0",
    "scale": "scale, default 1",
    "a": "shape parameter a (array)",
    "b": "shape parameter b (array)",
    "df": "degrees of freedom (array)",
    "n": "the number of trials (array)",
    "mu": "the mean (array)",
    "c": "shape parameter in (0, 1) (array)",
    "beta": "shape parameter (array)",
    "alpha": "concentration parameters (1-D array)",
    "mean": "the mean vector (array)",
    "cov": "the covariance (a scalar: isotropic)",
    "allow_singular": "not supported (must be None), as in JAX",
}


def inexact_dtypes(name, *args):
    """``args`` converted to their common floating-point dtype (shapes unchanged)."""
    dtype, weak = result_type(*args, op=name)
    return [convert(a, to_inexact(dtype), weak) for a in args]


def standardized(x, loc, scale):
    """``(x - loc) / scale``."""
    return pnp.divide(pnp.subtract(x, loc), scale)


def where_outside(condition, value, fill=-np.inf):
    """``value``, with ``fill`` where ``condition`` holds."""
    return pnp.where(condition, fill, value)


def describe(summary: str, example: str, returns: str = "An array of floats (the "
             "arguments broadcast together).", arguments: dict | None = None):
    """Give a distribution function a NumPy-style docstring: ``summary``, its parameters
    (from its signature; ``arguments`` overrides the usual descriptions), ``returns`` and
    ``example`` (doctest lines)."""
    described = {**PARAMETERS, **(arguments or {})}

    def attach(fn):
        params = inspect.signature(fn).parameters
        args = "\n".join(f"      {name}: {described[name]}." for name in params)
        body = "\n".join(f"      {line}" for line in example.strip().splitlines())
        fn.__doc__ = (f"{summary}\n\n    Args:\n{args}\n\n    Returns:\n      {returns}\n\n"
                      f"    Example:\n{body}\n    ")
        return fn
    return attach
