"""Programs the lowering tests emit PTO for (shapes chosen to show full and ragged tiles)."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp

F32, F16 = np.float32, np.float16


def _s(shape, dtype=F32):
    return pto.ShapeDtypeStruct(shape, dtype)


GOLDEN = {
    "add": (lambda a, b: a + b, [_s((64, 256)), _s((64, 256))]),
    "softmax": (pto.nn.softmax, [_s((100, 320))]),
    "layer_norm": (lambda x, g, b: pto.nn.layer_norm(x, g, b),
                   [_s((64, 512)), _s((512,)), _s((512,))]),
    "matmul_bias_gelu": (lambda x, w, b: pto.nn.gelu(pnp.matmul(x, w) + b, approximate=True),
                         [_s((128, 256), F16), _s((256, 192), F16), _s((192,), F16)]),
}

# more programs for the structural checks
STRUCTURE = dict(GOLDEN, **{
    "log_softmax_ragged": (pto.nn.log_softmax, [_s((37, 77))]),
    "rms_norm_f16": (lambda x, g: pto.nn.rms_norm(x, g), [_s((50, 96), F16), _s((96,), F16)]),
    "grad_layer_norm": (pto.grad(lambda x, g, b: pnp.sum(pto.nn.layer_norm(x, g, b) ** 2),
                                 argnums=(0, 1, 2)), [_s((40, 64)), _s((64,)), _s((64,))]),
    "matmul_ragged_k": (lambda a, b: pnp.matmul(a, b), [_s((50, 300)), _s((300, 40))]),
    "where_and_scalar": (lambda a, s: pnp.where(a > 0, a * s, -a), [_s((20, 48)), _s(())]),
    "matmul_transposed": (lambda a, b: pnp.matmul(a.T, b), [_s((64, 32)), _s((64, 48))]),
    # batched: M = 512 splits into row tiles (b = r0 / M, r0 % M), ragged K and N
    "batched_matmul_transposed": (
        lambda a, b: pnp.matmul(pnp.swapaxes(a, -1, -2), pnp.swapaxes(b, -1, -2)),
        [_s((3, 100, 512), F16), _s((3, 72, 100), F16)]),
    "batched_attention_grad": (
        pto.grad(lambda q, k, v: pnp.sum(pto.nn.softmax(q @ pnp.swapaxes(k, -1, -2)) @ v),
                 argnums=(0, 1, 2)), [_s((2, 2, 40, 16))] * 3),
})


def lowered(name, table=STRUCTURE, target=None):
    fn, args = table[name]
    return pto.jit(fn).lower(*args, target=target)
