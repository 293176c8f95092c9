"""Global-view functions for ``pto.shard`` tests, with the input specs to try them under.

Each case: (function, input arrays, list of in_specs tuples). Specs name the axes of the two
test meshes: MESH_1D = ('x': 8) and MESH_2D = ('x': 4, 'y': 2).
"""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp

P = pto.P

_rng = np.random.default_rng(0)
A = _rng.normal(size=(8, 16)).astype(np.float32)
B = _rng.normal(size=(16, 8)).astype(np.float32)
V = _rng.normal(size=(16,)).astype(np.float32)
E = _rng.normal(size=(32, 6)).astype(np.float32)
IDS = _rng.integers(0, 32, size=(8, 4)).astype(np.int32)
BA = _rng.normal(size=(8, 8, 6)).astype(np.float32)
BB = _rng.normal(size=(8, 6, 8)).astype(np.float32)


def _softmax(a):
    z = a - pnp.max(a, axis=1, keepdims=True)
    return pnp.exp(z) / pnp.sum(pnp.exp(z), axis=1, keepdims=True)


def _mlp(a, b):
    return pnp.tanh(a @ b) @ pnp.ones((8, 4), pnp.float32)


CASES = {
    "elementwise": (lambda a: pnp.sin(a) * 2 + a, (A,), [(P("x"),), (P("x", "y"),)]),
    "broadcast_bias": (lambda a, v: a + v, (A, V), [(P("x"), P()), (P(None, "x"), P()),
                                                    (P("x", "y"), P("y"))]),
    "softmax": (_softmax, (A,), [(P(None, "x"),), (P("x", "y"),), (P("y", "x"),)]),
    "sum_all": (lambda a: pnp.sum(a), (A,), [(P("x"),), (P("x", "y"),)]),
    "max_axis": (lambda a: pnp.max(a, axis=0), (A,), [(P("x"),), (P("x", "y"),)]),
    "mean_var": (lambda a: pnp.var(a, axis=0), (A,), [(P("x"),), (P("x", "y"),)]),
    "matmul": (lambda a, b: a @ b, (A, B), [(P(None, "x"), P("x")), (P("x", "y"), P("y", "x")),
                                            (P("x"), P()), (P(), P(None, "x"))]),
    "batched_matmul": (lambda a, b: pnp.einsum("bij,bjk->bik", a, b), (BA, BB),
                       [(P("x"), P("x")), (P("x", "y"), P()), (P(None, None, "y"), P(None, "y")),
                        (P("y", "x"), P("y", None, "x"))]),
    "mlp": (_mlp, (A, B), [(P("x"), P()), (P(None, "y"), P("y")), (P("x"), P(None, "y"))]),
    "transpose": (lambda a: a.T * 2, (A,), [(P("x"),), (P("x", "y"),)]),
    "reshape_merge": (lambda a: a.reshape(128) + 1, (A,), [(P("x"),), (P(None, "x"),)]),
    "reshape_split": (lambda a: a.reshape(8, 4, 4).sum(2), (A,), [(P("x"),), (P(None, "y"),)]),
    "slice": (lambda a: a[:, 3:9] * 2, (A,), [(P("x"),), (P(None, "x"),)]),
    "concatenate": (lambda a: pnp.concatenate([a, a * 2], axis=1), (A,),
                    [(P("x"),), (P(None, "x"),)]),
    "roll": (lambda a: pnp.roll(a, 3, axis=1) + a, (A,), [(P(None, "x"),),
                                                          (P(None, ("x", "y")),)]),
    "flip": (lambda a: pnp.flip(a, 1) + a, (A,), [(P(None, "x"),), (P("x", "y"),)]),
    "iota": (lambda a: a * pnp.arange(16, dtype=pnp.float32), (A,), [(P(None, "x"),),
                                                                     (P("y", "x"),)]),
    "cumsum": (lambda a: pnp.cumsum(a, axis=1), (A,), [(P(None, "x"),), (P("x"),)]),
    "argmax": (lambda a: pnp.argmax(a, axis=1), (A,), [(P(None, "x"),), (P("x", "y"),)]),
    "sort": (lambda a: pnp.sort(a, axis=0), (A,), [(P("x"),)]),
    "pad": (lambda a: pnp.pad(a, ((1, 1), (0, 0))), (A,), [(P(None, "x"),), (P("x"),)]),
    "outer": (lambda a: a[:, None, :] * a[:, :, None], (A,), [(P("x"),), (P(None, "x"),)]),
    "where": (lambda a: pnp.where(a > 0, a, 0.1 * a), (A,), [(P("x", "y"),)]),
    "dynamic_slice": (lambda a: pto.lax.dynamic_slice(a, (2, 0), (3, 16)), (A,),
                      [(P(None, "x"),), (P("x"),)]),
    "embedding": (lambda e, i: pnp.take(e, i, axis=0), (E, IDS),
                  [(P("x"), P()), (P("x"), P("y")), (P(), P("x")), (P(("x", "y")), P())]),
    "integer_sum": (lambda i: pnp.sum(i, axis=0), (IDS,), [(P("x"),)]),
    "constraint": (lambda a: pto.with_sharding_constraint(a * 2, P(None, "x")).sum(0), (A,),
                   [(P("x"),), (P(),)]),
}

# differentiable cases: (scalar loss of the inputs, inputs, in_specs to try)
GRAD_CASES = {
    "mlp": (lambda a, b: pnp.sum(_mlp(a, b) ** 2), (A, B),
            [(P("x"), P()), (P(None, "y"), P("y")), (P("x"), P(None, "y"))]),
    "softmax": (lambda a: pnp.sum(_softmax(a) * pnp.arange(16.0, dtype=pnp.float32)), (A,),
                [(P("x"),), (P(None, "x"),), (P("x", "y"),)]),
    "embedding": (lambda e: pnp.sum(pnp.tanh(pnp.take(e, IDS, axis=0))), (E,),
                  [(P("x"),), (P(None, "y"),)]),
    "roll_flip": (lambda a: pnp.sum(pnp.roll(a, 5, axis=1) * pnp.flip(a, 1) * a), (A,),
                  [(P(None, "x"),), (P("x", "y"),)]),
}


def mesh_for(specs):
    """The 2-D mesh if a spec names 'y', else the 1-D one."""
    names = {a for s in specs for entry in s for a in
             ((entry,) if isinstance(entry, str) else entry or ())}
    return pto.make_mesh((4, 2), ("x", "y")) if "y" in names else \
        pto.make_mesh((8,), ("x",))
