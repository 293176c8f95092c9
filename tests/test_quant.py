"""pto.quant: quantize/dequantize round-trip bounds (int8 symmetric and asymmetric, uint8,
fp8), quantized matmuls against the exact product of the dequantized operands (per tensor,
per channel, asymmetric lhs, int8 and fp8), the dequantizing epilogue fused into the cube
kernel and run by host kernels, and the straight-through gradient of fake_quant."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import quant
from helpers import assert_close

F8 = [np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)]
I8, U8 = np.dtype(np.int8), np.dtype(np.uint8)

values = hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                    elements=st.floats(-1e4, 1e4, width=32))


def _axis(draw_axis, x):
    return None if draw_axis is None else draw_axis % x.ndim


def _roundtrip(q):
    return np.asarray(quant.dequantize(q), np.float64)


@given(x=values, axis=st.one_of(st.none(), st.integers(0, 2)))
def test_int8_symmetric_round_trip_is_within_half_a_step(x, axis):
    q = quant.quantize(x, np.int8, axis=_axis(axis, x))
    v = np.asarray(q.values)
    assert v.dtype == I8 and v.min(initial=0) >= -127
    scale = np.asarray(q.scale, np.float64)
    err = np.abs(_roundtrip(q) - x)
    assert (err <= scale * (0.5 + 1e-5) + np.abs(x) * 1e-6).all()


@given(x=values, axis=st.one_of(st.none(), st.integers(0, 2)),
       dtype=st.sampled_from([I8, U8]))
def test_asymmetric_round_trip_is_within_half_a_step(x, axis, dtype):
    q = quant.quantize(x, dtype, axis=_axis(axis, x), symmetric=False)
    assert np.asarray(q.values).dtype == dtype
    scale = np.asarray(q.scale, np.float64)
    err = np.abs(_roundtrip(q) - x)
    assert (err <= scale * (0.5 + 1e-4) + np.abs(x) * 1e-6).all()


@given(x=values, axis=st.one_of(st.none(), st.integers(0, 2)), dtype=st.sampled_from(F8))
def test_fp8_round_trip_is_within_half_an_fp8_ulp(x, axis, dtype):
    q = quant.quantize(x, dtype, axis=_axis(axis, x))
    info = ml_dtypes.finfo(dtype)
    scale = np.asarray(q.scale, np.float64)
    scaled = np.abs(x) / scale
    # half the spacing of the fp8 binade holding |x| / scale (subnormal spacing below it)
    exponent = np.floor(np.log2(np.maximum(scaled, float(info.tiny))))
    half_ulp = 2.0 ** (exponent - info.nmant - 1)
    err = np.abs(_roundtrip(q) - x)
    assert (err <= scale * half_ulp * (1 + 1e-3) + np.abs(x) * 1e-6).all()


def test_per_channel_scales_keep_the_channel_axis():
    x = np.random.default_rng(0).normal(size=(4, 5, 6)).astype(np.float32)
    assert quant.quantize(x, axis=1).scale.shape == (1, 5, 1)
    assert quant.quantize(x).scale.shape == (1, 1, 1)
    q = quant.quantize(x, axis=-1, symmetric=False)
    assert q.axis == 2 and q.zero_point.shape == (1, 1, 6)


def test_an_all_zero_channel_quantizes_to_zero():
    x = np.zeros((3, 4), np.float32)
    x[:, 1] = [1.0, -2.0, 0.5]
    q = quant.quantize(x, axis=1)
    assert_close(quant.dequantize(q), x, rtol=0, atol=2.0 / 127 / 2)
    assert np.isfinite(np.asarray(q.scale)).all()


def _operands(m=48, k=80, n=40, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(m, k)).astype(np.float32),
            rng.normal(size=(k, n)).astype(np.float32))


def _dequantized_product(lq, rq):
    return _roundtrip(lq) @ _roundtrip(rq)


@pytest.mark.parametrize("dtype", [I8, *F8], ids=str)
@pytest.mark.parametrize("lhs_axis", [None, 0])
def test_quantized_matmul_is_the_product_of_the_dequantized_operands(dtype, lhs_axis):
    x, w = _operands()
    lq, rq = quant.quantize(x, dtype, axis=lhs_axis), quant.quantize(w, dtype, axis=1)
    out = quant.quantized_matmul(lq, rq)
    assert out.dtype == np.float32
    assert_close(out, _dequantized_product(lq, rq).astype(np.float32), scale=4)
    # and it approximates the float product
    rel = np.abs(np.asarray(out) - x @ w).max() / np.abs(x @ w).max()
    assert rel < {I8: 0.02, F8[0]: 0.06, F8[1]: 0.12}[dtype]


def test_quantized_matmul_with_an_asymmetric_lhs():
    x, w = _operands(seed=1)
    x = x + 3.0                                   # a one-sided range: asymmetric helps
    lq = quant.quantize(x, I8, axis=0, symmetric=False)
    rq = quant.quantize(w, I8, axis=1)
    assert_close(quant.quantized_matmul(lq, rq),
                 _dequantized_product(lq, rq).astype(np.float32), scale=10)


def test_float_operands_are_quantized_on_the_fly():
    x, w = _operands(seed=2)
    rq = quant.quantize(w, I8, axis=1)
    assert_close(quant.quantized_matmul(x, rq),
                 quant.quantized_matmul(quant.quantize(x, I8), rq))


@pytest.mark.parametrize("dtype", [I8, F8[0]], ids=str)
def test_dequantize_epilogue_fuses_into_the_cube_kernel_and_runs_on_host_kernels(dtype):
    x, w = _operands(100, 70, 50, seed=3)
    lq, rq = quant.quantize(x, dtype, axis=0), quant.quantize(w, dtype, axis=1)
    tiled = pto.tile(quant.quantized_matmul, target=pto.targets.host_cpu)
    kernels = [e for e in pto.make_ir(tiled)(lq, rq).eqns if e.prim.name == "tile_kernel"]
    assert [k.params["kind"] for k in kernels] == ["cube"]
    (kernel,) = kernels
    body_ops = {e.prim.name for e in kernel.params["bodies"][0].eqns}
    assert {"tile_matmul", "tile_mul"} <= body_ops
    if dtype == I8:                                 # the int32 accumulator becomes float
        assert "tile_convert_element_type" in body_ops
    eager = quant.quantized_matmul(lq, rq)
    assert_close(tiled(lq, rq), eager)
    host = pto.jit(quant.quantized_matmul, backend=pto.lower.host.backend.CpuBackend(
        tiered=False, min_elements=0, target=pto.targets.host_cpu))
    assert_close(host(lq, rq), eager)


def test_quantized_matmul_errors():
    x, w = _operands(4, 6, 3)
    with pytest.raises(pto.errors.ShapeError, match="contracts"):
        quant.quantized_matmul(quant.quantize(x, axis=1), quant.quantize(w, axis=1))
    with pytest.raises(pto.errors.DtypeError, match="one dtype"):
        quant.quantized_matmul(quant.quantize(x, I8), quant.quantize(w, F8[0], axis=1))
    with pytest.raises(ValueError, match="symmetrically"):
        quant.quantized_matmul(x, quant.quantize(w, I8, axis=1, symmetric=False))
    with pytest.raises(pto.errors.DtypeError, match="cannot quantize"):
        quant.quantize(x, np.float16)
    with pytest.raises(ValueError, match="signed"):
        quant.quantize(x, U8)


def test_fake_quant_rounds_forward_and_passes_gradients_straight_through():
    x, _ = _operands(8, 16, 1, seed=4)
    fq = quant.fake_quant(x, I8, axis=0)
    assert_close(fq, quant.dequantize(quant.quantize(x, I8, axis=0)))
    g = pto.grad(lambda v: pnp.sum(quant.fake_quant(v, I8, axis=0) * x))(x)
    assert_close(g, x)                             # d/dv sum(fq(v) * x) = x under STE
    gj = pto.jit(pto.grad(lambda v: pnp.sum(quant.fake_quant(v) ** 2)))(x)
    assert_close(gj, 2 * np.asarray(quant.fake_quant(x)))
