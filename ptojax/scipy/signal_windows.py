"""The windows ``pto.scipy.signal``'s spectral functions accept by name: SciPy's
``get_window(window, n)`` (periodic, ``fftbins=True``) for the common names, computed with
NumPy in float64 when the function is traced (a window depends only on its name and length).

JAX hands every name but ``"hann"`` to SciPy, an optional dependency ptojax does not import;
these are the windows without parameters plus ``("kaiser", beta)``, ``("gaussian", std)``
and ``("tukey", alpha)``. Another name raises a ValueError listing these.
"""
from __future__ import annotations

import numpy as np

_COSINE_SUMS = {
    "hann": (0.5, 0.5),
    "hamming": (0.54, 0.46),
    "blackman": (0.42, 0.50, 0.08),
    "blackmanharris": (0.35875, 0.48829, 0.14128, 0.01168),
    "nuttall": (0.3635819, 0.4891775, 0.1365995, 0.0106411),
    "flattop": (0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368),
}
_ALIASES = {
    "han": "hann", "hamm": "hamming", "ham": "hamming", "black": "blackman",
    "blk": "blackman", "blackharr": "blackmanharris", "bkh": "blackmanharris",
    "nutl": "nuttall", "nut": "nuttall", "flat": "flattop", "flt": "flattop",
    "box": "boxcar", "ones": "boxcar", "rect": "boxcar", "rectangular": "boxcar",
    "triangle": "triang", "tri": "triang", "bart": "bartlett", "brt": "bartlett",
    "halfcosine": "cosine", "ksr": "kaiser", "gauss": "gaussian", "gss": "gaussian",
    "tuk": "tukey",
}


def _cosine_sum(m, coefficients):
    angle = np.linspace(-np.pi, np.pi, m)
    return sum(c * np.cos(k * angle) for k, c in enumerate(coefficients))


def _triang(m):
    n = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        half = (2 * n - 1.0) / m
        return np.concatenate([half, half[::-1]])
    half = 2 * n / (m + 1.0)
    return np.concatenate([half, half[-2::-1]])


def _bartlett(m):
    n = np.arange(m)
    return np.where(n <= (m - 1) / 2, 2 * n / (m - 1), 2 - 2 * n / (m - 1))


def _tukey(m, alpha):
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1:
        return _cosine_sum(m, _COSINE_SUMS["hann"])
    n = np.arange(m)
    width = int(np.floor(alpha * (m - 1) / 2))
    rise = 0.5 * (1 + np.cos(np.pi * (-1 + 2 * n[:width + 1] / alpha / (m - 1))))
    fall = 0.5 * (1 + np.cos(np.pi * (-2 / alpha + 1 + 2 * n[m - width - 1:] / alpha
                                      / (m - 1))))
    return np.concatenate([rise, np.ones(m - 2 * width - 2), fall])


def _symmetric(name, params, m):
    if name in _COSINE_SUMS:
        return _cosine_sum(m, _COSINE_SUMS[name])
    if name == "boxcar":
        return np.ones(m)
    if name == "triang":
        return _triang(m)
    if name == "bartlett":
        return _bartlett(m)
    if name == "cosine":
        return np.sin(np.pi / m * (np.arange(m) + 0.5))
    if name == "kaiser":
        alpha = (m - 1) / 2
        return np.i0(params[0] * np.sqrt(1 - ((np.arange(m) - alpha) / alpha) ** 2)) / \
            np.i0(params[0])
    if name == "gaussian":
        n = np.arange(m) - (m - 1) / 2
        return np.exp(-n ** 2 / (2 * params[0] ** 2))
    return _tukey(m, params[0] if params else 0.5)


_NEEDS_PARAMETER = {"kaiser", "gaussian"}
NAMES = sorted([*_COSINE_SUMS, "boxcar", "triang", "bartlett", "cosine", "kaiser",
                "gaussian", "tukey"])


def get_window(window, length: int) -> np.ndarray:
    """SciPy's periodic window ``window`` (a name, or a tuple of a name and its parameter)
    of ``length`` points, as float64."""
    name, *params = (window,) if isinstance(window, str) else tuple(window)
    name = _ALIASES.get(name, name) if isinstance(name, str) else name
    if name not in NAMES:
        raise ValueError(f"Unknown window type {window!r}; ptojax computes {NAMES} "
                         "(or pass the window as an array)")
    if name in _NEEDS_PARAMETER and not params:
        raise ValueError(f"The '{name}' window needs one or more parameters -- pass a tuple.")
    if length == 1:
        return np.ones(1)
    return _symmetric(name, params, length + 1)[:-1]
