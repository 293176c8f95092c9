"""Block-scaled matrix products (JAX's ``jax.nn.scaled_matmul``, MX/NVFP4 quantization):
``scaled_matmul`` multiplies low-precision operands whose every block of ``K / K_s``
contracted elements shares one scale, ``quantize`` makes such operands and scales from
high-precision values, ``get_scaled_dot_general_config`` names the two recipes JAX has:

- ``mxfp8``: float8_e4m3fn values, one float8_e8m0fnu scale (a power of two, rounded up
  from ``max|x| / 448``) per 32 elements;
- ``nvfp4``: float4_e2m1fn values, one float8_e4m3fn scale (``max|x| / 6``, after dividing
  by a float32 ``global_scale``) per 16 elements.

Written with ``ptojax.numpy`` and ``ptojax.lax`` (the product is a float32 einsum of the
dequantized operands, as JAX defines it), so jit, grad and vmap trace through. JAX runs these
only through cuDNN (on CPU it raises NotImplementedError); ptojax computes them anywhere.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.public import add_examples as _add_examples

_F32 = dtypes.float32


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
    """One operand's block-scaling recipe (JAX's ``BlockScaleConfig``): ``mode``
    ("mxfp8"/"nvfp4"), ``block_size``, the quantized ``data_type`` and ``scale_type``, the
    nvfp4 ``global_scale`` (a float32 array, else None) and ``infer_only``."""
    mode: str
    block_size: int
    data_type: object
    scale_type: object
    global_scale: object
    infer_only: bool


def get_scaled_dot_general_config(mode, global_scale=None):
    """The ``BlockScaleConfig`` of ``mode`` ("mxfp8" or "nvfp4", as JAX) for
    ``scaled_dot_general``; nvfp4's ``global_scale`` defaults to ``ones((1,), float32)``."""
    if mode == "nvfp4":
        scale = pnp.ones((1,), _F32) if global_scale is None else global_scale
        return BlockScaleConfig("nvfp4", 16, dtypes.float4_e2m1fn, dtypes.float8_e4m3fn,
                                scale, False)
    if mode == "mxfp8":
        return BlockScaleConfig("mxfp8", 32, dtypes.float8_e4m3fn, dtypes.float8_e8m0fnu,
                                None, False)
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """Block-scaled batched matmul: ``lhs`` (B, M, K) times ``rhs`` (B, N, K) contracted over
    K, each element multiplied by its block's scale (``lhs_scales`` (B, M, K_s), blocks of
    ``K / K_s``), accumulated in float32 and returned as ``preferred_element_type``
    (B, M, N). As JAX's, which runs only on cuDNN (NotImplementedError on CPU)."""
    lhs, rhs, lhs_scales, rhs_scales = map(pnp.asarray, (lhs, rhs, lhs_scales, rhs_scales))
    _check_scaled_matmul_shapes(lhs, rhs, lhs_scales, rhs_scales)
    out_dtype = dtypes.user_dtype(preferred_element_type, "scaled_matmul")
    a = _dequantized(lhs, lhs_scales)
    b = _dequantized(rhs, rhs_scales)
    out = lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,))), preferred_element_type=_F32)
    return out.astype(out_dtype)


def _check_scaled_matmul_shapes(a, b, a_scales, b_scales):
    """JAX's checks and messages (ValueError)."""
    if not all(x.ndim == 3 for x in (a, b, a_scales, b_scales)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    if a.shape[2] != b.shape[2] or a.shape[0] != b.shape[0]:
        raise ValueError(f"scaled_matmul requires inputs a and b to have matching batch (B) "
                         f"and contract (K) dimensions, but got shapes {a.shape} and "
                         f"{b.shape}")
    if a_scales.shape[2] != b_scales.shape[2] or a_scales.shape[0] != b_scales.shape[0]:
        raise ValueError(f"scaled_matmul requires scales to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a_scales.shape} and "
                         f"{b_scales.shape}")
    if a_scales.shape[1] != a.shape[1] or b_scales.shape[1] != b.shape[1]:
        raise ValueError(f"scaled_matmul requires scales to match non-contract dimensions of "
                         f"inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
                         f"{a_scales.shape}, b_scales: {b_scales.shape}")
    k, k_s = a.shape[2], a_scales.shape[2]
    if k_s == 0 or k % k_s:
        raise ValueError(f"scaled_matmul: the contracted size {k} must be a multiple of the "
                         f"scales' last dimension {k_s} (one scale per block of K / K_s)")


def _dequantized(x, scales):
    """``x`` in float32, each element times its block's scale."""
    b, m, k = x.shape
    blocks = x.astype(_F32).reshape(b, m, scales.shape[2], k // scales.shape[2])
    return (blocks * scales.astype(_F32)[..., None]).reshape(b, m, k)


# quantization -------------------------------------------------------------------------------
def quantize(x, config: BlockScaleConfig):
    """``x`` (B, M, K) as ``config.data_type`` values and one ``config.scale_type`` scale per
    block of ``config.block_size`` along K (B, M, K / block_size), JAX's recipe: the scale is
    the block's ``max|x|`` over the data type's largest value (mxfp8: rounded up to a power
    of two; nvfp4: after dividing ``x`` by the global scale), values are clipped to that
    largest value. An all-zero mxfp8 block has the scale 2^-127 and zero values (JAX divides
    by that float32 subnormal, which XLA flushes to zero: NaN values)."""
    b, m, k = x.shape
    block = config.block_size
    if not quantizable(k, config):
        raise ValueError(f"block-scaled quantization ({config.mode}) needs a contracted size "
                         f"that is a multiple of the block size {block}, got {k}")
    blocks = x.reshape(b, m, k // block, block)
    largest = pnp.asarray(float(dtypes.finfo(config.data_type).max), x.dtype)
    if config.mode == "mxfp8":
        exponents = _e8m0_exponent_rounding_up(_block_scales(blocks, largest))
        scaled = blocks / _power_of_two(exponents, x.dtype)
        scales = lax.bitcast_convert_type(exponents, dtypes.float8_e8m0fnu)
    elif config.mode == "nvfp4":
        scale_max = float(dtypes.finfo(config.scale_type).max)
        blocks = blocks / config.global_scale
        scales = pnp.clip(_block_scales(blocks, largest), 0, scale_max)
        scales = lax.optimization_barrier(scales.astype(config.scale_type))
        scaled = blocks / scales.astype(_F32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    values = pnp.clip(scaled, -largest, largest).astype(config.data_type)
    return values.reshape(b, m, k), scales.reshape(b, m, k // block)


def quantizable(size: int, config: BlockScaleConfig) -> bool:
    """Whether ``size`` contracted elements split into blocks of ``config``'s size."""
    return size >= config.block_size and size % config.block_size == 0


def _block_scales(blocks, largest):
    return pnp.max(pnp.abs(blocks), axis=-1, keepdims=True) / largest


def _e8m0_exponent_rounding_up(scales):
    """The biased float32 exponents (uint8) of ``scales``, plus one where the mantissa is
    not zero (the power of two at or above; a subnormal up to half of 2^-126 keeps 0)."""
    bits = lax.bitcast_convert_type(scales.astype(_F32), dtypes.uint32)
    exponent = bits >> 23
    mantissa = bits & 0x7FFFFF
    up = (mantissa > 0) & (exponent != 0xFE) & ~((exponent == 0) & (mantissa <= 0x400000))
    return pnp.where(up, exponent + 1, exponent).astype(dtypes.uint8)


def _power_of_two(exponents, dtype):
    """2 ** (e - 127) for biased exponents ``e`` in ``dtype`` (e = 0: 2^-127, or 2^-15 in
    float16, instead of the zero float32's bits would give)."""
    value = lax.bitcast_convert_type(exponents.astype(dtypes.uint32) << 23, _F32)
    tiny = 2.0 ** -15 if dtype == dtypes.float16 else 2.0 ** -127
    return pnp.where(value == 0, pnp.asarray(tiny, _F32), value).astype(dtype)


_add_examples(globals(), """
get_scaled_dot_general_config:
    >>> c = pto.nn.get_scaled_dot_general_config("mxfp8")
    >>> c.block_size, c.data_type, c.scale_type
    (32, dtype(float8_e4m3fn), dtype(float8_e8m0fnu))
scaled_matmul:
    >>> a = pnp.array([1., 2, 3]).reshape(1, 1, 3)
    >>> b = pnp.array([4., 5, 6]).reshape(1, 1, 3)
    >>> s = pnp.full((1, 1, 1), 0.5)
    >>> pto.nn.scaled_matmul(a, b, s, s)
    Array([[[8.]]], dtype=float32)
""")
