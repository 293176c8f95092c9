"""A column sum read inside a kernel (softmax over axis 0, a masked column mean) is the sum of
every row: the kernel holds all rows in one tile, or stays unfused when they do not fit. (It
used to add the partial sum of each row tile: wrong from 40 rows on the host target, once a
uint8 mask widened the tile; found by the bucketing tests.)"""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.lower.host.backend import CpuBackend

FUNCTIONS = {
    "masked_softmax_axis0": lambda e: pnp.exp(e) / pnp.where(e > 0.3, pnp.exp(e), 0.0).sum(
        0, keepdims=True),
    "column_centered": lambda e: e - e.mean(0, keepdims=True),
}


@pytest.mark.parametrize("kernels", ["fused", "pto"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_column_sums_inside_kernels_sum_every_row(name, kernels):
    f = FUNCTIONS[name]
    compiled = pto.jit(f, backend=CpuBackend(tiered=False, min_elements=0, kernels=kernels))
    reference = pto.jit(f, backend="interpreter")
    for rows in (40, 5000):   # more rows than one host tile; more than fit UB
        x = np.random.default_rng(rows).random((rows, 8)).astype(np.float32)
        np.testing.assert_allclose(compiled(x), reference(x), rtol=1e-5, atol=2e-5)  # f32 sums


@pytest.mark.parametrize("kernels", ["fused", "pto"])
@pytest.mark.parametrize("busy", [False, True], ids=["threads", "calling_thread"])
def test_column_sums_added_atomically_only_across_threads(kernels, busy, monkeypatch):
    """A bias gradient's column sums over blocks: added atomically when the blocks run on the
    OpenMP threads, plainly when they run one after another (a busy machine, small kernels):
    the same sums either way (``blocks_concurrent`` in pto_host_memory.h)."""
    from ptojax.lower.host import program
    monkeypatch.setattr(program, "threads_free", lambda: not busy)
    f = pto.jit(lambda g, x: (pnp.where(x > 0, g, 0.0), pnp.sum(g * 2.0, axis=0)),
                backend=CpuBackend(tiered=False, min_elements=0, kernels=kernels))
    rng = np.random.default_rng(7)
    g, x = (rng.standard_normal((512, 128)).astype(np.float32) for _ in range(2))  # parallel
    masked, sums = f(g, x)
    np.testing.assert_array_equal(masked, np.where(x > 0, g, 0.0))
    np.testing.assert_allclose(sums, (g * 2.0).astype(np.float64).sum(0), rtol=1e-5, atol=1e-4)
    if kernels == "fused":
        source = f.lower(g, x).as_text("fused-cpp")
        assert "if (blocks_concurrent())" in source and "plain_add(" in source
