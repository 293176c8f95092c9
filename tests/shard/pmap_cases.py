"""``pmap`` programs run under ptojax (``test_pmap.py``) and under JAX on 8 emulated CPU
devices (``python pmap_cases.py out.npz``, in a subprocess: the device count must be set
before JAX starts). Each case is ``name -> m -> result``, ``m`` a namespace with ``pmap``,
``lax``, ``np``, ``grad`` and ``vmap``; inputs are float32."""
import os
import sys
import types

import numpy as np

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)
Y = RNG.standard_normal((3, 4)).astype(np.float32)
W = RNG.standard_normal(3).astype(np.float32)


def _centered(m):
    return m.pmap(lambda v: v - m.lax.pmean(v, "i"), axis_name="i")(X)


def _broadcast_and_replicated_output(m):
    def f(v, w):
        return v * w, m.lax.psum(m.np.sum(v), "i")
    out, total = m.pmap(f, axis_name="i", in_axes=(0, None), out_axes=(0, None))(X, W)
    return m.np.concatenate([out.ravel(), total[None]])


def _mapped_axis_1_out_axis_1(m):
    return m.pmap(lambda v: m.np.cumsum(v), in_axes=1, out_axes=1)(Y)


def _pytree_in_out(m):
    out = m.pmap(lambda d: {"s": d["a"] * 2 + d["b"], "n": m.lax.axis_index("i")},
                 axis_name="i")({"a": X, "b": X[:, :1]})
    return m.np.concatenate([out["s"].ravel(), out["n"].astype(np.float32)])


def _static_argument(m):
    cube = m.pmap(lambda v, k: v ** k, static_broadcasted_argnums=1)(X, 3)
    scaled = m.pmap(lambda k, v, w: v * w * k, static_broadcasted_argnums=0,
                    in_axes=(None, 0, None))(2, X, W)
    return m.np.concatenate([cube, scaled])


def _ppermute_ring(m):
    return m.pmap(lambda v: m.lax.ppermute(v, "i", [(j, (j + 1) % 4) for j in range(4)]),
                  axis_name="i")(X)


def _all_gather(m):
    return m.pmap(lambda v: m.lax.all_gather(v, "i").sum(0) * v, axis_name="i")(X)


def _grad_of_pmap(m):
    def loss(w):
        per_device = m.pmap(lambda v, w: m.np.sum(m.np.tanh(v * w)), in_axes=(0, None))(X, w)
        return m.np.sum(per_device ** 2)
    return m.grad(loss)(W)


def _grad_inside_pmap(m):
    def step(v, w):
        g = m.grad(lambda w: m.np.sum(m.np.sin(v * w)))(w)
        return m.lax.pmean(g, "i")
    return m.pmap(step, axis_name="i", in_axes=(0, None))(X, W)


def _vmap_of_pmap(m):
    return m.vmap(m.pmap(lambda v: m.lax.psum(v, "i"), axis_name="i"))(
        np.stack([X, 2 * X]))


CASES = {f.__name__[1:]: f for f in (
    _centered, _broadcast_and_replicated_output, _mapped_axis_1_out_axis_1, _pytree_in_out,
    _static_argument, _ppermute_ring, _all_gather, _grad_of_pmap, _grad_inside_pmap,
    _vmap_of_pmap)}


def main(path):
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jax.numpy as jnp
    m = types.SimpleNamespace(pmap=jax.pmap, lax=jax.lax, np=jnp, grad=jax.grad, vmap=jax.vmap)
    np.savez(path, **{name: np.asarray(case(m)) for name, case in CASES.items()})


if __name__ == "__main__":
    main(sys.argv[1])
