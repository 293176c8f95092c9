"""jax.numpy's indexing as JAX's docs describe it: integer-array, boolean and mixed indexes
(basic and advanced, with None and Ellipsis), the out-of-bounds modes of gathers and of every
``.at`` update (set/add/mul/min/max/divide/power/apply, repeated indices), ``take`` and
``take_along_axis`` modes, traced indexes under jit, vmap and grad, and the index errors JAX
raises (a list index, a float index, a traced slice bound, a traced boolean mask). JAX style,
program tests."""
import numpy as np

import jax
import jax.numpy as jnp


def error(fn):
    """Whether ``fn`` raises a TypeError, and whether an IndexError."""
    try:
        fn()
    except Exception as e:   # noqa: BLE001 (the class is the result)
        return isinstance(e, TypeError), isinstance(e, IndexError)
    return False, False


@jax.jit
def indexed(x):
    i = jnp.array([0, 2, 1])
    out_of_bounds = jnp.array([0, 5])
    gathers = (x[:, i], x[..., i[:2]], x[None, 1, :, jnp.array([3, -1])],
               x[jnp.array([1, 0]), jnp.array([2, 0])],
               x[jnp.array([[1], [0]]), :, jnp.array([0, 3])],
               x[1, [0, 2]], x[np.array([True, False])], x[:, 1:, ::-2],
               x[jnp.array([0, 1]), 1:, jnp.array([1, 2])], x[0, jnp.array(5)],
               x.at[0, out_of_bounds].get(mode="fill", fill_value=-1),
               x.at[0, out_of_bounds].get(mode="clip"))
    row = x.at[0]
    updates = (row.add(1.0), x.at[0, jnp.array([0, 0, 1])].add(1.0),
               x.at[0, out_of_bounds].set(-1.0, mode="drop"),
               x.at[0, out_of_bounds].set(-1.0, mode="clip"),
               x.at[1].min(5.0), x.at[1, 0].max(jnp.array([100.0, 0.0, 0.0, 100.0])),
               x.at[..., 1].mul(2.0), x.at[jnp.array([0, 0])].divide(jnp.array(4.0)),
               x.at[..., 1].power(2.0),
               x.at[0, jnp.array([1, 1])].power(jnp.array([[2.0], [0.5]])),
               x.at[0, 0].apply(jnp.sin),
               x.at[jnp.array([1, 0, 1]), 0, 0].add(jnp.array([1.0, 2.0, 3.0])))
    v = jnp.arange(5.0)
    takes = (jnp.take(v, jnp.array([0, 7, -1])), jnp.take(v, jnp.array([0, 7, -1]), mode="clip"),
             jnp.take(v, jnp.array([0, 7, -1]), mode="wrap"),
             jnp.take(v, jnp.array([0, 7]), mode="fill", fill_value=3.0),
             jnp.take_along_axis(x, jnp.argsort(-x, axis=-1)[..., :2], axis=-1))
    return gathers, updates, takes


def main(x):
    x = jnp.asarray(x)
    v = jnp.arange(5.0)
    traced = (x[x > 20],   # a concrete boolean mask, outside jit
              jax.jit(lambda a, k: a[k])(v, 12), jax.jit(lambda a, k: a.at[k].set(0.0))(v, -1),
              jax.jit(lambda a, k: jax.lax.dynamic_slice_in_dim(a, k, 3))(v, 4),
              jax.grad(lambda a: a[jnp.array([0, 0, 2])].sum())(v),
              jax.vmap(lambda a, k: a[k])(x[0], jnp.array([0, 3, 1])))
    errors = (error(lambda: v[[0, 1]]), error(lambda: v[2.0]),
              error(lambda: jax.jit(lambda a, k: a[k:k + 2])(v, 1)),
              error(lambda: jax.jit(lambda a: a[a > 2])(v)))
    return indexed(x), traced, errors
