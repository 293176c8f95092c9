"""``pto.shard`` through symbolic dimensions: a replicated symbolic axis, and a symbolic axis
split over a mesh axis (declared as a multiple of the mesh size), under jit and grad, from one
program for every size."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import DimensionRangeError, InconclusiveDimensionOperation

P = pto.P
MESH = pto.make_mesh((2,), ("data",))
W = np.random.default_rng(0).random((8, 4)).astype(np.float32) * 0.3


def loss(w, x):
    return pnp.mean(pnp.tanh(x @ w) ** 2) + x.sum() / x.shape[0]


@pytest.mark.parametrize("spec, dim, sizes", [
    (P(), pto.Dim("n", 1, 64), (1, 7, 64)),
    (P("data"), 2 * pto.Dim("k", 1, 32), (2, 6, 64))])
def test_grad_of_shard_over_a_symbolic_axis(spec, dim, sizes):
    step = pto.jit(pto.shard(pto.grad(loss), mesh=MESH, in_specs=(P(), spec), out_specs=P()),
                   dynamic={"x": {0: dim}})
    for size in sizes:
        x = np.random.default_rng(size).random((size, 8)).astype(np.float32)
        np.testing.assert_allclose(step(W, x), pto.grad(loss)(W, x), rtol=1e-5, atol=1e-6)
    assert step.cache_size() == 1


def test_a_split_symbolic_axis_must_be_declared_a_multiple_of_the_mesh():
    step = pto.jit(pto.shard(loss, mesh=MESH, in_specs=(P(), P("data")), out_specs=P()),
                   dynamic={"x": {0: pto.Dim("n", 1, 64)}})
    with pytest.raises(InconclusiveDimensionOperation, match="n % 2"):
        step(W, np.ones((4, 8), np.float32))
    multiple = pto.jit(loss, dynamic={"x": {0: 2 * pto.Dim("k", 1, 32)}})
    with pytest.raises(DimensionRangeError, match="not a multiple of 2"):
        multiple(W, np.ones((5, 8), np.float32))
