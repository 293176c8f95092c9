"""``fft``: discrete Fourier transforms over the trailing ``fft_lengths`` dimensions (JAX's
``lax.fft``), with every fact.

One primitive for the four kinds (``FftType``): complex to complex (FFT, IFFT), real to
complex (RFFT: the last dimension keeps ``n // 2 + 1`` frequencies) and complex to real (IRFFT).
The impl is ``numpy.fft`` with the result in the operand's precision (complex64 stays
complex64). The transform is linear: FFT and IFFT are their own transposes (the DFT matrix is
symmetric); RFFT and IRFFT transpose into each other with the weights of the frequencies
counted twice, as in JAX.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.eval.array import Array
from ptojax.ir.types import TensorType
from ptojax.ops import sharding_rules as sr
from ptojax.ops.arithmetic import mul
from ptojax.ops.broadcast import broadcast_in_dim
from ptojax.ops.complex_parts import conj
from ptojax.ops.convert import convert_element_type
from ptojax.ops.shape import move_axis
from ptojax.ops.tangents import linear_in_first_jvp
from ptojax.source_info import user_frame
from ptojax.trace import Primitive, Unsupported


class FftType(enum.IntEnum):
    FFT = 0     # complex -> complex
    IFFT = 1    # complex -> complex, inverse
    RFFT = 2    # real -> complex (half spectrum)
    IRFFT = 3   # complex (half spectrum) -> real

    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        return None


def _fft_abstract(x, fft_type, fft_lengths):
    lengths, k = tuple(fft_lengths), len(fft_lengths)
    if k > x.ndim:
        raise ShapeError(f"fft: {x} has fewer dimensions than fft_lengths {lengths}")
    minor = tuple(x.shape[x.ndim - k:])
    if fft_type == FftType.RFFT:
        if x.dtype not in (dtypes.float32, dtypes.float64):
            raise DtypeError(f"fft: RFFT needs a float32 or float64 operand, got {x}")
        if minor != lengths:
            raise ShapeError(f"fft: RFFT of {x} needs trailing dimensions {lengths}")
        return TensorType((*x.shape[:x.ndim - k], *lengths[:-1], lengths[-1] // 2 + 1),
                          dtypes.complex_dtype(x.dtype))
    if not dtypes.is_complex(x.dtype):
        raise DtypeError(f"fft: {fft_type.name} needs a complex operand, got {x}")
    if fft_type == FftType.IRFFT:
        if minor[:-1] != lengths[:-1] or minor[-1] != lengths[-1] // 2 + 1:
            raise ShapeError(f"fft: IRFFT of {x} to lengths {lengths} needs trailing "
                             f"dimensions {(*lengths[:-1], lengths[-1] // 2 + 1)}")
        return TensorType((*x.shape[:x.ndim - k], *lengths), dtypes.real_dtype(x.dtype))
    if minor != lengths:
        raise ShapeError(f"fft: {fft_type.name} of {x} needs trailing dimensions {lengths}")
    return TensorType(x.shape, x.dtype)


_NUMPY = {FftType.FFT: np.fft.fftn, FftType.IFFT: np.fft.ifftn, FftType.RFFT: np.fft.rfftn,
          FftType.IRFFT: np.fft.irfftn}


def _fft(x, fft_type, fft_lengths):
    k = len(fft_lengths)
    out = _NUMPY[fft_type](x, s=fft_lengths, axes=tuple(range(x.ndim - k, x.ndim)))
    dtype = dtypes.real_dtype(x.dtype) if fft_type == FftType.IRFFT else \
        dtypes.complex_dtype(x.dtype)
    return out.astype(dtype, copy=False)


fft_p = Primitive("fft", _fft_abstract, _fft, linear=True)


def fft(x, fft_type, fft_lengths):
    """JAX's ``lax.fft``: ``fft_type`` is an FftType or its name; the operand is converted to
    complex (or, for RFFT, to a real floating type) first."""
    try:
        kind = FftType(fft_type)
    except ValueError:
        raise ValueError(f"fft: unknown FFT type {fft_type!r} (FFT, IFFT, RFFT, IRFFT)") \
            from None
    if kind == FftType.RFFT:
        if dtypes.is_complex(x.dtype):
            raise DtypeError("fft: RFFT takes real operands only", user_frame())
        if not dtypes.is_float(x.dtype):
            x = convert_element_type(x, dtypes.float64 if x.dtype.itemsize == 8 else
                                     dtypes.float32)
    elif not dtypes.is_complex(x.dtype):
        x = convert_element_type(x, dtypes.complex_dtype(x.dtype))
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths:
        return x
    return fft_p.bind(x, fft_type=kind, fft_lengths=lengths)


# transpose, batching, sharding, cost --------------------------------------------------------------
def _weights(fft_lengths, shape, dtype, scale, inverse=False):
    """Per stored frequency of a real signal (the last dimension of ``shape``): 2 for those
    standing for a conjugate pair, 1 for the zero (and, length even, the Nyquist) one; times
    ``scale``, inverted with ``inverse``; broadcast to ``shape``."""
    w = np.full(shape[-1], 2.0)
    w[0] = 1.0
    if fft_lengths[-1] % 2 == 0:
        w[-1] = 1.0
    w = scale / w if inverse else scale * w
    return broadcast_in_dim(Array(w.astype(dtype)), shape, (len(shape) - 1,))


def _fft_transpose(ct, x, fft_type, fft_lengths):
    total = math.prod(fft_lengths)
    if fft_type == FftType.RFFT:      # N irfft(conj(ct) / w)
        w = _weights(fft_lengths, ct.shape, ct.dtype, float(total), inverse=True)
        return [fft_p.bind(mul(conj(ct), w), fft_type=FftType.IRFFT, fft_lengths=fft_lengths)]
    if fft_type == FftType.IRFFT:     # conj(w rfft(ct) / N)
        spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
        return [conj(mul(spectrum, _weights(fft_lengths, spectrum.shape, spectrum.dtype,
                                            1.0 / total)))]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


def _fft_batch(args, dims, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    return fft_p.bind(move_axis(x, d, 0), fft_type=fft_type, fft_lengths=fft_lengths), 0


def _fft_factors(eqn) -> sr.OpRule:
    """Leading dimensions pass; the transformed ones must be whole."""
    f = sr.Factors()
    x, out = sr.shape_of(eqn.inputs[0]), sr.shape_of(eqn.outputs[0])
    k = len(eqn.params["fft_lengths"])
    lead = [f.new(n) for n in x[:len(x) - k]]
    return f.rule([lead + [()] * k], [lead + [()] * (len(out) - len(lead))])


def _fft_flops(eqn) -> int:
    """~5 n log2 n per transform of n points (the usual radix-2 count)."""
    x = eqn.inputs[0].type
    n = math.prod(eqn.params["fft_lengths"])
    batch = x.size // max(math.prod(x.shape[x.ndim - len(eqn.params["fft_lengths"]):]), 1)
    return int(5 * batch * n * math.log2(n)) if n > 1 else 0


fft_p.define(
    jvp=linear_in_first_jvp(fft_p), transpose=_fft_transpose, batch=_fft_batch,
    shard=sr.ShardRule(_fft_factors, linear="unary"), cost=_fft_flops,
    tile=Unsupported("fourier transforms have no tile form (PTO has no FFT); kept as a "
                     "tensor op"),
    reference=lambda jnp, lax: lambda x, fft_type, fft_lengths: lax.fft(
        x, lax.FftType(int(fft_type)), fft_lengths))
