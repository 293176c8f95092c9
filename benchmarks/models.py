"""The ops real models need (issue 18), in one run (python benchmarks/models.py):

1. conv2d forward + backward, ResNet-style 3x3, NHWC batch 32, 64 -> 64 channels, 32x32,
   SAME: ptojax (pto.jit, im2col + BLAS on the host) vs JAX            (target <= 1.2x)
2. int8 x int8 -> int32 matmul 1024^3 on the host: pto.jit(dot_general) vs numpy's integer
   matmul of the int32-widened operands (results checked equal)
3. the cost model's Ascend 910B estimate of a 4096^3 GEMM: int8 (int32 accumulator) vs fp16
   (fp32 accumulator) — an estimate from ``Lowered.cost()``, not a measurement
1b. more host convolutions, forward + backward vs JAX, interleaved medians of wall and CPU
   time: NCHW, stride 2, 1x1, depthwise, and a small CNN (MNIST-like 28x28x1 -> 32 -> 64,
   batch 128)
4. the cost model's 910B estimate (GM bytes, time) of conv2d 3x3 b32 c64 32x32 fp16: the
   on-chip im2col cube kernel (TIMG2COL) vs the im2col expansion through GM it replaced,
   and the same convolution's host timing (compiled kernels) of both and of JAX

Timings are best-of-N on a shared machine: rough, relative numbers only.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import best_time, fmt, report  # noqa: E402

CONV_X, CONV_W = (32, 32, 32, 64), (3, 3, 64, 64)
INT8_N = 1024
GEMM_N = 4096


def conv_loss(lax_, x, w, ct):
    y = lax_.conv_general_dilated(x, w, (1, 1), "SAME",
                                  dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return (y * ct).sum()


def bench_conv():
    import jax
    import ptojax as pto
    from ptojax.lower.host.backend import wait_for_compiles
    rng = np.random.default_rng(0)
    x = rng.normal(size=CONV_X).astype(np.float32)
    w = (rng.normal(size=CONV_W) / 24).astype(np.float32)
    ct = rng.normal(size=CONV_X[:3] + CONV_W[-1:]).astype(np.float32)
    ours = pto.jit(pto.value_and_grad(lambda a, b: conv_loss(pto.lax, a, b, ct), argnums=(0, 1)))
    theirs = jax.jit(jax.value_and_grad(lambda a, b: conv_loss(jax.lax, a, b, ct),
                                        argnums=(0, 1)))
    got, want = ours(x, w), theirs(x, w)
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-3, atol=2e-3)
    wait_for_compiles()     # steady state: its kernels, built now (not once hot)
    t_ours = best_time(lambda: jax.tree_util.tree_map(np.asarray, ours(x, w)), repeat=5)
    t_jax = best_time(lambda: jax.block_until_ready(theirs(x, w)), repeat=5)
    report("conv2d 3x3 NHWC 32x32x32x64 fwd+bwd", t_ours, t_jax, target=1.2)


def _interleaved(ours, theirs, rounds=7):
    """Median (wall, CPU) seconds per call of each, measured in alternating rounds."""
    import time
    ours(), theirs()
    times = {0: [], 1: []}
    for _ in range(rounds):
        for i, fn in enumerate((ours, theirs)):
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            times[i].append((time.perf_counter() - wall, time.process_time() - cpu))
    return [np.median(times[i], axis=0) for i in (0, 1)]


def _conv_grad_pair(loss, args):
    import jax
    import ptojax as pto
    from ptojax.lower.host.backend import wait_for_compiles
    argnums = tuple(range(len(args)))
    ours = pto.jit(pto.value_and_grad(lambda *a: loss(pto.lax, *a), argnums=argnums))
    theirs = jax.jit(jax.value_and_grad(lambda *a: loss(jax.lax, *a), argnums=argnums))
    for g, e in zip(jax.tree_util.tree_leaves(ours(*args)),
                    jax.tree_util.tree_leaves(theirs(*args))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-3,
                                   atol=2e-3 * max(1.0, float(np.abs(np.asarray(e)).max())))
    wait_for_compiles()     # steady state: its kernels, built now (not once hot)
    return (lambda: jax.tree_util.tree_map(np.asarray, ours(*args)),
            lambda: jax.block_until_ready(theirs(*args)))


def bench_conv_cases():
    rng = np.random.default_rng(0)
    nhwc = ("NHWC", "HWIO", "NHWC")

    def single(dn, strides=(1, 1), groups=1):
        def loss(lax_, x, w):
            y = lax_.conv_general_dilated(x, w, strides, "SAME", dimension_numbers=dn,
                                          feature_group_count=groups)
            return (y * y).sum()
        return loss

    def cnn(lax_, x, w1, w2):
        h = lax_.max(lax_.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=nhwc),
                     0.0)
        h = lax_.max(lax_.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=nhwc),
                     0.0)
        return (h * h).sum()

    def normal(*shape, scale=1.0):
        return (rng.normal(size=shape) * scale).astype(np.float32)
    cases = {
        "conv2d 3x3 NCHW b32 64->64 32x32": (single(("NCHW", "OIHW", "NCHW")),
                                             (normal(32, 64, 32, 32), normal(64, 64, 3, 3))),
        "conv2d 3x3 stride 2 b32 64->128 32x32": (single(nhwc, (2, 2)),
                                                  (normal(*CONV_X), normal(3, 3, 64, 128))),
        "conv2d 1x1 b32 64->128 32x32": (single(nhwc), (normal(*CONV_X), normal(1, 1, 64, 128))),
        "depthwise 3x3 b32 c64 32x32": (single(nhwc, groups=64),
                                        (normal(*CONV_X), normal(3, 3, 1, 64))),
        "CNN 28x28x1 -> 32 -> 64 b128": (cnn, (normal(128, 28, 28, 1), normal(3, 3, 1, 32,
                                                                               scale=0.3),
                                               normal(3, 3, 32, 64, scale=0.06))),
    }
    for name, (loss, args) in cases.items():
        ours, theirs = _interleaved(*_conv_grad_pair(loss, args))
        print(f"{name + ' fwd+bwd':<44} ptojax {fmt(ours[0])}  jax {fmt(theirs[0])}  ratio "
              f"{ours[0] / theirs[0]:5.2f}x  (CPU time ratio {ours[1] / theirs[1]:5.2f}x)")


def bench_int8_matmul():
    import ptojax as pto
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (INT8_N, INT8_N)).astype(np.int8)
    b = rng.integers(-128, 128, (INT8_N, INT8_N)).astype(np.int8)
    ours = pto.jit(lambda p, q: pto.lax.dot_general(p, q, (((1,), (0,)), ((), ())),
                                                    preferred_element_type=np.int32))
    exact = a.astype(np.int32) @ b.astype(np.int32)
    np.testing.assert_array_equal(np.asarray(ours(a, b)), exact)
    t_ours = best_time(lambda: np.asarray(ours(a, b)), repeat=3)
    t_numpy = best_time(lambda: a.astype(np.int32) @ b.astype(np.int32), repeat=3)
    print(f"{'int8 matmul 1024^3 -> int32 (exact)':<44} ptojax {fmt(t_ours)}  numpy "
          f"{fmt(t_numpy)}  ratio {t_ours / t_numpy:5.2f}x")


def gemm_estimate(dtype, out_dtype):
    import ptojax as pto
    spec = pto.ShapeDtypeStruct((GEMM_N, GEMM_N), dtype)
    fn = pto.jit(lambda p, q: pto.lax.dot_general(p, q, (((1,), (0,)), ((), ())),
                                                  preferred_element_type=out_dtype))
    return fn.lower(spec, spec, target=pto.targets.ascend910b).cost()


def bench_gemm_estimates():
    import ptojax as pto
    int8 = gemm_estimate(pto.int8, np.int32)
    fp16 = gemm_estimate(pto.float16, np.float32)
    flops = 2 * GEMM_N ** 3
    for name, c in (("int8 (int32 acc)", int8), ("fp16 (fp32 acc)", fp16)):
        seconds = c.total_seconds
        print(f"910B estimate GEMM 4096^3 {name:<18} {fmt(seconds)}  "
              f"{flops / seconds / 1e12:7.1f} T(FL)OPS")
    print(f"{'int8 speed-up over fp16 (estimate)':<44} "
          f"{fp16.total_seconds / int8.total_seconds:5.2f}x")
    print(int8)


def conv_estimate(expanded):
    """The 910B cost report of conv2d 3x3 b32 c64 32x32 fp16 (NHWC, SAME): the on-chip im2col
    cube kernel (TIMG2COL), or with ``expanded`` the im2col expansion in primitives (pad,
    strided slices, concatenate: the im2col matrix written to GM) feeding a matmul kernel,
    which is how the tiler ran every convolution before."""
    import ptojax as pto
    from ptojax.ops.convolution import _im2col    # the expansion the tile fact falls back to
    x = pto.ShapeDtypeStruct(CONV_X, pto.float16)
    w = pto.ShapeDtypeStruct(CONV_W, pto.float16)

    def conv(a, b):
        return pto.lax.conv_general_dilated(a, b, (1, 1), "SAME",
                                            dimension_numbers=("NHWC", "HWIO", "NHWC"))
    if expanded:
        ir = pto.make_ir(conv)(np.zeros(CONV_X, np.float16), np.zeros(CONV_W, np.float16))
        params = ir.ir.eqns[-1].params
        fn = pto.jit(lambda a, b: _im2col(a, b, **params))
    else:
        fn = pto.jit(conv)
    return fn.lower(x, w, target=pto.targets.ascend910b).cost()


def _gm_bytes(report) -> int:
    return sum(row.bytes for row in report)


def bench_conv_estimates():
    before, after = conv_estimate(expanded=True), conv_estimate(expanded=False)
    for name, c in (("im2col expansion (GM im2col)", before), ("on-chip TIMG2COL", after)):
        print(f"910B estimate conv2d 3x3 b32 c64 32x32 fp16, {name:<29} "
              f"{fmt(c.total_seconds)}  GM {_gm_bytes(c) / 1e6:7.1f} MB  "
              f"({len(list(c))} ops)")
    print(f"{'on-chip im2col speed-up (estimate)':<44} "
          f"{before.total_seconds / after.total_seconds:5.2f}x")
    print(after)


def bench_conv_fp16_host():
    """conv2d 3x3 b32 c64 32x32 fp16 forward on the host (pto.jit's cpu backend, compiled
    kernels): the on-chip im2col kernel vs the expansion it replaced vs JAX; interleaved
    rounds, medians (the host has no on-chip memory: this checks the kernel runs well here,
    the 910B gain is the cost model's)."""
    import jax
    import ptojax as pto
    from ptojax.lower.host.backend import CpuBackend
    from ptojax.ops.convolution import _im2col
    rng = np.random.default_rng(0)
    x = rng.normal(size=CONV_X).astype(np.float16)
    w = (rng.normal(size=CONV_W) / 24).astype(np.float16)
    nhwc = ("NHWC", "HWIO", "NHWC")

    def conv(a, b):
        return pto.lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=nhwc)
    params = pto.make_ir(conv)(x, w).ir.eqns[0].params
    backend = CpuBackend(tiered=False, min_elements=0)
    fns = {"on-chip im2col": pto.jit(conv, backend=backend),
           "im2col expansion": pto.jit(lambda a, b: _im2col(a, b, **params), backend=backend),
           "JAX": jax.jit(lambda a, b: jax.lax.conv_general_dilated(
               a, b, (1, 1), "SAME", dimension_numbers=nhwc))}
    want = np.asarray(fns["JAX"](x, w)).astype(np.float32)
    times = {k: [] for k in fns}
    for k, f in fns.items():
        np.testing.assert_allclose(np.asarray(f(x, w)).astype(np.float32), want, atol=2e-2)
    for _ in range(9):
        for k, f in fns.items():
            times[k].append(best_time(lambda: np.asarray(f(x, w)), repeat=1, number=1))
    med = {k: float(np.median(v)) for k, v in times.items()}
    print("host conv2d 3x3 b32 c64 32x32 fp16 fwd, medians: " + "  ".join(
        f"{k} {fmt(v)}" for k, v in med.items())
        + f"  ratio on-chip/JAX {med['on-chip im2col'] / med['JAX']:5.2f}x")


if __name__ == "__main__":
    bench_conv()
    bench_conv_cases()
    bench_int8_matmul()
    bench_gemm_estimates()
    bench_conv_estimates()
    bench_conv_fp16_host()
