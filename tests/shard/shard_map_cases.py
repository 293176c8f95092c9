"""Manual ``shard_map`` programs written once against a JAX-like namespace, so the same case
runs under ptojax (the test) and under JAX (``jax_shard_map_reference.py``, in a subprocess
with 8 emulated CPU devices).

``ns`` provides: ``lax``, ``np`` (jnp / pnp), ``grad``, ``shard_map(fn, mesh, in_specs,
out_specs)`` (collective checks off, as JAX's ``check_vma=False``), ``mesh(shape, names)``
and ``P``.
"""
import numpy as np


def _ring(n, shift=1):
    return [(i, (i + shift) % n) for i in range(n)]


def _inputs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s).astype(np.float32) for s in shapes]


# name -> (mesh shape, axis names, in_specs, out_specs, fn(ns), input shapes); a spec is the
# tuple of its PartitionSpec entries
CASES = {
    "psum": ((8,), ("x",), (("x",),), ("x",), lambda ns: lambda a: ns.lax.psum(a, "x"),
             [(16, 3)]),
    "psum_2d_both": ((4, 2), ("x", "y"), ((("x", "y"),),), ("x",),
                     lambda ns: lambda a: ns.lax.psum(a, ("x", "y")), [(16, 3)]),
    "pmean_y": ((4, 2), ("x", "y"), (("x", "y"),), ("x", "y"),
                lambda ns: lambda a: ns.lax.pmean(a, "y"), [(8, 6)]),
    "pmax_pmin": ((8,), ("x",), (("x",),), ("x",),
                  lambda ns: lambda a: ns.lax.pmax(a, "x") - ns.lax.pmin(a, "x"), [(16, 3)]),
    "all_gather_stack": ((8,), ("x",), (("x",),), ("x",),
                         lambda ns: lambda a: ns.lax.all_gather(a, "x", axis=1), [(16, 3)]),
    "all_gather_tiled": ((4, 2), ("x", "y"), (("x", "y"),), ("x", "y"),
                         lambda ns: lambda a: ns.lax.all_gather(a, "x", axis=1, tiled=True),
                         [(8, 6)]),
    "all_gather_xy": ((4, 2), ("x", "y"), ((("x", "y"),),), (("x", "y"),),
                      lambda ns: lambda a: ns.lax.all_gather(a, ("x", "y"), tiled=True),
                      [(16, 2)]),
    "psum_scatter_tiled": ((8,), ("x",), (("x",),), ("x",),
                           lambda ns: lambda a: ns.lax.psum_scatter(
                               a, "x", scatter_dimension=1, tiled=True), [(16, 16)]),
    "psum_scatter_untiled": ((4, 2), ("x", "y"), (("x",),), ("x",),
                             lambda ns: lambda a: ns.lax.psum_scatter(a, "y"), [(8, 2, 3)]),
    "all_to_all_tiled": ((8,), ("x",), (("x",),), ("x",),
                         lambda ns: lambda a: ns.lax.all_to_all(a, "x", 1, 0, tiled=True),
                         [(16, 16)]),
    "all_to_all_untiled": ((4, 2), ("x", "y"), (("x",),), ("x",),
                           lambda ns: lambda a: ns.lax.all_to_all(a, "y", 1, 2),
                           [(8, 2, 3)]),
    "ppermute_ring": ((8,), ("x",), (("x",),), ("x",),
                      lambda ns: lambda a: ns.lax.ppermute(a, "x", _ring(8)), [(16, 3)]),
    "ppermute_partial": ((4, 2), ("x", "y"), (("x", "y"),), ("x", "y"),
                         lambda ns: lambda a: ns.lax.ppermute(a, "x", [(0, 2), (1, 3)]),
                         [(8, 4)]),
    "axis_index": ((4, 2), ("x", "y"), (("x",),), ("x",),
                   lambda ns: lambda a: a * ns.lax.axis_index("x") + ns.lax.axis_index("y"),
                   [(8, 3)]),
    "norm_layer": ((4, 2), ("x", "y"), (("x", "y"),), ("x", "y"),
                   lambda ns: lambda a: a / ns.np.sqrt(ns.lax.psum(ns.np.sum(a * a, axis=1,
                                                                            keepdims=True),
                                                                   "y")),
                   [(8, 6)]),
    "grad_inside": ((8,), ("x",), ((), ("x",)), ("x",),
                    lambda ns: lambda w, a: ns.grad(
                        lambda w: ns.lax.psum(ns.np.sum(ns.np.tanh(a @ w)), "x"))(w),
                    [(3, 2), (16, 3)]),
}


def case_inputs(name):
    return _inputs(*CASES[name][5], seed=sorted(CASES).index(name))


def build(ns, name):
    """(mapped function, inputs) of case ``name`` in namespace ``ns``."""
    shape, names, in_specs, out_specs, make, _ = CASES[name]
    mesh = ns.mesh(shape, names)
    fn = ns.shard_map(make(ns), mesh, tuple(ns.P(*s) for s in in_specs), ns.P(*out_specs))
    return fn, case_inputs(name)
