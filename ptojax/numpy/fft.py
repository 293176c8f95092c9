"""``ptojax.numpy.fft``: discrete Fourier transforms as ``jax.numpy.fft`` — fft, ifft, rfft,
irfft, hfft, ihfft, their 2-D and N-D forms, fftfreq, rfftfreq, fftshift, ifftshift.

Each transform moves its axes last, crops or zero-pads them to the requested lengths and binds
one ``fft`` primitive (``ptojax/ops/fft.py``); ``norm`` is "backward" (the default), "ortho"
or "forward". Integer and bool inputs become complex64 (float32 for rfft), as in JAX.
"""
from __future__ import annotations

import math
import operator

from ptojax import dtypes, lax
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import array_from, asarray
from ptojax.numpy.complex_parts import conj
from ptojax.numpy.creation import arange
from ptojax.numpy.manipulation import moveaxis, roll
from ptojax.numpy.math import true_divide
from ptojax.ops.fft import FftType
from ptojax.public import add_examples, dir_function


def _norm_factor(name, lengths, norm):
    if norm is None or norm == "backward":
        return None
    n = math.prod(lengths)
    inverse = name.startswith("i")
    if norm == "ortho":
        return math.sqrt(n) if inverse else 1 / math.sqrt(n)
    if norm == "forward":
        return n if inverse else 1 / n
    raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def _resized(x, axis, size):
    """``x`` cropped or zero-padded at the end of ``axis`` to ``size``."""
    n = x.shape[axis]
    if size <= n:
        return lax.slice_in_dim(x, 0, size, 1, axis)
    config = [(0, size - n, 0) if d == axis else (0, 0, 0) for d in range(x.ndim)]
    return lax.pad(x, lax.convert_element_type(0, x.dtype), config)


def _fft_core(name, fft_type, a, s, axes, norm):
    x = asarray(a, op=f"fft.{name}")
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
        if axes is not None and len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
    if axes is None:
        axes = tuple(range(0 if s is None else x.ndim - len(s), x.ndim))
    else:
        given = tuple(axes)
        axes = tuple(normalize_axis(f"fft.{name}", d, x.ndim) for d in given)
        if len(set(axes)) != len(axes):
            raise ValueError(f"fft.{name} does not support repeated axes. Got axes {given}.")
    last = tuple(range(x.ndim - len(axes), x.ndim))
    x = moveaxis(x, axes, last)
    if s is not None:
        sizes = list(s)
        if fft_type == FftType.IRFFT:
            sizes[-1] = sizes[-1] // 2 + 1
        for axis, size in zip(last, sizes):
            x = _resized(x, axis, size)
    else:
        s = [x.shape[d] for d in last]
        if fft_type == FftType.IRFFT and s:
            s[-1] = max(0, 2 * (s[-1] - 1))
    out = lax.fft(x, fft_type, tuple(s))
    factor = _norm_factor(name, s, norm)
    if factor is not None:
        out = lax.mul(out, factor)
    return moveaxis(out, last, axes)


def _one_axis(name, axis):
    if axis is None:
        raise ValueError(f"fft.{name} does not support axis=None; pass an axis (default -1)")
    return (axis,)


def _two_axes(name, axes):
    if len(axes) != 2:
        raise ValueError(f"fft.{name} only supports 2 axes. Got axes = {tuple(axes)!r}.")
    return tuple(axes)


def _transforms(name, fft_type):
    """The 1-D, 2-D and N-D functions of one transform."""
    def one(a, n=None, axis=-1, norm=None):
        return _fft_core(name, fft_type, a, None if n is None else (n,),
                         _one_axis(name, axis), norm)

    def two(a, s=None, axes=(-2, -1), norm=None):
        return _fft_core(name + "2", fft_type, a, s, _two_axes(name + "2", axes), norm)

    def many(a, s=None, axes=None, norm=None):
        return _fft_core(name + "n", fft_type, a, s, axes, norm)

    for fn, suffix, what in ((one, "", "along one axis"), (two, "2", "over two axes"),
                             (many, "n", "over several axes")):
        fn.__name__ = fn.__qualname__ = name + suffix
        fn.__doc__ = f"{fft_type.name} {what} (JAX's ``jnp.fft.{name + suffix}``)."
    return one, two, many


fft, fft2, fftn = _transforms("fft", FftType.FFT)
ifft, ifft2, ifftn = _transforms("ifft", FftType.IFFT)
rfft, rfft2, rfftn = _transforms("rfft", FftType.RFFT)
irfft, irfft2, irfftn = _transforms("irfft", FftType.IRFFT)


def hfft(a, n=None, axis=-1, norm=None):
    """The real spectrum of a Hermitian-symmetric signal given by its first half."""
    x = conj(asarray(a, op="fft.hfft"))
    (axis,) = _one_axis("hfft", axis)
    length = (x.shape[axis] - 1) * 2 if n is None else n
    out = _fft_core("hfft", FftType.IRFFT, x, None if n is None else (n,), (axis,), norm)
    return lax.mul(out, float(length))


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of ``hfft``: the first half of a Hermitian spectrum of a real signal."""
    x = array_from(a, op="fft.ihfft")   # JAX's ihfft takes lists too
    (axis,) = _one_axis("ihfft", axis)
    length = x.shape[axis] if n is None else n
    out = _fft_core("ihfft", FftType.RFFT, x, None if n is None else (n,), (axis,), norm)
    return lax.mul(conj(out), 1 / length)


def _frequency_dtype(name, n, d, dtype):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of fft.{name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of fft.{name} only takes a single value. Got "
                         f"d = {list(d)}.")
    return dtypes.default_float() if dtype is None else dtypes.user_dtype(dtype, name)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an FFT of length ``n`` with spacing ``d``."""
    out_dtype = _frequency_dtype("fftfreq", n, d, dtype)
    compute = out_dtype if dtypes.is_inexact(out_dtype) else dtypes.float32
    k = lax.sub(lax.rem(lax.add(arange(n, dtype=compute), float(n // 2)), float(n)),
                float(n // 2))
    return lax.convert_element_type(lax.div(k, lax.convert_element_type(d * n, compute)),
                                    out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an RFFT of length ``n`` with spacing ``d``."""
    out_dtype = _frequency_dtype("rfftfreq", n, d, dtype)
    k = arange(0, n // 2 + 1, dtype=out_dtype)
    return true_divide(k, asarray(d * n, dtype=out_dtype))


def _shift(name, x, axes, sign):
    x = asarray(x, op=f"fft.{name}")
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), tuple(axes))


def fftshift(x, axes=None):
    """The zero frequency moved to the centre of ``axes`` (all by default)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of ``fftshift``."""
    return _shift("ifftshift", x, axes, -1)


__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
           "rfftn"]
__dir__ = dir_function(__all__)


add_examples(globals(), """
fft:
    >>> pnp.fft.fft(pnp.array([1.0, 2.0, 0.0, -1.0]))
    Array([2.+0.j, 1.-3.j, 0.+0.j, 1.+3.j], dtype=complex64)
ifft:
    >>> pnp.fft.ifft(pnp.array([2.0, 1 - 3j, 0.0, 1 + 3j]))
    Array([ 1.+0.j,  2.+0.j,  0.+0.j, -1.+0.j], dtype=complex64)
fft2:
    >>> pnp.fft.fft2(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([[10.+0.j, -2.+0.j],
           [-4.+0.j,  0.+0.j]], dtype=complex64)
ifft2:
    >>> pnp.fft.ifft2(pnp.array([[10.0, -2.0], [-4.0, 0.0]]))
    Array([[1.+0.j, 2.+0.j],
           [3.+0.j, 4.+0.j]], dtype=complex64)
fftn:
    >>> pnp.fft.fftn(pnp.ones((2, 2)))
    Array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]], dtype=complex64)
ifftn:
    >>> pnp.fft.ifftn(pnp.array([[4.0, 0.0], [0.0, 0.0]]))
    Array([[1.+0.j, 1.+0.j],
           [1.+0.j, 1.+0.j]], dtype=complex64)
rfft:
    >>> pnp.fft.rfft(pnp.array([1.0, 2.0, 0.0, -1.0]))
    Array([2.+0.j, 1.-3.j, 0.+0.j], dtype=complex64)
irfft:
    >>> pnp.fft.irfft(pnp.array([2.0, 1 - 3j, 0.0]))
    Array([ 1.,  2.,  0., -1.], dtype=float32)
rfft2:
    >>> pnp.fft.rfft2(pnp.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([[10.+0.j, -2.+0.j],
           [-4.+0.j,  0.+0.j]], dtype=complex64)
irfft2:
    >>> pnp.fft.irfft2(pnp.array([[10.0, -2.0], [-4.0, 0.0]]))
    Array([[1., 2.],
           [3., 4.]], dtype=float32)
rfftn:
    >>> pnp.fft.rfftn(pnp.ones((2, 2)))
    Array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]], dtype=complex64)
irfftn:
    >>> pnp.fft.irfftn(pnp.array([[4.0, 0.0], [0.0, 0.0]]))
    Array([[1., 1.],
           [1., 1.]], dtype=float32)
hfft:
    >>> pnp.fft.hfft(pnp.array([1.0, 2.0, 3.0]))
    Array([ 8., -2.,  0., -2.], dtype=float32)
ihfft:
    >>> pnp.fft.ihfft(pnp.array([1.0, 2.0, 0.0, -1.0]))
    Array([0.5 +0.j  , 0.25+0.75j, 0.  +0.j  ], dtype=complex64)
fftfreq:
    >>> pnp.fft.fftfreq(4)
    Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
rfftfreq:
    >>> pnp.fft.rfftfreq(4, d=0.5)
    Array([0. , 0.5, 1. ], dtype=float32)
fftshift:
    >>> pnp.fft.fftshift(pnp.arange(5))
    Array([3, 4, 0, 1, 2], dtype=int32)
ifftshift:
    >>> pnp.fft.ifftshift(pnp.arange(5))
    Array([2, 3, 4, 0, 1], dtype=int32)
""")
