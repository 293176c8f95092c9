"""Host builds of the on-chip im2col convolution kernel (TIMG2COL from an L1 feature map into
L0A, ``pto_host_img2col.h``) against JAX: the PTO-faithful build under the sync checker
(strided, asymmetrically padded, rhs-dilated fp16 in NCHW, in feature-map bands), and the
fused build (the default: its im2col blocks filled by the same host function, multiplied by
the GEMM worker) on strided int8 -> int32 with a relu epilogue, exactly."""
import numpy as np

import ptojax as pto
from ptojax import lax
from helpers import conv_operands
from host_cases import executable_of, host_jit, kernels_of


def _has_img2col(kernel) -> bool:
    body = kernel.params["bodies"][0]
    return any(e.prim.name == "tile_img2col" for e in body.eqns)


def test_pto_build_runs_timg2col_under_the_sync_checker(jax):
    """Tiles of 32 positions of a 20-row image: feature-map bands with per-tile top pads."""
    x, w = conv_operands((2, 16, 20, 16), (16, 16, 3, 3), np.float16)
    kw = dict(window_strides=(2, 1), padding=[(2, 1), (1, 1)], rhs_dilation=(2, 1))

    def f(a, b):
        return lax.conv_general_dilated(a, b, **kw)
    host = host_jit(f, check_sync=True, tile_config=pto.TileConfig(cube=(32, 32, 16)),
                    target=pto.targets.host_cpu)     # host_jit runs float convs in BLAS
    got = np.asarray(host(x, w)).astype(np.float32)
    (kernel,) = kernels_of(host, x, w)
    assert _has_img2col(kernel)
    (fmap,) = [e for e in kernel.params["bodies"][0].eqns
               if e.prim.name == "tile_load" and e.params.get("stage") == "fmap"]
    assert fmap.params["shape"][0] < 20 * 16
    want = np.asarray(jax.lax.conv_general_dilated(x.astype(np.float32), w.astype(np.float32),
                                                   precision=jax.lax.Precision.HIGHEST, **kw))
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.abs(want).max())


def test_fused_build_int8_conv_with_relu_epilogue_is_exact(jax):
    x, w = conv_operands((2, 7, 6, 32), (3, 2, 32, 16), np.int8)
    nhwc = ("NHWC", "HWIO", "NHWC")
    kw = dict(window_strides=(2, 1), padding="SAME", dimension_numbers=nhwc)

    def f(a, b):
        return pto.nn.relu(lax.conv_general_dilated(a, b, preferred_element_type=np.int32, **kw))
    host = host_jit(f, kernels="fused")
    got = np.asarray(host(x, w))
    (kernel,) = kernels_of(host, x, w)
    assert _has_img2col(kernel)
    program = executable_of(host, x, w).program
    assert program.kernels == "fused" and program.fused_error is None
    want = np.maximum(np.asarray(jax.lax.conv_general_dilated(
        x.astype(np.int32), w.astype(np.int32), **kw)), 0)
    np.testing.assert_array_equal(got, want)
