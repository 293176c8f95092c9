"""Reference facts: each primitive computed by JAX, for ``check_numerics(reference="jax")``.

A reference is ``reference(jnp, lax) -> fn(*args, **params)``, given ``jax.numpy`` and
``jax.lax`` (JAX is imported by ``tools/jax_reference.py`` only, never by ptojax itself).
"""
from __future__ import annotations

import numpy as np

LOW_PRECISION = ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")


def lax_op(name: str):
    """``jax.lax.<name>`` on the same operands (lax needs equal shapes: PTO IR lets rank-0
    operands broadcast, so they are broadcast first)."""
    def reference(jnp, lax):
        fn = getattr(lax, name)
        return lambda *xs, **params: fn(*jnp.broadcast_arrays(*xs), **params)
    return reference


def identity(jnp, lax):
    return lambda x, **params: x


def widened(reference):
    """Low-precision floats accumulate in float32 (as ptojax and XLA on CPU do)."""
    def wide(jnp, lax):
        fn = reference(jnp, lax)

        def run(x, *args, **params):
            if x.dtype.name in LOW_PRECISION:
                return fn(x.astype(jnp.float32), *args, **params).astype(x.dtype)
            return fn(x, *args, **params)
        return run
    return wide


def lax_reduce(op: str, identity):
    """``jax.lax.reduce`` with the binary ``lax.<op>`` and ``identity(dtype)``."""
    def reference(jnp, lax):
        fn = getattr(lax, op)
        return lambda x, axes: lax.reduce(x, np.array(identity(x.dtype), x.dtype), fn,
                                          tuple(axes))
    return reference
