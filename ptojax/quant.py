"""``pto.quant``: int8 and fp8 quantization, quantized matmuls and quantization-aware training.

    wq = pto.quant.quantize(w, pto.int8, axis=1)          # per output channel of w [K, N]
    y = pto.quant.quantized_matmul(x, wq)                 # x quantized per tensor on the fly
    w_fake = pto.quant.fake_quant(w, pto.int8, axis=1)    # QAT: forward rounds, gradient is 1

A ``QArray`` holds the quantized ``values``, their ``scale`` and (asymmetric int8 only) a
``zero_point``, with ``x ~= scale * (values - zero_point)``. ``axis`` is the channel axis:
one scale per index along it (``None``: one scale for the tensor). Scales are shaped to
broadcast against ``values`` (a per-channel scale keeps the channel axis, other axes 1).

- int8/uint8, symmetric: ``scale = max|x| / qmax`` with ``qmax = 127`` (255 for uint8) and
  values in ``[-qmax, qmax]``, rounded half to even. Asymmetric (int8/uint8): the range
  ``[min(x, 0), max(x, 0)]`` is mapped onto the dtype's whole range with an integer zero
  point. The round trip error of every element is at most ``scale / 2``.
- float8_e4m3fn/float8_e5m2: ``scale = max|x| / finfo.max`` and values ``x / scale`` rounded
  to nearest even (symmetric only); the round-trip error is within half an fp8 ulp of
  ``x / scale``, times ``scale``.

``quantized_matmul`` multiplies the quantized values on the cube — int8 x int8 accumulated
in int32 (exact), fp8 x fp8 in float32 — then dequantizes in the kernel's epilogue: converts
the accumulator to float32 and multiplies by the lhs scale (per tensor or per row) and the rhs
scale (per tensor or per column), minus ``zero_point x column sums`` for an asymmetric lhs.
``pto.tile`` fuses that epilogue into the cube kernel.

``fake_quant`` is quantize-then-dequantize with a straight-through gradient (the identity:
``x + stop_gradient(dequantize(quantize(x)) - x)``), the usual quantization-aware training
rule: the forward pass sees the rounding, the backward pass ignores it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ptojax import dtypes, lax
from ptojax import numpy as pnp
from ptojax.errors import DtypeError, ShapeError
from ptojax.ops.checks import user_axis
from ptojax.source_info import user_frame
from ptojax.pytree import register_dataclass
from ptojax.public import add_examples, dir_function

__all__ = ["QArray", "quantize", "dequantize", "quantized_matmul", "fake_quant"]
__dir__ = dir_function(__all__)

QUANT_DTYPES = (dtypes.int8, dtypes.uint8, dtypes.float8_e4m3fn, dtypes.float8_e5m2)


@register_dataclass
@dataclass(frozen=True)
class QArray:
    """Quantized values with their scale (and zero point): ``x ~= scale * (values - zp)``.
    ``axis`` (static) is the channel axis of a per-channel scale, None for per tensor."""
    values: object
    scale: object
    zero_point: object = None
    axis: Optional[int] = field(default=None, metadata={"static": True})

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def shape(self):
        return self.values.shape

    @property
    def symmetric(self) -> bool:
        return self.zero_point is None


def _quant_dtype(name, dtype):
    dtype = dtypes.canonicalize(dtype)
    if dtype not in QUANT_DTYPES:
        names = ", ".join(d.name for d in QUANT_DTYPES)
        raise DtypeError(f"{name}: cannot quantize to {dtypes.short_name(dtype)}; use one of "
                         f"{names}", user_frame())
    return dtype


def _float_input(name, x):
    x = pnp.asarray(x)
    if not dtypes.is_float(x.dtype):
        raise DtypeError(f"{name}: expected a floating-point array, got {x.aval}",
                         user_frame())
    return x.astype(dtypes.float32) if x.dtype != dtypes.float64 else x


def _reduce_axes(ndim, axis):
    """The axes reduced for a scale: all of them (per tensor) or all but ``axis``."""
    return tuple(a for a in range(ndim) if a != axis)


def _integer_range(dtype, symmetric):
    """(qmin, qmax): symmetric int8 uses [-127, 127], so that -x quantizes to -q."""
    info = dtypes.iinfo(dtype)
    return (-info.max if symmetric else info.min), info.max


def quantize(x, dtype=dtypes.int8, axis=None, symmetric: bool = True) -> QArray:
    """``x`` quantized to ``dtype`` (int8, uint8, float8_e4m3fn, float8_e5m2) with one scale
    per tensor (``axis=None``) or per index along ``axis`` (see the module doc)."""
    dtype = _quant_dtype("quantize", dtype)
    x = _float_input("quantize", x)
    if axis is not None:
        axis = user_axis("quantize", axis, x.ndim)
    reduce = _reduce_axes(x.ndim, axis)
    if dtypes.is_float(dtype):
        if not symmetric:
            raise ValueError("quantize: fp8 quantization is symmetric (no zero point); pass "
                             "symmetric=True")
        return _quantize_fp8(x, dtype, reduce, axis)
    if symmetric and dtypes.is_unsigned(dtype):
        raise ValueError("quantize: symmetric quantization needs a signed dtype (int8); use "
                         "symmetric=False for uint8")
    if symmetric:
        return _quantize_symmetric(x, dtype, reduce, axis)
    return _quantize_asymmetric(x, dtype, reduce, axis)


def _safe_scale(span, levels):
    """``span / levels``, at least the smallest normal float (an all-zero or subnormal
    channel keeps a scale that divides without overflow or loss of precision)."""
    return pnp.maximum(span / levels, float(dtypes.finfo(span.dtype).tiny))


def _quantize_symmetric(x, dtype, reduce, axis):
    qmin, qmax = _integer_range(dtype, True)
    amax = pnp.max(pnp.abs(x), axis=reduce, keepdims=True)
    scale = _safe_scale(amax, float(qmax))
    q = pnp.clip(pnp.round(x / scale), qmin, qmax).astype(dtype)
    return QArray(q, scale, None, axis)


def _quantize_asymmetric(x, dtype, reduce, axis):
    qmin, qmax = _integer_range(dtype, False)
    lo = pnp.minimum(pnp.min(x, axis=reduce, keepdims=True), 0.0)
    hi = pnp.maximum(pnp.max(x, axis=reduce, keepdims=True), 0.0)
    scale = _safe_scale(hi - lo, float(qmax - qmin))
    zero_point = pnp.clip(qmin - pnp.round(lo / scale), qmin, qmax).astype(dtypes.int32)
    q = pnp.clip(pnp.round(x / scale) + zero_point, qmin, qmax).astype(dtype)
    return QArray(q, scale, zero_point, axis)


def _quantize_fp8(x, dtype, reduce, axis):
    big = float(dtypes.finfo(dtype).max)
    amax = pnp.max(pnp.abs(x), axis=reduce, keepdims=True)
    scale = _safe_scale(amax, big)
    q = pnp.clip(x / scale, -big, big).astype(dtype)
    return QArray(q, scale, None, axis)


def dequantize(q: QArray, dtype=dtypes.float32):
    """``scale * (values - zero_point)`` as ``dtype``."""
    if not isinstance(q, QArray):
        raise TypeError(f"dequantize: expected a QArray (from pto.quant.quantize), got "
                        f"{type(q).__name__}")
    values = q.values.astype(dtypes.float32)
    if q.zero_point is not None:
        values = values - q.zero_point.astype(dtypes.float32)
    return (values * q.scale).astype(dtypes.canonicalize(dtype))


def fake_quant(x, dtype=dtypes.int8, axis=None, symmetric: bool = True):
    """``dequantize(quantize(x))`` in ``x``'s dtype, with the straight-through gradient 1."""
    x = pnp.asarray(x)
    rounded = dequantize(quantize(lax.stop_gradient(x), dtype, axis, symmetric), x.dtype)
    return x + lax.stop_gradient(rounded - x)


# --- quantized matmul ------------------------------------------------------------------------
def _as_qarray(name, x, dtype, axis):
    if isinstance(x, QArray):
        return x
    return quantize(x, dtype, axis)


def _scale_for(name, q: QArray, keep_axis: int, role: str):
    """A matmul operand's scale as a vector along its kept (free) axis, or a scalar."""
    if q.axis is None:
        return pnp.reshape(q.scale, ())
    if q.axis != keep_axis:
        raise ShapeError(f"{name}: the {role} is quantized per channel along axis {q.axis}, "
                         f"which the matmul contracts; quantize it along axis {keep_axis} "
                         f"(or per tensor) so its scales factor out of the sum", user_frame())
    return pnp.reshape(q.scale, (-1,))


def quantized_matmul(lhs, rhs, *, lhs_axis=None, preferred_element_type=dtypes.float32):
    """``dequantize(lhs) @ dequantize(rhs)`` computed as an int8 (or fp8) matmul with a
    dequantizing epilogue, for a 2-D ``lhs [M, K]`` and ``rhs [K, N]``.

    Each operand is a ``QArray`` or a float array; a float ``lhs`` is quantized to the rhs's
    dtype on the fly (per tensor, or per row with ``lhs_axis=0``), a float ``rhs`` per
    column. Per-channel scales must be along the free axes (rows of lhs, columns of rhs).
    An asymmetric rhs is not supported (its zero point does not factor out of the sum)."""
    name = "quantized_matmul"
    rq = _as_qarray(name, rhs, lhs.dtype if isinstance(lhs, QArray) else dtypes.int8, 1)
    lq = _as_qarray(name, lhs, rq.dtype, lhs_axis)
    if lq.values.ndim != 2 or rq.values.ndim != 2 or lq.shape[1] != rq.shape[0]:
        raise ShapeError(f"{name}: expected lhs [M, K] and rhs [K, N], got {lq.values.aval} "
                         f"and {rq.values.aval}", user_frame())
    if lq.dtype != rq.dtype:
        raise DtypeError(f"{name}: lhs is {dtypes.short_name(lq.dtype)} but rhs is "
                         f"{dtypes.short_name(rq.dtype)}; quantize both to one dtype",
                         user_frame())
    if not rq.symmetric:
        raise ValueError(f"{name}: the rhs must be quantized symmetrically (its zero point "
                         f"would not factor out of the sum)")
    acc_dtype = dtypes.float32 if dtypes.is_float(lq.dtype) else dtypes.int32
    acc = lax.dot_general(lq.values, rq.values, (((1,), (0,)), ((), ())),
                          preferred_element_type=acc_dtype)
    out = acc.astype(dtypes.float32)
    if not lq.symmetric:
        column_sums = pnp.sum(rq.values.astype(dtypes.int32), axis=0).astype(dtypes.float32)
        out = out - pnp.reshape(lq.zero_point, (-1, 1)).astype(dtypes.float32) * column_sums
    lhs_scale = _scale_for(name, lq, 0, "lhs")
    out = out * (lhs_scale[:, None] if lhs_scale.ndim else lhs_scale)
    out = out * _scale_for(name, rq, 1, "rhs")
    return out.astype(dtypes.canonicalize(preferred_element_type))


add_examples(globals(), """
QArray:
    >>> q = pto.quant.quantize(pnp.array([-1.0, 0.5, 2.0]))
    >>> q.values, q.scale
    (Array([-64,  32, 127], dtype=int8), Array([0.01574803], dtype=float32))
quantize:
    >>> q = pto.quant.quantize(pnp.array([[1.0, -2.0], [0.5, 4.0]]), axis=1)
    >>> q.values
    Array([[127, -64],
           [ 64, 127]], dtype=int8)
dequantize:
    >>> q = pto.quant.quantize(pnp.array([-1.0, 0.5, 2.0]))
    >>> pto.quant.dequantize(q)
    Array([-1.007874,  0.503937,  2.      ], dtype=float32)
quantized_matmul:
    >>> w = pto.quant.quantize(pnp.array([[1.0, 0.0], [0.0, 2.0]]), axis=1)
    >>> pto.quant.quantized_matmul(pnp.array([[1.0, 1.0]]), w)
    Array([[1., 2.]], dtype=float32)
fake_quant:
    >>> pto.quant.fake_quant(pnp.array([0.1, 1.0, -3.0]))
    Array([ 0.09448819,  0.992126  , -3.        ], dtype=float32)
""")
