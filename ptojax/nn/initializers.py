"""``pto.nn.initializers``: JAX's weight initializers, drawing from ``pto.random`` keys.

An initializer is ``init(key, shape, dtype=None) -> Array`` (dtype default float32; float64 in
x64 mode). The variance-scaling family (glorot/xavier, he/kaiming, lecun) follows JAX's formulas
exactly, so with the same key it draws JAX's values: the uniform ones bit for bit up to the
final scaling, the normal ones to a few ulps (see ``pto.random``). ``orthogonal`` takes the QR
decomposition of such a normal draw, as JAX does. ``normal`` and the variance-scaling family
take complex dtypes as JAX's do (a complex normal; a uniform disk; a normal of modulus truncated
at 2); ``orthogonal`` does not (complex QR is not supported).
"""
from __future__ import annotations

import math
import operator

from ptojax import dtypes, random
from ptojax import numpy as pnp
from ptojax.errors import SamplerDtypeError, ShapeError
from ptojax.ir.symbolic import is_index_scalar
from ptojax.source_info import user_frame
from ptojax.public import dir_function

# the standard deviation of a standard normal truncated to (-2, 2), and of a complex standard
# normal whose modulus is truncated to 2
_TRUNCATED_STDDEV = .87962566103423978
_COMPLEX_TRUNCATED_STDDEV = .95311164380491208


def _dtype(name, dtype, complex_ok=False):
    dtype = dtypes.default_float() if dtype is None else dtypes.user_dtype(dtype)
    if not (dtypes.is_float(dtype) or complex_ok and dtypes.is_complex(dtype)):
        kind = "a floating-point or complex" if complex_ok else "a floating-point"
        raise SamplerDtypeError(f"nn.initializers.{name}: dtype must be {kind} dtype, got "
                                f"{dtype}", user_frame(2))
    return dtype


def _polar(key, shape, dtype, radius_of_unit):
    """Complex samples ``r exp(i theta)``: ``r = radius_of_unit(u)`` for ``u`` uniform in
    [0, 1) (in ``dtype``) and ``theta`` uniform in [0, 2 pi), from the halves of split(key)."""
    real = dtypes.real_dtype(dtype)
    radius_key, angle_key = random.split(key)
    radius = radius_of_unit(random.uniform(radius_key, shape, real))
    angle = pnp.multiply(2 * math.pi, random.uniform(angle_key, shape, real).astype(dtype))
    return pnp.multiply(radius.astype(dtype), pnp.exp(pnp.multiply(1j, angle)))


def _complex_uniform(key, shape, dtype):
    """Uniform on the disk of radius sqrt(2): mean 0, variance 1 (JAX's formula)."""
    return _polar(key, shape, dtype, lambda u: pnp.sqrt(pnp.multiply(2, u)))


def _complex_truncated_normal(key, upper, shape, dtype):
    """A complex standard normal (variance 1) whose modulus is truncated to ``upper``, by the
    inverse CDF of its modulus (JAX's formula)."""
    mass = pnp.subtract(1, pnp.exp(pnp.asarray(-(upper ** 2), dtype)))

    def radius(u):
        below = pnp.multiply(mass, u.astype(dtype))
        return pnp.sqrt(pnp.negative(pnp.log(pnp.subtract(1, below))))
    return _polar(key, shape, dtype, radius)


def _shape(shape) -> tuple:
    if is_index_scalar(shape):
        return (operator.index(shape),)
    return tuple(operator.index(n) for n in shape)


def zeros(key, shape, dtype=None):
    """An array of zeros (``key`` is ignored).

    Args:
      key: a ``pto.random`` key (unused).
      shape: the result shape.
      dtype: the result dtype, default float32 (float64 in x64 mode).

    Returns:
      ``pnp.zeros(shape, dtype)``.

    Example:
      >>> pto.nn.initializers.zeros(pto.random.key(0), (2,))
      Array([0., 0.], dtype=float32)
    """
    return pnp.zeros(_shape(shape), dtypes.default_float() if dtype is None else dtype)


def ones(key, shape, dtype=None):
    """An array of ones (``key`` is ignored).

    Args:
      key: a ``pto.random`` key (unused).
      shape: the result shape.
      dtype: the result dtype, default float32 (float64 in x64 mode).

    Returns:
      ``pnp.ones(shape, dtype)``.

    Example:
      >>> pto.nn.initializers.ones(pto.random.key(0), (2,))
      Array([1., 1.], dtype=float32)
    """
    return pnp.ones(_shape(shape), dtypes.default_float() if dtype is None else dtype)


def constant(value, dtype=None):
    """An initializer filling arrays with ``value``.

    Args:
      value: the fill value.
      dtype: the initializer's default dtype (float32 if None; float64 in x64 mode).

    Returns:
      ``init(key, shape, dtype=dtype)``.

    Example:
      >>> pto.nn.initializers.constant(-7.0)(pto.random.key(0), (2,))
      Array([-7., -7.], dtype=float32)
    """
    def init(key, shape, dtype=dtype):
        return pnp.full(_shape(shape), value, dtypes.default_float() if dtype is None else dtype)
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer drawing uniformly from ``[0, scale)``.

    Args:
      scale: the upper bound, default 0.01.
      dtype: the initializer's default dtype (float32 if None; float64 in x64 mode).

    Returns:
      ``init(key, shape, dtype=dtype)``.

    Example:
      >>> pto.nn.initializers.uniform(10.0)(pto.random.key(42), (2,)).shape
      (2,)
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype("uniform", dtype)
        return pnp.multiply(random.uniform(key, _shape(shape), dtype),
                            pnp.asarray(scale, dtype))
    return init


def normal(stddev=1e-2, dtype=None):
    """An initializer drawing from a normal distribution of mean 0 and ``stddev``.

    Args:
      stddev: the standard deviation, default 0.01.
      dtype: the initializer's default dtype (float32 if None; float64 in x64 mode).

    Returns:
      ``init(key, shape, dtype=dtype)``.

    Example:
      >>> pto.nn.initializers.normal(5.0)(pto.random.key(42), (2, 3)).shape
      (2, 3)
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype("normal", dtype, complex_ok=True)
        return pnp.multiply(random.normal(key, _shape(shape), dtype),
                            pnp.asarray(stddev, dtype))
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing from a normal distribution truncated to ``(lower, upper)``
    before it is scaled by ``stddev`` (no variance correction, as JAX).

    Args:
      stddev: the standard deviation of the untruncated distribution, default 0.01.
      dtype: the initializer's default dtype (float32 if None; float64 in x64 mode).
      lower: the lower truncation bound (in standard deviations), default -2.
      upper: the upper truncation bound, default 2.

    Returns:
      ``init(key, shape, dtype=dtype)``.

    Example:
      >>> pto.nn.initializers.truncated_normal(5.0)(pto.random.key(42), (2, 3)).shape
      (2, 3)
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype("truncated_normal", dtype)
        draws = random.truncated_normal(key, lower, upper, _shape(shape), dtype)
        return pnp.multiply(draws, pnp.asarray(stddev, dtype))
    return init


def _size(shape, axes) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[a] for a in axes)


def compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """``(fan_in, fan_out)`` of a weight of ``shape``: the sizes of ``in_axis`` and
    ``out_axis`` times the receptive field (the product of the axes in neither, nor in
    ``batch_axis``)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ShapeError(f"nn.initializers: cannot compute the input and output sizes of a "
                         f"{len(shape)}-d weight of shape {shape} with the default in_axis; "
                         f"use a shape of rank >= 2 or pass in_axis", user_frame(3))
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    receptive_field = math.prod(shape) / in_size / out_size / _size(shape, batch_axis)
    return in_size * receptive_field, out_size * receptive_field


_DENOMINATORS = {
    "fan_in": lambda fan_in, fan_out: fan_in,
    "fan_out": lambda fan_in, fan_out: fan_out,
    "fan_avg": lambda fan_in, fan_out: (fan_in + fan_out) / 2,
    "fan_geo_avg": lambda fan_in, fan_out: (fan_in * fan_out) ** 0.5,
}
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
    """An initializer whose samples have mean 0 and variance ``scale / n``.

    ``n`` is, by ``mode``: ``"fan_in"`` the number of inputs, ``"fan_out"`` of outputs,
    ``"fan_avg"`` their mean, ``"fan_geo_avg"`` their geometric mean (times the receptive
    field: axes not in ``in_axis``/``out_axis``/``batch_axis``, e.g. conv kernel axes).

    Args:
      scale: the variance scale (a positive float).
      mode: ``"fan_in"``, ``"fan_out"``, ``"fan_avg"`` or ``"fan_geo_avg"``.
      distribution: ``"truncated_normal"`` (truncated at 2 standard deviations, rescaled to
        the target variance), ``"normal"`` or ``"uniform"`` (on ``[-sqrt(3 v), sqrt(3 v))``).
      in_axis: the input axis or axes of the weight, default -2.
      out_axis: the output axis or axes, default -1.
      batch_axis: axes to ignore, default none.
      dtype: the initializer's default dtype (float32 if None; float64 in x64 mode).

    Returns:
      ``init(key, shape, dtype=dtype)``.

    Example:
      >>> init = pto.nn.initializers.variance_scaling(2.0, "fan_in", "normal")
      >>> init(pto.random.key(0), (64, 32)).shape
      (64, 32)
    """
    if mode not in _DENOMINATORS:
        raise ValueError(f"variance_scaling: invalid mode {mode!r}; expected one of "
                         f"{sorted(_DENOMINATORS)}")
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"variance_scaling: invalid distribution {distribution!r}; expected "
                         f"one of {list(_DISTRIBUTIONS)}")

    def init(key, shape, dtype=dtype):
        shape = _shape(shape)
        dtype = _dtype("variance_scaling", dtype, complex_ok=True)
        fan_in, fan_out = compute_fans(shape, in_axis, out_axis, batch_axis)
        variance = pnp.asarray(scale / _DENOMINATORS[mode](fan_in, fan_out), dtype)
        complex_ = dtypes.is_complex(dtype)
        if distribution == "truncated_normal":
            unit = _COMPLEX_TRUNCATED_STDDEV if complex_ else _TRUNCATED_STDDEV
            stddev = pnp.divide(pnp.sqrt(variance), pnp.asarray(unit, dtype))
            draws = (_complex_truncated_normal(key, 2, shape, dtype) if complex_ else
                     random.truncated_normal(key, -2, 2, shape, dtype))
            return pnp.multiply(draws, stddev)
        if distribution == "normal":
            return pnp.multiply(random.normal(key, shape, dtype), pnp.sqrt(variance))
        if complex_:
            return pnp.multiply(_complex_uniform(key, shape, dtype), pnp.sqrt(variance))
        return pnp.multiply(random.uniform(key, shape, dtype, -1),
                            pnp.sqrt(pnp.multiply(3, variance)))
    return init


def _family(scale, mode, distribution, name, summary):
    def build(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
        return variance_scaling(scale, mode, distribution, in_axis=in_axis,
                                out_axis=out_axis, batch_axis=batch_axis, dtype=dtype)
    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"""{summary}: ``variance_scaling({scale}, "{mode}", "{distribution}")``.

    Args:
      in_axis: the input axis or axes of the weight, default -2.
      out_axis: the output axis or axes, default -1.
      batch_axis: axes to ignore, default none.
      dtype: the initializer's default dtype (float32 if None; float64 in x64 mode).

    Returns:
      ``init(key, shape, dtype=dtype)``.

    Example:
      >>> pto.nn.initializers.{name}()(pto.random.key(42), (2, 3)).shape
      (2, 3)
    """
    return build


glorot_uniform = xavier_uniform = _family(1.0, "fan_avg", "uniform", "glorot_uniform",
                                          "Glorot (Xavier) uniform initializer")
glorot_normal = xavier_normal = _family(1.0, "fan_avg", "truncated_normal", "glorot_normal",
                                        "Glorot (Xavier) normal initializer")
lecun_uniform = _family(1.0, "fan_in", "uniform", "lecun_uniform", "LeCun uniform initializer")
lecun_normal = _family(1.0, "fan_in", "truncated_normal", "lecun_normal",
                       "LeCun normal initializer")
he_uniform = kaiming_uniform = _family(2.0, "fan_in", "uniform", "he_uniform",
                                       "He (Kaiming) uniform initializer")
he_normal = kaiming_normal = _family(2.0, "fan_in", "truncated_normal", "he_normal",
                                     "He (Kaiming) normal initializer")


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of (semi-)orthogonal matrices: the Q factor of a normal draw's QR
    decomposition, its signs fixed by R's diagonal (so Q is uniform over orthogonal
    matrices), as in JAX.

    Args:
      scale: the factor applied to the result, default 1.
      column_axis: the axis of ``shape`` holding the columns; the other axes are flattened
        into rows. Columns are orthonormal when rows >= columns, rows otherwise.
      dtype: the initializer's default dtype (float32 if None; float64 in x64 mode).

    Returns:
      ``init(key, shape, dtype=dtype)``; ``shape`` needs at least two dimensions.

    Example:
      >>> w = pto.nn.initializers.orthogonal()(pto.random.key(0), (3, 3))
      >>> bool(pnp.allclose(w.T @ w, pnp.eye(3), atol=1e-5))
      True
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype("orthogonal", dtype)
        shape = _shape(shape)
        if len(shape) < 2:
            raise ShapeError(f"nn.initializers.orthogonal needs a shape of at least 2 "
                             f"dimensions, got {shape}", user_frame())
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        wide = n_rows < n_cols
        q, r = pnp.linalg.qr(random.normal(key, (n_cols, n_rows) if wide else (n_rows, n_cols),
                                           dtype))
        q = q * pnp.sign(pnp.diagonal(r))
        if wide:
            q = q.T
        rest = tuple(n for i, n in enumerate(shape) if i != column_axis % len(shape))
        q = pnp.moveaxis(pnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return pnp.multiply(q, pnp.asarray(scale, dtype))
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of delta-orthogonal convolution kernels (Xiao et al. 2018,
    arXiv:1806.05393): zeros, but an ``orthogonal`` matrix at the spatial centre, as JAX.

    Args:
      scale: the factor applied to the orthogonal matrix, default 1.
      column_axis: the axis of the last two holding the columns (``orthogonal``'s).
      dtype: the initializer's default dtype (float32 if None; float64 in x64 mode).

    Returns:
      ``init(key, shape, dtype=dtype)``; ``shape`` is 3-, 4- or 5-D (spatial dims, then
      ``fan_in <= fan_out``).

    Example:
      >>> w = pto.nn.initializers.delta_orthogonal()(pto.random.key(0), (3, 2, 2))
      >>> bool(pnp.allclose(w[1].T @ w[1], pnp.eye(2), atol=1e-5)), float(abs(w[0]).sum())
      (True, 0.0)
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype("delta_orthogonal", dtype)
        shape = _shape(shape)
        if len(shape) not in (3, 4, 5):
            raise ShapeError(f"nn.initializers.delta_orthogonal needs a 3-, 4- or 5-D shape "
                             f"(spatial dimensions, fan_in, fan_out), got {shape}",
                             user_frame())
        if shape[-1] < shape[-2]:
            raise ShapeError(f"nn.initializers.delta_orthogonal needs fan_in <= fan_out (the "
                             f"last two dimensions), got {shape}", user_frame())
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return pnp.zeros(shape, dtype).at[centre].set(matrix)
    return init


__all__ = ["constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
           "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform",
           "normal", "ones", "orthogonal", "truncated_normal", "uniform", "variance_scaling",
           "xavier_normal", "xavier_uniform", "zeros"]
__dir__ = dir_function(__all__)
