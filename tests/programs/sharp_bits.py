"""The behaviours JAX's "sharp bits" and "thinking in JAX" pages show, as values: a function
jitted twice traces once (a global it read stays the traced value until the signature
changes), in-place assignment and a traced boolean mask are errors of JAX's classes,
out-of-bounds gathers clamp or fill and scatters drop, a list made into an array is strongly
typed, static arguments retrace. JAX style, program tests."""
from functools import partial

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

offset = 0.0
traces = []


def shifted(x):
    traces.append(1)
    return x + offset


def raises(fn, error):
    try:
        fn()
    except error:
        return True
    return False


@partial(jax.jit, static_argnums=1)
def signed(x, negate):
    return -x if negate else x


def main():
    global offset
    first = jax.jit(shifted)(4.0)
    offset = 10.0
    same_signature = jax.jit(shifted)(5.0)            # the trace of the first call: offset 0
    new_signature = jax.jit(shifted)(jnp.array([4.0]))   # traced again: offset 10
    offset = 0.0

    x = jnp.arange(10.0)
    bounds = (x[11], x.at[11].get(mode="fill", fill_value=jnp.nan),
              x.at[jnp.array([1, 11, -1])].add(100.0), jnp.arange(5).at[7].set(9))
    errors = (raises(lambda: x.__setitem__(0, 1.0), TypeError),
              raises(lambda: jax.jit(lambda v: v[v > 3])(x), IndexError),
              raises(lambda: jax.jit(lambda v, neg: -v if neg else v)(1.0, True), TypeError))

    # a list of (weak) Python scalars becomes a strongly typed array, so float16 does not win
    pair = jax.jit(lambda a, b: jnp.array([a, b]) + np.float16(1))(1.0, 2.0)
    scalar = jax.jit(lambda a: jnp.asarray(a) + np.float16(1))(1.0)
    stats = jax.jit(lambda v: v.reshape((np.prod(v.shape),)) / v.std(0).sum())(jnp.ones((2, 3)))
    loop = lax.fori_loop(0, 10, lambda i, total: total + x[i], 0.0)
    return (first, same_signature, new_signature, len(traces), *bounds, errors, pair,
            pair.dtype == jnp.float32, scalar.dtype == jnp.float16, stats, loop,
            signed(1.0, True), signed(1.0, False))
