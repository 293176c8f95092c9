"""The spectral half of ``pto.scipy.signal``, as JAX's: ``detrend``, the short-time Fourier
transform ``stft`` and its inverse ``istft``, and Welch's estimates ``welch`` (power spectral
density) and ``csd`` (cross spectral density).

One helper, ``_spectral``, cuts the signal (moved to the last axis, extended at the
boundaries and zero-padded as asked) into overlapping segments with one gather, detrends and
windows them and takes one FFT per segment; ``stft`` scales that spectrum, ``csd``/``welch``
average the periodograms ``conj(X) Y`` over segments (mean, or median divided by its bias).
``istft`` inverts the FFTs and overlap-adds the windowed segments (one scatter-add) divided
by the overlap-added squared window. Output layouts, dtypes, defaults and errors follow JAX
(the frequencies go where ``axis`` was, the segments last). Windows are named (see
``signal_windows``) or given as 1-d arrays.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from ptojax import numpy as pnp
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray
from ptojax.scipy.signal_windows import get_window


def _real_dtype(dtype):
    return np.finfo(np.dtype(dtype)).dtype


def _inexact(*arrays):
    dtype = pnp.result_type(*arrays)
    if not pnp.issubdtype(dtype, pnp.inexact):
        dtype = pnp.result_type(dtype, pnp.float32)
    return [a.astype(dtype) for a in arrays]


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """``data`` less its least-squares line along ``axis`` (``type="linear"``; piecewise
    between the breakpoints ``bp``), or less its mean (``type="constant"``)."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = _inexact(pnp.asarray(data))
    if type == "constant":
        return x - x.mean(axis, keepdims=True)
    n = x.shape[axis]
    bounds = np.unique(np.r_[0, bp, n])
    if bounds[0] < 0 or bounds[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    x = pnp.moveaxis(x, axis, -1)
    pieces = [_without_line(x[..., int(lo):int(hi)]) for lo, hi in zip(bounds, bounds[1:])]
    return pnp.moveaxis(pnp.concatenate(pieces, axis=-1), -1, axis)


def _without_line(piece):
    """``piece`` less its least-squares line along the last axis."""
    t = np.arange(piece.shape[-1], dtype=np.float64)
    t = t - t.mean()
    centred = piece - piece.mean(-1, keepdims=True)
    if not t.any():
        return centred
    slope = (centred * (t / (t @ t)).astype(piece.dtype)).sum(-1, keepdims=True)
    return centred - slope * t.astype(piece.dtype)


def _odd_extension(x, n):
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
    left = 2 * x[..., :1] - pnp.flip(x[..., 1:n + 1], -1)
    right = 2 * x[..., -1:] - pnp.flip(x[..., -(n + 1):-1], -1)
    return pnp.concatenate([left, x, right], axis=-1)


def _pad_last(mode):
    def extend(x, n):
        return pnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode)
    return extend


_BOUNDARIES = {"even": _pad_last("reflect"), "odd": _odd_extension,
               "constant": _pad_last("edge"), "zeros": _pad_last("constant"),
               None: lambda x, n: x}


def _window(window, nperseg, length, dtype):
    """The window as an array of ``dtype`` and the segment length (JAX's rules: a named
    window is ``nperseg`` long, at most the signal; an array window sets ``nperseg``)."""
    if isinstance(window, (str, tuple)):
        n = length if nperseg is None else int(nperseg)
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, "
                          f"using nperseg={length}")
            n = length
        if window == "hann":   # as JAX's own: computed in the signal's dtype
            if n == 1:
                return pnp.ones(1, dtype), n
            angles = pnp.linspace(0, np.pi, n, endpoint=False, dtype=_real_dtype(dtype))
            return (pnp.sin(angles) ** 2).astype(dtype), n
        return pnp.asarray(get_window(window, n), dtype), n
    win = pnp.asarray(window, dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _detrender(detrend_type, axis):
    if isinstance(detrend_type, str):
        return lambda d: detrend(d, axis=-1, type=detrend_type)
    if callable(detrend_type):
        if axis == -1:
            return detrend_type
        # as JAX: the segments' axis ``axis`` is moved last for the callable
        return lambda d: pnp.moveaxis(detrend_type(pnp.moveaxis(d, axis, -1)), -1, axis)
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _segment_spectra(x, win, detrend_func, nperseg, step, nfft, twosided):
    """The FFT of each windowed, detrended segment: shape (..., segments, frequencies)."""
    starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
    segments = detrend_func(x[..., starts[:, None] + np.arange(nperseg)])
    if pnp.iscomplexobj(win) and not pnp.iscomplexobj(segments):
        segments = segments.astype(pnp.result_type(segments.dtype, pnp.complex64))
    segments = win * segments
    if twosided:
        return pnp.fft.fft(segments, n=nfft)
    return pnp.fft.rfft(pnp.real(segments), n=nfft)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided,
              scaling, axis, mode, boundary=None, padded=False):
    """SciPy's ``_spectral_helper`` as JAX computes it: (frequencies, times, result)."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARIES)}")
    x = asarray(x, op="spectral_helper")
    axis = normalize_axis("spectral_helper", operator.index(axis), x.ndim)
    if y is None:
        (x,) = _inexact(x)
        outer = x.shape[:axis] + x.shape[axis + 1:]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        x, y = _inexact(x, asarray(y, op="spectral_helper"))
        if x.ndim != y.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outer = np.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                        y.shape[:axis] + y.shape[axis + 1:])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = pnp.result_type(x.dtype, pnp.complex64)
    freq_dtype = _real_dtype(result_dtype)
    if nperseg is not None:
        nperseg = int(nperseg)
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)
    if x.size == 0 or (y is not None and y.size == 0):
        shape = x.shape if y is None else \
            outer[:axis] + (min(x.shape[axis], y.shape[axis]),) + outer[axis:]
        return (pnp.zeros(shape, freq_dtype), pnp.zeros(shape, freq_dtype),
                pnp.zeros(shape, result_dtype))
    x = pnp.moveaxis(x, axis, -1)
    if y is not None:
        y = pnp.moveaxis(y, axis, -1) if y.ndim > 1 else y
        longest = max(x.shape[-1], y.shape[-1])
        x, y = (_zero_pad_end(a, longest - a.shape[-1]) for a in (x, y))
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    signals = [x] if y is None else [x, y]
    signals = [_BOUNDARIES[boundary](s, nperseg // 2) for s in signals]
    if padded:
        extra = (-(signals[0].shape[-1] - nperseg) % step) % nperseg
        signals = [_zero_pad_end(s, extra) for s in signals]
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = pnp.sqrt(scale)
    twosided = not return_onesided
    if return_onesided and any(pnp.iscomplexobj(s) for s in signals):
        twosided = True
        warnings.warn("Input data is complex, switching to return_onesided=False")
    freqs = (pnp.fft.fftfreq if twosided else pnp.fft.rfftfreq)(nfft, 1 / fs,
                                                                 dtype=freq_dtype)
    detrend_func = _detrender(detrend_type, axis)
    spectra = [_segment_spectra(s, win, detrend_func, nperseg, step, nfft, twosided)
               for s in signals]
    if y is not None:
        result = pnp.conj(spectra[0]) * spectra[1]
    elif mode == "psd":
        result = pnp.conj(spectra[0]) * spectra[0]
    else:
        result = spectra[0]
    result = result * scale
    if not twosided and mode == "psd":
        doubled = np.full(result.shape[-1], 2.0)
        doubled[0] = 1.0
        if nfft % 2 == 0:
            doubled[-1] = 1.0
        result = result * doubled.astype(freq_dtype)
    times = np.arange(nperseg / 2, signals[0].shape[-1] - nperseg / 2 + 1, step)
    if boundary is not None:
        times = times - nperseg / 2
    times = pnp.asarray(times.astype(freq_dtype)) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = pnp.real(result)
    return freqs, times, pnp.moveaxis(result, -1, axis)


def _zero_pad_end(x, n):
    return x if n == 0 else pnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n)])


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform of ``x``: ``(f, t, Zxx)``, the frequencies, the
    segment times and the spectrum of each segment (frequencies at ``axis``, times last)."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     "spectrum", axis, "stft", boundary, padded)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
    """Welch's estimate of the cross spectral density of ``x`` and ``y`` (``y=None``: the
    power spectral density of ``x``): ``(f, Pxy)``, averaging the segments' periodograms
    (``average="mean"`` or ``"median"``)."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim < 2 or pxy.size == 0:
        return freqs, pxy
    if pxy.shape[-1] == 1:
        return freqs, pnp.reshape(pxy, pxy.shape[:-1])
    if average == "mean":
        return freqs, pxy.mean(axis=-1)
    if average != "median":
        raise ValueError(f'average must be "median" or "mean", got {average}')
    evens = np.arange(2.0, pxy.shape[-1], 2)
    bias = 1 + np.sum(1.0 / (evens + 1) - 1.0 / evens)
    if pnp.iscomplexobj(pxy):
        median = pnp.median(pnp.real(pxy), axis=-1) + 1j * pnp.median(pnp.imag(pxy), axis=-1)
    else:
        median = pnp.median(pxy, axis=-1)
    return freqs, (median / pnp.asarray(bias, median.dtype)).astype(median.dtype)


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """Welch's estimate of the power spectral density of ``x``: ``(f, Pxx)``."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, pnp.real(pxx)


def _overlap_add(frames, step):
    """Frames (..., count, length) added into one signal, frame ``i`` starting at
    ``i * step``."""
    count, length = frames.shape[-2:]
    positions = np.arange(count)[:, None] * step + np.arange(length)
    out = pnp.zeros(frames.shape[:-2] + (step * (count - 1) + length,), frames.dtype)
    return out.at[..., positions].add(frames)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """The inverse of ``stft``: ``(t, x)``, the sample times and the signal whose STFT is
    ``Zxx`` (``time_axis``/``freq_axis`` locate its segments and frequencies)."""
    Zxx = asarray(Zxx, op="istft")
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = normalize_axis("istft", freq_axis, Zxx.ndim)
    time_axis = normalize_axis("istft", time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(pnp.result_type(Zxx.dtype, pnp.complex64))
    default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg_int = int(nperseg or default)
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = default + (1 if input_onesided and nperseg_int == default + 1 else 0)
    else:
        nfft_int = int(nfft)
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg "
                         f"({nperseg_int}).")
    noverlap_int = int(noverlap or nperseg_int // 2)
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    outer = tuple(d for d in range(Zxx.ndim) if d not in (time_axis, freq_axis))
    Zxx = pnp.transpose(Zxx, outer + (freq_axis, time_axis))
    inverse = pnp.fft.irfft if input_onesided else pnp.fft.ifft
    segments = inverse(Zxx, n=nfft, axis=-2)[..., :nperseg_int, :]
    if isinstance(window, (str, tuple)):
        win, _ = _window(window, nperseg_int, nperseg_int, segments.dtype)
    else:
        win = pnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    segments = segments * win.sum()          # undoes the 'spectrum' scaling of stft
    frames = pnp.swapaxes(segments * win[:, None], -2, -1)
    x = _overlap_add(frames, nperseg_int - noverlap_int)
    squares = pnp.broadcast_to(win * win, (segments.shape[-1], nperseg_int))
    norm = _overlap_add(squares, nperseg_int - noverlap_int)
    if boundary:
        half = nperseg_int // 2
        x, norm = x[..., half:-half], norm[..., half:-half]
    x = x / pnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        x = pnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    times = pnp.arange(x.shape[0], dtype=_real_dtype(x.dtype)) / fs   # (JAX's: shape[0])
    return times, x
