"""Every collective across MPI processes, checked against numpy (run under mpiexec)."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp

pto.distributed.initialize(timeout=20)
P = pto.P
n = pto.device_count()
mesh = pto.make_mesh((n,), ("x",))


def collectives(a):
    ring = [(i, (i + 1) % n) for i in range(n)]
    return (pto.lax.psum(a, "x"), pto.lax.pmax(a, "x"),
            pto.lax.all_gather(a, "x", tiled=True), pto.lax.all_gather(a, "x", axis=1),
            pto.lax.psum_scatter(a, "x", tiled=True), pto.lax.all_to_all(a, "x", 0, 1, tiled=True),
            pto.lax.ppermute(a, "x", ring))


a = np.arange(n * 4 * n * 2, dtype=np.float32).reshape(n * 4, n * 2)
blocks = np.split(a, n)
expected = (np.concatenate([sum(blocks)] * n), np.concatenate([np.maximum.reduce(blocks)] * n),
            np.concatenate([a] * n), np.concatenate([np.stack(blocks, 1)] * n),
            sum(blocks),
            np.concatenate([np.concatenate([np.split(blocks[i], n)[j] for i in range(n)], 1)
                            for j in range(n)]),
            np.concatenate([blocks[(i - 1) % n] for i in range(n)]))
mapped = pto.shard_map(collectives, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                       check_rep=False)
for got, want in zip(pto.jit(mapped)(a), expected):  # jit: whole outputs, assembled via MPI
    np.testing.assert_array_equal(np.asarray(got), want)

# bf16 all-reduce (reduced in f32 by MPI)
half = pto.shard_map(lambda v: pto.lax.psum(v, "x"), mesh=mesh, in_specs=P("x"),
                     out_specs=P())(np.ones(n * 2, pnp.bfloat16))
np.testing.assert_array_equal(np.asarray(half, np.float32), np.full(2, n, np.float32))

# automatic partitioning across processes, 2-D mesh when there are enough devices
shape = (2, n // 2) if n >= 4 else (n, 1)
mesh2 = pto.make_mesh(shape, ("data", "model"))
w = np.linspace(-1, 1, 4 * 8, dtype=np.float32).reshape(4, 8)
x = np.linspace(-2, 2, 8 * 4, dtype=np.float32).reshape(8, 4)
loss = lambda w, x: pnp.sum(pnp.tanh(x @ w) ** 2)  # noqa: E731
grads = pto.shard(pto.grad(loss), mesh=mesh2, in_specs=(P(None, "model"), P("data")),
                  out_specs=P(None, "model"))(w, x)
np.testing.assert_allclose(np.asarray(grads), np.asarray(pto.grad(loss)(w, x)), rtol=1e-5,
                           atol=1e-6)
print(f"process {pto.process_index()}: collectives ok on {n} devices", flush=True)
