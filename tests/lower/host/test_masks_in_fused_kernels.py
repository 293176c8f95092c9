"""A fused host kernel whose rows hold a bool mask (a masked row softmax, as a bucketed
program computes) keeps the mask in a scratch row buffer: that buffer used to be a
std::vector<bool>, which has no data(), so such kernels failed to compile and the function
fell back to numpy with a warning. Compiled before the first call here (warnings are errors
in the suite), so the compile must succeed."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import lax
from ptojax.lower.host.backend import CpuBackend


def masked_row_softmax(n, x):
    keep = lax.broadcasted_iota(np.int32, x.shape, 1) < n
    m = pnp.where(keep, x, -np.inf).max(-1, keepdims=True)
    e = pnp.exp(x - m)
    return e / pnp.where(keep, e, 0.0).sum(-1, keepdims=True)


def test_a_bool_row_buffer_compiles_and_computes():
    x = np.random.default_rng(0).random((256, 512)).astype(np.float32)
    compiled = pto.jit(masked_row_softmax,
                       backend=CpuBackend(tiered=False, min_elements=0, kernels="fused"))
    reference = pto.jit(masked_row_softmax, backend="interpreter")
    for n in (1, 300, 512):
        np.testing.assert_allclose(compiled(np.int32(n), x), reference(np.int32(n), x),
                                   rtol=1e-5, atol=1e-7)
