"""Functions the tile tests run tiled and untiled, and how to compare the results."""
import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close

F32, F16, BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(pto.bfloat16)


def gelu_tanh(x):
    return pto.nn.gelu(x, approximate=True)


# name -> (function, operand shapes as functions of (rows, cols), kind)
# kind: "ew" (elementwise: bitwise equal), "red" (reductions: tolerance), "mm" (matmul)
CASES = {
    "add": (lambda a, b: a + b, lambda m, n: [(m, n), (m, n)], "ew"),
    "exp_chain": (lambda a: pnp.tanh(pnp.exp(a) * 0.5 - 1.0), lambda m, n: [(m, n)], "ew"),
    "relu": (pto.nn.relu, lambda m, n: [(m, n)], "ew"),
    "silu": (pto.nn.silu, lambda m, n: [(m, n)], "ew"),
    "gelu": (gelu_tanh, lambda m, n: [(m, n)], "ew"),
    "bias_scale": (lambda a, b, s: (a + b) * s[:, None], lambda m, n: [(m, n), (n,), (m,)],
                   "ew"),
    "leaky": (lambda a: pnp.where(a > 0, a, 0.01 * a), lambda m, n: [(m, n)], "ew"),
    "softmax": (pto.nn.softmax, lambda m, n: [(m, n)], "red"),
    "log_softmax": (pto.nn.log_softmax, lambda m, n: [(m, n)], "red"),
    "layer_norm": (lambda x, g, b: pto.nn.layer_norm(x, g, b),
                   lambda m, n: [(m, n), (n,), (n,)], "red"),
    "rms_norm": (lambda x, g: pto.nn.rms_norm(x, g), lambda m, n: [(m, n), (n,)], "red"),
    "matmul_bias_gelu": (lambda x, w, b: gelu_tanh(pnp.matmul(x, w) + b),
                         lambda m, n: [(m, n), (n, 24), (24,)], "mm"),
}


def untiled(fn, *args):
    """The reference: ``fn``'s untiled IR run by the numpy interpreter."""
    outs = pto.make_ir(fn)(*args)(*args)
    return outs[0] if len(outs) == 1 else outs


def make_args(rng, shapes, dtype):
    return [rng.normal(size=s).astype(np.float32).astype(dtype) for s in shapes]


def bits(a):
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def assert_matches(kind, tiled, ref, dtype):
    """Bitwise for elementwise work in a natively supported dtype; within dtype tolerance for
    reductions, matmuls and bfloat16 (which the 910B vector unit computes in float32)."""
    tiled, ref = np.asarray(tiled), np.asarray(ref)
    assert tiled.shape == ref.shape and tiled.dtype == ref.dtype
    if kind == "ew" and dtype != BF16:
        same = (bits(tiled) == bits(ref)) | (np.isnan(tiled.astype(np.float32))
                                             & np.isnan(ref.astype(np.float32)))
        assert same.all(), f"not bitwise equal: max |diff| " \
                           f"{np.nanmax(np.abs(tiled.astype(np.float64) - ref)):.3g}"
        return
    scale = {"ew": 1.0, "red": 4.0, "mm": 8.0}[kind]
    rtol = {F32: 2e-5, F16: 2e-3, BF16: 1.6e-2}[np.dtype(dtype)] * scale
    assert_close(tiled, ref, rtol=rtol, atol=rtol)
