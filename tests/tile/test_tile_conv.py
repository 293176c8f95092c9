"""Convolutions as one cube kernel with the im2col expanded on chip (tile_img2col / TIMG2COL):
values against JAX through the numpy tile interpreter, the kernel's structure (no im2col
matrix in GM), the PTO text, the fallback to the im2col expansion and its reasons, the
gradients that take the same path, and the cost model's GM traffic."""
import numpy as np
import pytest

import ptojax as pto
from ptojax import lax
from ptojax.ops.convolution import conv_general_dilated_p
from ptojax.tile.img2col import Img2colConfig, img2col_block
from ptojax.tile.rules import direct_conv_reason
from helpers import conv_operands

TARGET = pto.targets.ascend910b
NHWC = ("NHWC", "HWIO", "NHWC")
TOL = {np.float16: 2e-2, "bfloat16": 8e-2}


def _jax_conv(jax, x, w, *, out=np.float32, **kw):
    f32 = np.float32 if out != np.int32 else np.int32
    return np.asarray(jax.lax.conv_general_dilated(
        x.astype(f32), w.astype(f32), precision=jax.lax.Precision.HIGHEST, **kw))


def _kernels(fn, *args):
    return [e for e in pto.make_ir(pto.tile(fn, target=TARGET))(*args).eqns
            if e.prim.name == "tile_kernel"]


def _body_prims(kernel):
    out = set()

    def walk(ir):
        for e in ir.eqns:
            out.add(e.prim.name)
            if "body" in e.params:
                b = e.params["body"]
                walk(getattr(b, "ir", b))
    walk(kernel.params["bodies"][0])
    return out


# dimension numbers, strides, padding, rhs dilation, x shape, w shape (channels: multiples of
# int8's C0 = 32)
CASES = {
    "nhwc-same": (NHWC, (1, 1), "SAME", (1, 1), (2, 8, 8, 32), (3, 3, 32, 32)),
    "nchw-valid-strided": (None, (2, 2), "VALID", (1, 1), (2, 32, 9, 9), (32, 32, 3, 3)),
    "asymmetric-pads-dilated": (NHWC, (2, 1), [(1, 2), (0, 1)], (1, 2), (1, 7, 9, 32),
                                (3, 3, 32, 16)),
    "1x1": (NHWC, (1, 1), "VALID", (1, 1), (2, 4, 4, 32), (1, 1, 32, 48)),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float16, "bfloat16", np.int8])
def test_conv_tiles_as_one_on_chip_im2col_kernel_matching_jax(jax, case, dtype):
    dn, strides, padding, rhs_dil, xs, ws = CASES[case]
    dt = pto.dtypes.bfloat16 if dtype == "bfloat16" else dtype
    x, w = conv_operands(xs, ws, dt)
    out = np.int32 if dtype == np.int8 else None

    def f(a, b):
        return lax.conv_general_dilated(a, b, strides, padding, rhs_dilation=rhs_dil,
                                        dimension_numbers=dn, preferred_element_type=out)
    (kernel,) = _kernels(f, x, w)
    prims = _body_prims(kernel)
    assert kernel.params["kind"] == "cube"
    assert {"tile_img2col", "tile_matmul"} <= prims
    got = np.asarray(pto.tile(f, target=TARGET)(x, w))
    want = _jax_conv(jax, x, w, out=out or np.float32, window_strides=strides, padding=padding,
                     rhs_dilation=rhs_dil, dimension_numbers=dn)
    if dtype == np.int8:
        np.testing.assert_array_equal(got, want)      # int8 -> int32 is exact
    else:
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=TOL[dtype],
                                   atol=TOL[dtype] * np.abs(want).max())


def test_no_im2col_matrix_crosses_gm_and_the_epilogue_fuses():
    """The program is the kernel alone (NHWC needs no transposes): no pad, slice or
    concatenate at tensor level; a bias and relu run as the cube kernel's epilogue."""
    x, w = conv_operands((2, 8, 8, 16), (3, 3, 16, 32), np.float16)
    bias = np.linspace(-1, 1, 32).astype(np.float16)

    def f(a, b, c):
        return pto.nn.relu(lax.conv_general_dilated(a, b, (1, 1), "SAME",
                                                    dimension_numbers=NHWC) + c)
    ir = pto.make_ir(pto.tile(f, target=TARGET))(x, w, bias)
    assert [e.prim.name for e in ir.eqns] == ["tile_kernel"]
    kernel = ir.eqns[0]
    prims = _body_prims(kernel)
    assert {"tile_img2col", "tile_select"} <= prims
    loads = [e for e in kernel.params["bodies"][0].eqns if e.prim.name == "tile_load"]
    fmap = [e for e in loads if e.params.get("stage") == "fmap"]
    assert len(fmap) == 1 and fmap[0].params["space"] == "L1"
    assert fmap[0].params["shape"] == (64, 16)     # one image, H*W x C, loaded once per tile
    want = np.maximum(f(x.astype(np.float32), w.astype(np.float32), bias.astype(np.float32)), 0)
    got = np.asarray(pto.tile(f, target=TARGET)(x, w, bias)).astype(np.float32)
    np.testing.assert_allclose(got, np.asarray(want), rtol=2e-2, atol=2e-2)


def test_pto_text_has_timg2col_the_fmatrix_config_and_no_gm_im2col():
    x, w = conv_operands((2, 8, 8, 16), (3, 3, 16, 32), np.float16)

    def f(a, b):
        return lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=NHWC)
    lowered = pto.jit(f).lower(x, w, target=TARGET)
    text = lowered.as_text("pto")
    assert "pto.timg2col ins(" in text and "pto.tsetfmatrix" in text
    assert "pto.tset_img2col_padding" in text and "loc=left" in text
    assert "loc=mat, dtype=f16, rows=64, cols=16" in text        # the feature map in L1
    assert "padList2 = 1" in text and "filterH = 3" in text
    assert "concatenate" not in text and "textract ins(%t0" not in text
    cpp = lowered.as_text("pto-cpp")
    assert "TIMG2COL(" in cpp and "TSETFMATRIX(icfg);" in cpp
    assert cpp.count("TLOAD(t0,") == 1        # the feature map: one TLOAD per tile


FALLBACKS = {   # kwargs, x shape, w shape, the reason the direct kernel gives
    "lhs-and-rhs-dilation": (dict(lhs_dilation=(2, 2), rhs_dilation=(2, 2)), (1, 16, 5, 5),
                             (16, 16, 3, 3), "lhs dilation"),
    "groups": (dict(feature_group_count=2), (1, 32, 6, 6), (32, 16, 3, 3), "grouped"),
    "1-d": ({}, (2, 16, 12), (16, 16, 3), "1-d convolution"),
}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_other_convolutions_keep_the_im2col_expansion_with_a_stated_reason(jax, case):
    kw, xs, ws, reason = FALLBACKS[case]
    x, w = conv_operands(xs, ws, np.float16)
    k = len(xs) - 2

    def f(a, b):
        return lax.conv_general_dilated(a, b, (1,) * k, [(1, 1)] * k, **kw)
    (eqn,) = [e for e in pto.make_ir(f)(x, w).eqns if e.prim is conv_general_dilated_p]
    assert reason in direct_conv_reason(eqn, TARGET)
    ir = pto.make_ir(pto.tile(f, target=TARGET))(x, w)
    assert not any("tile_img2col" in _body_prims(e) for e in ir.eqns
                   if e.prim.name == "tile_kernel")
    want = _jax_conv(jax, x, w, window_strides=(1,) * k, padding=[(1, 1)] * k, **kw)
    got = np.asarray(pto.tile(f, target=TARGET)(x, w)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.abs(want).max())


@pytest.mark.parametrize("stride, on_chip_kernels", [(1, 2), (2, 1 + 4)])
def test_gradients_run_as_on_chip_im2col_kernels(jax, stride, on_chip_kernels):
    """The input gradient is a convolution with lhs dilation = stride: one kernel for stride
    1, four phase kernels for stride 2; the filter gradient one over the batch as its
    channels with rhs dilation = stride. The forward convolution is dead in a gradient."""
    x, w = conv_operands((16, 8, 8, 16), (3, 3, 16, 16), np.float16)
    ct = conv_operands((16, 8 // stride, 8 // stride, 16), (1,), np.float16, seed=1)[0]

    def loss(a, b):
        y = lax.conv_general_dilated(a, b, (stride, stride), "SAME", dimension_numbers=NHWC)
        return (y.astype(np.float32) * ct.astype(np.float32)).sum()
    grad = pto.grad(loss, argnums=(0, 1))
    kernels = _kernels(grad, x, w)
    on_chip = sum("tile_img2col" in _body_prims(k) for k in kernels)
    assert on_chip == on_chip_kernels
    got = pto.tile(grad, target=TARGET)(x, w)
    want = jax.jit(jax.grad(lambda a, b: (jax.lax.conv_general_dilated(
        a, b, (stride, stride), "SAME", dimension_numbers=NHWC) * ct.astype(np.float32)).sum(),
        argnums=(0, 1)))(x.astype(np.float32), w.astype(np.float32))
    for g, e in zip(got, want):
        e = np.asarray(e)
        np.testing.assert_allclose(np.asarray(g).astype(np.float32), e, rtol=3e-2,
                                   atol=3e-2 * np.abs(e).max())


def test_img2col_block_is_the_im2col_matrix_window():
    """The interpreter's TIMG2COL semantics against a direct im2col of the padded image."""
    rng = np.random.default_rng(3)
    H, W, C, KH, KW = 5, 6, 4, 2, 3
    cfg = Img2colConfig((H, W, C), (KH, KW), (2, 1), (2, 1), ((1, 0), (2, 1)), (2, 7))
    img = rng.standard_normal((H, W, C)).astype(np.float32)
    padded = np.pad(img, ((1, 0), (2, 1), (0, 0)))
    full = np.stack([np.concatenate([padded[oh * 2 + kh * 2, ow + kw]
                                     for kh in range(KH) for kw in range(KW)])
                     for oh in range(2) for ow in range(7)])
    block = img2col_block(img.reshape(H * W, C), 5, 7, 9, 10, cfg)
    np.testing.assert_array_equal(block, full[5:14, 7:17])


def test_cost_model_gm_traffic_drops_without_the_gm_im2col():
    """conv2d 3x3 b32 c64 32x32 fp16: the on-chip kernel's GM bytes are the input, filter
    and output (about 15 MB), the expansion's an order of magnitude more."""
    from ptojax.ops.convolution import _im2col
    x = pto.ShapeDtypeStruct((32, 32, 32, 64), pto.float16)
    w = pto.ShapeDtypeStruct((3, 3, 64, 64), pto.float16)

    def conv(a, b):
        return lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=NHWC)
    after = pto.jit(conv).lower(x, w, target=TARGET).cost()
    (row,) = list(after)
    assert row.kind == "cube" and row.bytes < 20e6
    params = pto.make_ir(conv)(np.zeros((32, 32, 32, 64), np.float16),
                               np.zeros((3, 3, 64, 64), np.float16)).ir.eqns[0].params
    before = pto.jit(lambda a, b: _im2col(a, b, **params)).lower(x, w, target=TARGET).cost()
    assert sum(r.bytes for r in before) > 10 * row.bytes
    assert before.total_seconds > 5 * after.total_seconds


def test_explicit_cube_config_tiles_the_conv_or_names_the_fix(jax):
    x, w = conv_operands((2, 8, 8, 32), (3, 3, 32, 24), np.float16)

    def f(a, b):
        return lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=NHWC)
    want = _jax_conv(jax, x, w, window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC)
    tiled = pto.tile(f, pto.TileConfig(cube=(32, 48, 16)), target=TARGET)
    (kernel,) = [e for e in pto.make_ir(tiled)(x, w).eqns if e.prim.name == "tile_kernel"]
    assert kernel.params["cube"] == (32, 48, 16)      # K = 288 = 6 steps, N = 24: ragged
    got = np.asarray(tiled(x, w)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.abs(want).max())
    with pytest.raises(pto.errors.TileError, match="output positions of an image.*Fix: m=32"):
        pto.tile(f, pto.TileConfig(cube=(48, 32, 16)), target=TARGET)(x, w)


def test_channels_off_c0_are_zero_padded_into_the_on_chip_kernel(jax):
    """An RGB input layer: its 3 channels padded to C0 = 16 at tensor level (input and
    filter), then the on-chip im2col kernel."""
    x, w = conv_operands((2, 3, 8, 8), (16, 3, 3, 3), np.float16)

    def f(a, b):
        return lax.conv_general_dilated(a, b, (1, 1), "SAME")
    (eqn,) = pto.make_ir(f)(x, w).eqns
    assert direct_conv_reason(eqn, TARGET) is None
    ir = pto.make_ir(pto.tile(f, target=TARGET))(x, w)
    kernels = [e for e in ir.eqns if e.prim.name == "tile_kernel"]
    assert len(kernels) == 1 and "tile_img2col" in _body_prims(kernels[0])
    assert kernels[0].inputs[0].type.shape == (2, 8, 8, 16)
    want = _jax_conv(jax, x, w, window_strides=(1, 1), padding="SAME")
    got = np.asarray(pto.tile(f, target=TARGET)(x, w)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.abs(want).max())


@pytest.mark.parametrize("kw", [
    dict(window_strides=(1, 1), padding="SAME", rhs_dilation=(1, 1)),
    dict(window_strides=(2, 1), padding=[(2, 1), (1, 1)], rhs_dilation=(2, 1)),
    dict(window_strides=(1, 2), padding=[(0, 2), (1, 0)], rhs_dilation=(1, 1)),
])
def test_tiles_of_a_few_output_rows_load_a_band_of_image_rows(jax, kw):
    """A tile of 32 output positions (2 rows of 16) loads only the image rows it reads, with
    its top pad set per tile (the band clamped into the image at the top and the bottom)."""
    x, w = conv_operands((2, 20, 16, 16), (3, 3, 16, 16), np.float16)

    def f(a, b):
        return lax.conv_general_dilated(a, b, dimension_numbers=NHWC, **kw)
    tiled = pto.tile(f, pto.TileConfig(cube=(32, 32, 16)), target=TARGET)
    (kernel,) = [e for e in pto.make_ir(tiled)(x, w).eqns if e.prim.name == "tile_kernel"]
    (fmap,) = [e for e in kernel.params["bodies"][0].eqns if e.prim.name == "tile_load"
               and e.params.get("stage") == "fmap"]
    assert fmap.params["shape"][0] < 20 * 16               # a band, not the image
    want = _jax_conv(jax, x, w, dimension_numbers=NHWC, **kw)
    got = np.asarray(tiled(x, w)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.abs(want).max())


def test_resnet_56x56_layer_runs_on_chip_in_bands():
    """conv 3x3 b32 c64 56x56 fp16: one image (401 KB) exceeds a quarter of L1, so tiles of
    four output rows load six-row bands; the model's GM traffic (input, output, the filter
    panels each tile reads) is below the im2col matrix's size alone."""
    x = pto.ShapeDtypeStruct((32, 56, 56, 64), pto.float16)
    w = pto.ShapeDtypeStruct((3, 3, 64, 64), pto.float16)

    def f(a, b):
        return lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=NHWC)
    (row,) = list(pto.jit(f).lower(x, w, target=TARGET).cost())
    assert row.kind == "cube" and row.bytes < 32 * 56 * 56 * (9 * 64) * 2


@pytest.mark.parametrize("padding", ["SAME", "VALID", ((2, 1), (0, 1))])
def test_transposed_conv_splits_into_phase_kernels(jax, padding):
    """A stride-2 conv_transpose (lhs dilation 2): four dilation-free phase convolutions of
    the undilated input with the subsampled filter, each an on-chip im2col kernel, their
    outputs interleaved; no dilated input or im2col matrix in GM."""
    x, w = conv_operands((2, 5, 6, 16), (3, 4, 16, 32), np.float16)

    def f(a, b):
        return lax.conv_transpose(a, b, (2, 2), padding, dimension_numbers=NHWC)
    ir = pto.make_ir(pto.tile(f, target=TARGET))(x, w)
    kernels = [e for e in ir.eqns if e.prim.name == "tile_kernel"]
    assert len(kernels) == 4 and all("tile_img2col" in _body_prims(k) for k in kernels)
    assert all(e.prim.name != "pad" or all(c[2] == 0 for c in e.params["padding_config"])
               for e in ir.eqns)                           # no interior (dilation) padding
    want = np.asarray(jax.lax.conv_transpose(x.astype(np.float32), w.astype(np.float32),
                                             (2, 2), padding, dimension_numbers=NHWC))
    got = np.asarray(pto.tile(f, target=TARGET)(x, w)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2 * np.abs(want).max())

