"""Hand-written kernels shared by the kernel tests: matmul with a fused epilogue, row softmax
and layer norm (the notebook's examples, at test sizes)."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp

K = pto.kernel
S = pto.ShapeDtypeStruct


def matmul_bias_relu(m, n, k, bm, bn):
    """relu(a @ b + bias): one (bm, bn) output block per program, the whole K in one dot
    (the cube accumulates K steps in L0C)."""
    @K(out_shape=S((m, n), pnp.float32), grid=(pl_cdiv(m, bm), pl_cdiv(n, bn)),
       in_specs=[pto.BlockSpec((bm, k), lambda i, j: (i, 0)),
                 pto.BlockSpec((k, bn), lambda i, j: (0, j)),
                 pto.BlockSpec((1, bn), lambda i, j: (0, j))],
       out_specs=pto.BlockSpec((bm, bn), lambda i, j: (i, j)))
    def matmul_bias_relu(a_ref, b_ref, bias_ref, o_ref):
        o_ref[...] = pto.nn.relu(K.dot(a_ref[...], b_ref[...]) + bias_ref[...])
    return matmul_bias_relu


def matmul_k_loop(m, n, k, bm, bn, bk):
    """a @ b with a loop over K blocks carrying the accumulator (pto.kernel.fori)."""
    @K(out_shape=S((m, n), pnp.float32), grid=(m // bm, n // bn),
       in_specs=[pto.BlockSpec((bm, k), lambda i, j: (i, 0)),
                 pto.BlockSpec((k, bn), lambda i, j: (0, j))],
       out_specs=pto.BlockSpec((bm, bn), lambda i, j: (i, j)))
    def matmul_k_loop(a_ref, b_ref, o_ref):
        def step(s, acc):
            return acc + K.dot(a_ref[:, K.ds(s * bk, bk)], b_ref[K.ds(s * bk, bk), :])
        o_ref[...] = K.fori(0, k // bk, step, pnp.zeros((bm, bn), pnp.float32))
    return matmul_k_loop


def softmax_rows(m, n, bm):
    @K(out_shape=S((m, n), pnp.float32), grid=(pl_cdiv(m, bm),),
       in_specs=[pto.BlockSpec((bm, n), lambda i: (i, 0))],
       out_specs=pto.BlockSpec((bm, n), lambda i: (i, 0)))
    def softmax_rows(x_ref, o_ref):
        x = x_ref[...]
        e = pnp.exp(x - x.max(axis=-1, keepdims=True))
        o_ref[...] = e / e.sum(axis=-1, keepdims=True)
    return softmax_rows


def layer_norm(m, n, bm, eps=1e-5):
    @K(out_shape=S((m, n), pnp.float32), grid=(pl_cdiv(m, bm),),
       in_specs=[pto.BlockSpec((bm, n), lambda i: (i, 0)),
                 pto.BlockSpec((1, n), lambda i: (0, 0)),
                 pto.BlockSpec((1, n), lambda i: (0, 0))],
       out_specs=pto.BlockSpec((bm, n), lambda i: (i, 0)))
    def layer_norm(x_ref, g_ref, b_ref, o_ref):
        x = x_ref[...]
        mean = x.sum(axis=-1, keepdims=True) / n
        d = x - mean
        var = (d * d).sum(axis=-1, keepdims=True) / n
        o_ref[...] = d * pto.lax.rsqrt(var + eps) * g_ref[...] + b_ref[...]
    return layer_norm


def pl_cdiv(a, b):
    return -(-a // b)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
