"""``lax.rng_uniform``: XLA's stateful uniform generator. Each call (under ``jit`` too) draws
fresh numbers in ``[a, b)`` from a host generator seeded from the operating system, through
``io_callback``, so, as in JAX, results are not reproducible (use ``ptojax.random`` or
``rng_bit_generator`` for that) and there are no derivatives; unlike JAX it also runs under
``vmap`` (one draw per batch element) and takes any integer or float dtype."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.eval.leaves import ShapeDtypeStruct, check_arraylike
from ptojax.ops.io_callback import io_callback
from ptojax.ops.operand import as_operand
from ptojax.public import add_examples as _add_examples

_HOST_GENERATOR = np.random.default_rng()


def _draw(a, b, *, shape, dtype):
    a, b = np.asarray(a), np.asarray(b)
    if dtypes.is_integer(dtype):
        return _HOST_GENERATOR.integers(a, b, size=shape, dtype=dtype, endpoint=False)
    unit = _HOST_GENERATOR.random(size=shape, dtype=np.float64)
    out = (a.astype(np.float64) + (b.astype(np.float64) - a) * unit).astype(dtype)
    return np.minimum(out, np.nextafter(b, a, dtype=dtype)) if out.size else out  # [a, b)


def rng_uniform(a, b, shape):
    """Numbers drawn uniformly from ``[a, b)`` (scalars of one dtype) in an array of
    ``shape``, fresh at every call (JAX's stateful ``lax.rng_uniform``)."""
    check_arraylike("rng_uniform", a, b)
    a, b = as_operand("rng_uniform", a), as_operand("rng_uniform", b)
    if np.dtype(a.dtype) != np.dtype(b.dtype):
        raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got "
                         f"{np.dtype(a.dtype)} and {np.dtype(b.dtype)}.")
    if np.shape(a) != () or np.shape(b) != ():
        raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes "
                         f"{np.shape(a)} and {np.shape(b)}.")
    dtype = dtypes.canonical_dtype(a.dtype)
    if not (dtypes.is_integer(dtype) or dtypes.is_float(dtype)):
        raise TypeError(f"rng_uniform: takes integer or float bounds, got {dtype}")
    shape = tuple(int(d) for d in shape)
    return io_callback(lambda lo, hi: _draw(lo, hi, shape=shape, dtype=dtype),
                       ShapeDtypeStruct(shape, dtype), a, b)


_add_examples(globals(), """
rng_uniform:
    >>> x = pto.lax.rng_uniform(2.0, 3.0, (1000,))
    >>> bool((x >= 2).all() and (x < 3).all()), x.dtype
    (True, dtype('float32'))
""")
