"""Run every case of ``shard_map_cases.py`` with JAX on 8 emulated CPU devices and save the
results (``python jax_shard_map_reference.py out.npz``). Run in a subprocess: the device count
must be set before JAX starts."""
import os
import sys
import types

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from shard_map_cases import CASES, build  # noqa: E402


def namespace():
    ns = types.SimpleNamespace(lax=jax.lax, np=jnp, grad=jax.grad, P=jax.sharding.PartitionSpec)
    ns.mesh = lambda shape, names: jax.make_mesh(
        shape, names, axis_types=(jax.sharding.AxisType.Auto,) * len(shape))
    ns.shard_map = lambda fn, mesh, in_specs, out_specs: jax.jit(jax.shard_map(
        fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False))
    return ns


def main(path):
    ns = namespace()
    results = {}
    for name in CASES:
        fn, inputs = build(ns, name)
        results[name] = np.asarray(fn(*inputs))
        if name == "grad_inside":  # and a gradient through the whole shard_map
            results["grad_outside"] = np.asarray(jax.grad(
                lambda w, a: jnp.sum(fn(w, a) ** 2))(*inputs))
    np.savez(path, **results)


if __name__ == "__main__":
    main(sys.argv[1])
