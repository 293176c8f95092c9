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
