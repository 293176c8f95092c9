"""``pto.scipy.signal``: JAX's ``jax.scipy.signal``. The spectral functions (``stft``,
``istft``, ``welch``, ``csd``, ``detrend``) live in ``signal_spectral``; here, the
convolutions: ``convolve``/``correlate``
of N-d arrays (direct, as one ``lax.conv_general_dilated`` with the flipped kernel, or by FFT
with ``method="fft"``), ``convolve2d``/``correlate2d`` (2-d, ``boundary="fill"`` with 0
only) and ``fftconvolve``. Modes ``full``, ``same`` (centred on ``in1``) and ``valid``; the
inputs are promoted to an inexact dtype; for ``valid`` (and the direct path) one input must
be at least as large as the other in every dimension, and the larger is the image."""
from __future__ import annotations

import numpy as np

from ptojax import lax
from ptojax import numpy as pnp
from ptojax.numpy._promote import asarray as _asarray
from ptojax.public import add_examples, dir_function
from ptojax.scipy.signal_spectral import csd, detrend, istft, stft, welch

MODES = ("full", "same", "valid")


def _inexact(in1, in2):
    in1, in2 = _asarray(in1), _asarray(in2)   # lists refused, as JAX's
    dtype = pnp.result_type(in1, in2, pnp.float32) if not (
        pnp.issubdtype(in1.dtype, pnp.inexact) or pnp.issubdtype(in2.dtype, pnp.inexact)) \
        else pnp.result_type(in1, in2)
    return in1.astype(dtype), in2.astype(dtype)


def _direct(in1, in2, mode, precision):
    """``in1 * in2`` (N-d convolution) as one cross-correlation with the flipped kernel."""
    if mode not in MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = _inexact(in1, in2)
    bigger = all(a >= b for a, b in zip(in1.shape, in2.shape))
    smaller = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (bigger or smaller):
        raise ValueError("One input must be smaller than the other in every dimension.")
    first_shape = in2.shape         # 'same' centres on the first input's kernel size
    if smaller:
        in1, in2 = in2, in1
    kernel = in2.shape
    if mode == "valid":
        padding = [(0, 0)] * len(kernel)
    elif mode == "full":
        padding = [(k - 1, k - 1) for k in kernel]
    else:
        padding = [(k - 1 - (o - 1) // 2, k - o + (o - 1) // 2)
                   for k, o in zip(kernel, first_shape)]
    out = lax.conv_general_dilated(in1[None, None], pnp.flip(in2)[None, None],
                                   (1,) * len(kernel), padding, precision=precision)
    return out[0, 0]


def fftconvolve(in1, in2, mode="full", axes=None):
    """``convolve`` computed with FFTs over ``axes`` (default all; along the other axes the
    two inputs must have equal sizes, each slice convolved separately)."""
    if mode not in MODES:
        raise ValueError(f"fftconvolve() got unknown mode={mode!r}; expected one of {MODES}")
    in1, in2 = _inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    axes = tuple(range(in1.ndim)) if axes is None else \
        tuple(sorted(int(a) % in1.ndim for a in np.atleast_1d(axes)))
    mapped = [d for d in range(in1.ndim) if d not in axes]
    if [in1.shape[d] for d in mapped] != [in2.shape[d] for d in mapped]:
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={axes}")
    if mode == "valid":
        bigger = all(in1.shape[a] >= in2.shape[a] for a in axes)
        smaller = all(in1.shape[a] <= in2.shape[a] for a in axes)
        if not (bigger or smaller):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             "other in every dimension.")
        if smaller and not bigger:
            in1, in2 = in2, in1
    full = [in1.shape[a] + in2.shape[a] - 1 for a in axes]
    if all(in1.shape[a] == 1 or in2.shape[a] == 1 for a in axes):
        conv = in1 * in2
    elif pnp.iscomplexobj(in1):
        conv = pnp.fft.ifftn(pnp.fft.fftn(in1, full, axes) * pnp.fft.fftn(in2, full, axes),
                             full, axes)
    else:
        conv = pnp.fft.irfftn(pnp.fft.rfftn(in1, full, axes) * pnp.fft.rfftn(in2, full, axes),
                              full, axes)
    start, size = [0] * conv.ndim, list(conv.shape)
    for a, f in zip(axes, full):
        out = {"full": f, "same": in1.shape[a],
               "valid": in1.shape[a] - in2.shape[a] + 1}[mode]
        start[a], size[a] = (f - out) // 2, out
    return lax.slice(conv, start, [s + n for s, n in zip(start, size)])


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-d convolution of ``in1`` and ``in2`` (``method``: ``auto``/``direct`` or
    ``fft``)."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _direct(_asarray(in1), _asarray(in2), mode, precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-d cross-correlation: ``convolve(in1, flip(conj(in2)))``."""
    in2 = _asarray(in2)
    return convolve(in1, pnp.flip(in2.conj()), mode, method=method, precision=precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d convolution of ``in1`` and ``in2`` (zero fill outside)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _direct(_asarray(in1), _asarray(in2), mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d cross-correlation of ``in1`` and ``in2`` (zero fill outside), oriented as
    SciPy's when ``in2`` is the larger input."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = _asarray(in1), _asarray(in2)
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    same_shape = tuple(in1.shape) == tuple(in2.shape)
    if (mode == "valid" and swap and not same_shape) or (mode == "full" and swap):
        out = _direct(pnp.flip(in2), in1.conj(), mode, precision)
        return out.conj() if mode == "full" else out
    return pnp.flip(_direct(pnp.flip(in1), in2.conj(), mode, precision))


__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]
__dir__ = dir_function(__all__)

add_examples(globals(), """
convolve:
    >>> from ptojax.scipy import signal
    >>> signal.convolve(pnp.array([1.0, 2.0, 3.0]), pnp.array([0.0, 1.0, 0.5]))
    Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
correlate:
    >>> from ptojax.scipy import signal
    >>> signal.correlate(pnp.array([1.0, 2.0, 3.0]), pnp.array([0.0, 1.0, 0.5]), mode="same")
    Array([2. , 3.5, 3. ], dtype=float32)
convolve2d:
    >>> from ptojax.scipy import signal
    >>> signal.convolve2d(pnp.eye(2), pnp.ones((2, 2)))
    Array([[1., 1., 0.],
           [1., 2., 1.],
           [0., 1., 1.]], dtype=float32)
correlate2d:
    >>> from ptojax.scipy import signal
    >>> signal.correlate2d(pnp.eye(3), pnp.ones((2, 2)), mode="valid")
    Array([[2., 1.],
           [1., 2.]], dtype=float32)
fftconvolve:
    >>> from ptojax.scipy import signal
    >>> signal.fftconvolve(pnp.array([1.0, 2.0, 3.0]), pnp.array([0.0, 1.0, 0.5]), mode="valid")
    Array([2.5], dtype=float32)
detrend:
    >>> from ptojax.scipy import signal
    >>> signal.detrend(pnp.array([1.0, 2.0, 6.0]), type="constant")
    Array([-2., -1.,  3.], dtype=float32)
stft:
    >>> from ptojax.scipy import signal
    >>> f, t, zxx = signal.stft(pnp.array([1., 2., 3., 2., 1., 0., 1., 2.]), nperseg=4)
    >>> f, t, zxx.shape
    (Array([0.  , 0.25, 0.5 ], dtype=float32), Array([0., 2., 4., 6., 8.], dtype=float32), (3, 5))
istft:
    >>> from ptojax.scipy import signal
    >>> x = pnp.array([1., 2., 3., 2., 1., 0., 1., 2.])
    >>> t, back = signal.istft(signal.stft(x, nperseg=4)[2])
    >>> back.round(3)
    Array([1., 2., 3., 2., 1., 0., 1., 2.], dtype=float32)
welch:
    >>> from ptojax.scipy import signal
    >>> x = pnp.array([1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0, 0.0])
    >>> signal.welch(x, nperseg=4, scaling="spectrum")
    (Array([0.  , 0.25, 0.5 ], dtype=float32), Array([0.25, 0.5 , 0.25], dtype=float32))
csd:
    >>> from ptojax.scipy import signal
    >>> x, y = pnp.array([1.0, 0.0, -1.0, 0.0]), pnp.array([0.0, 1.0, 0.0, -1.0])
    >>> signal.csd(x, y, nperseg=4, scaling="spectrum")[1].round(3)
    Array([0.+0.j , 0.-0.5j, 0.+0.j ], dtype=complex64)
""")
