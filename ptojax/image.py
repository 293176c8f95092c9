"""``pto.image``: JAX's ``jax.image`` — ``resize`` and ``scale_and_translate``.

Resampling is separable: each resized axis is contracted with a weight matrix
``[in, out]`` whose column ``j`` holds the kernel evaluated at the distances from output
pixel ``j``'s center, mapped back into the input (half-centered pixels: pixel ``i`` sits at
``i + 0.5``), to every input pixel. When downsampling with ``antialias`` the kernel is
stretched by ``1/scale`` so it also low-pass filters. Each column is normalized to sum to 1
(columns whose weights nearly cancel are zero), and output pixels whose sample point falls
outside the input get zero weight. ``area`` weights are the overlap of an output pixel's
footprint with each input pixel; ``cubic-pytorch`` without antialiasing clamps the kernel's
taps beyond the edges onto the edge pixels instead. ``nearest`` gathers
``floor((j + 0.5) * in / out)``.
"""
from __future__ import annotations

import enum

import numpy as np

from ptojax import numpy as pnp
from ptojax.errors import ShapeError
from ptojax.public import add_examples, dir_function

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
__dir__ = dir_function(__all__)


class ResizeMethod(enum.Enum):
    """The resampling kernels of ``resize`` / ``scale_and_translate`` (JAX's names)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        for method, names in _NAMES.items():
            if s in names:
                return method
        raise ValueError(f'Unknown resize method "{s}"; use one of '
                         f'{sorted(n for names in _NAMES.values() for n in names)}')


_NAMES = {ResizeMethod.NEAREST: ("nearest",),
          ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
          ResizeMethod.LANCZOS3: ("lanczos3",), ResizeMethod.LANCZOS5: ("lanczos5",),
          ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
          ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
          ResizeMethod.AREA: ("area",)}


# kernels of the distance |x| (in input pixels, already divided by the kernel's stretch) ----
def _triangle(x):
    return pnp.maximum(0, 1 - pnp.abs(x))


def _lanczos(radius):
    def kernel(x):
        y = radius * pnp.sin(np.pi * x) * pnp.sin(np.pi * x / radius)
        ratio = y / pnp.where(x != 0, np.pi ** 2 * x ** 2, 1)
        return pnp.where(x > radius, 0.0, pnp.where(x > 1e-3, ratio, 1))
    return kernel


def _cubic(a):
    """The cubic convolution kernel with parameter ``a`` (Keys: -0.5; OpenCV/PyTorch: -0.75)."""
    def kernel(x):
        inner = ((a + 2) * x - (a + 3)) * x * x + 1
        outer = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return pnp.where(x >= 2, 0.0, pnp.where(x >= 1, outer, inner))
    return kernel


_AREA = object()
_KERNELS = {ResizeMethod.LINEAR: (1, _triangle), ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
            ResizeMethod.LANCZOS5: (5, _lanczos(5.0)), ResizeMethod.CUBIC: (2, _cubic(-0.5)),
            ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)), ResizeMethod.AREA: (1, _AREA)}
_CANCELLED = 1000.0 * float(np.finfo(np.float32).eps)   # |column sum| below this: all zero


def _weights(n_in, n_out, scale, translation, kernel, antialias, radius, edge_padding):
    """The ``[n_in, n_out]`` resampling weights of one axis."""
    inv = 1.0 / scale
    out_pos = pnp.arange(n_out, dtype=pnp.result_type(scale, translation))
    sample = (out_pos + 0.5) * inv - translation * inv - 0.5   # output centers, in input
    if kernel is _AREA:
        left = out_pos * inv - translation * inv
        in_left = pnp.arange(n_in, dtype=out_pos.dtype)[:, None]
        w = pnp.maximum(0.0, pnp.minimum(left + inv, in_left + 1) - pnp.maximum(left, in_left))
        return _normalized(w, sample, n_in)
    stretch = pnp.maximum(inv, 1.0) if antialias else 1.0
    pad = radius if edge_padding else 0
    taps = pnp.arange(-pad, n_in + pad, dtype=out_pos.dtype)
    w = kernel(pnp.abs(sample[None, :] - taps[:, None]) / stretch)
    if not edge_padding:
        return _normalized(w, sample, n_in)
    edge = np.clip(np.arange(-pad, n_in + pad), 0, n_in - 1)     # each tap's edge-clamped pixel
    moved = pnp.asarray((edge[None, :] == np.arange(n_in)[:, None]).astype(np.float32))
    w = moved.astype(w.dtype) @ w
    return _normalized(w, None, n_in)


def _normalized(w, sample, n_in):
    total = pnp.sum(w, axis=0, keepdims=True)
    w = pnp.where(pnp.abs(total) > _CANCELLED, w / pnp.where(total != 0, total, 1), 0)
    if sample is None:
        return w
    inside = (sample >= -0.5) & (sample <= n_in - 0.5)
    return pnp.where(inside[None, :], w, 0)


def _resample(x, shape, dims, scale, translation, method, antialias):
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH
    x = _inexact(x)
    for d, s, t in zip(dims, scale, translation):
        w = _weights(x.shape[d], shape[d], s, t, kernel, antialias, radius, edge_padding)
        x = pnp.moveaxis(pnp.tensordot(x, w.astype(x.dtype), axes=([d], [0])), -1, d)
    return x


def _inexact(x):
    x = pnp.asarray(x)
    return x if pnp.issubdtype(x.dtype, pnp.inexact) else x.astype(pnp.float32)


def _method(method) -> ResizeMethod:
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _check_shape(shape, image, fn):
    shape = tuple(int(n) for n in shape)
    if len(shape) != pnp.ndim(image):
        raise ShapeError(f"{fn}: shape must have length equal to the number of dimensions of "
                         f"the image; {shape} vs {pnp.shape(image)}")
    return shape


def resize(image, shape, method, antialias: bool = True, precision=None):
    """``image`` resampled to ``shape`` (every axis; leave batch/channel sizes unchanged).
    ``method``: ``nearest``, ``linear``, ``cubic``, ``cubic-pytorch``, ``lanczos3``,
    ``lanczos5``, ``area`` (or a ``ResizeMethod``). ``nearest`` keeps the dtype; the others
    promote to floating point."""
    shape = _check_shape(shape, image, "resize")
    method = _method(method)
    image = pnp.asarray(image)
    dims = [d for d in range(image.ndim) if image.shape[d] != shape[d]]
    if method == ResizeMethod.NEAREST:
        for d in dims:
            index = np.floor(((np.arange(shape[d], dtype=np.float32) + 0.5) * image.shape[d]
                              / shape[d]).astype(np.float32)).astype(np.int32)
            image = pnp.take(image, index, axis=d)
        return image
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _resample(image, shape, dims, scale, [0.0] * len(dims), method, antialias)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias: bool = True, precision=None):
    """Resample ``image`` to ``shape`` so that input location ``x`` along
    ``spatial_dims[k]`` lands at ``x * scale[k] + translation[k]`` (half-centered pixels);
    output pixels that map outside the input are zero. ``scale`` and ``translation`` may be
    traced (and differentiated)."""
    shape = _check_shape(shape, image, "scale_and_translate")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate: nearest-neighbor resampling is not supported "
                         "(as in JAX); use resize(..., 'nearest') or another method")
    scale, translation = _inexact(scale), _inexact(translation)
    return _resample(image, shape, [d % len(shape) for d in spatial_dims],
                     [scale[k] for k in range(len(spatial_dims))],
                     [translation[k] for k in range(len(spatial_dims))], method, antialias)


add_examples(globals(), """
resize:
    >>> pto.image.resize(pnp.array([[0.0, 1.0], [2.0, 3.0]]), (3, 3), "linear")
    Array([[0. , 0.5, 1. ],
           [1. , 1.5, 2. ],
           [2. , 2.5, 3. ]], dtype=float32)
scale_and_translate:
    >>> pto.image.scale_and_translate(pnp.arange(4.0), (4,), (0,), pnp.array([1.0]),
    ...                               pnp.array([1.0]), "linear")
    Array([0., 0., 1., 2.], dtype=float32)
ResizeMethod:
    >>> pto.image.ResizeMethod.from_string("bilinear")
    <ResizeMethod.LINEAR: 1>
""")
