"""Printing: arrays print through NumPy, so NumPy's print options apply to them, as in JAX.
``array_repr``/``array_str`` and the ``printoptions`` functions are NumPy's."""
from __future__ import annotations

import numpy as np

from ptojax.public import add_examples as _add_examples


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The string representation of an array (NumPy's ``array_repr``)."""
    return np.array_repr(arr, max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """The string of an array's values (NumPy's ``array_str``)."""
    return np.array_str(a, max_line_width, precision, suppress_small)


def get_printoptions():
    """The current print options (NumPy's, which arrays print with)."""
    return np.get_printoptions()


def set_printoptions(*args, **kwargs):
    """Set the print options (NumPy's ``set_printoptions``; they apply to ptojax arrays)."""
    return np.set_printoptions(*args, **kwargs)


def printoptions(*args, **kwargs):
    """A context manager setting print options for its block (NumPy's ``printoptions``)."""
    return np.printoptions(*args, **kwargs)


__all__ = ["array_repr", "array_str", "get_printoptions", "printoptions", "set_printoptions"]


_add_examples(globals(), """
array_repr:
    >>> pnp.array_repr(pnp.array([1.5, 2.0]))
    'Array([1.5, 2. ], dtype=float32)'
array_str:
    >>> pnp.array_str(pnp.array([1.5, 2.0]))
    '[1.5 2. ]'
get_printoptions:
    >>> pnp.get_printoptions()["precision"]
    8
set_printoptions:
    >>> old = pnp.get_printoptions()
    >>> pnp.set_printoptions(precision=2)
    >>> pnp.array([1.23456])
    Array([1.23], dtype=float32)
    >>> pnp.set_printoptions(**old)
printoptions:
    >>> with pnp.printoptions(precision=1):
    ...     print(pnp.array([1.23456]))
    [1.2]
""")
