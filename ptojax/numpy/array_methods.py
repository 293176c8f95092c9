"""Operators and methods shared by ``Array`` and ``Tracer`` (``x + y``, ``x[i]``, ``x.sum()``,
``x.at[i].set(v)``, ``x.T`` ...), attached to both classes when ``ptojax.numpy`` loads."""
from __future__ import annotations

import numpy as np

from ptojax import dtypes, lax
from ptojax.numpy import indexing, linalg, manipulation as manip, math as m
from ptojax.numpy import reductions as red, sorting
from ptojax.runtime.array import Array
from ptojax.trace import Tracer


def _swap(fn):
    return lambda self, other: fn(other, self)


def _defer(fn):
    """Binary operator that returns NotImplemented for operands it does not understand."""
    def op(self, other):
        if not isinstance(other, (Array, Tracer, np.ndarray, np.generic, int, float, bool)):
            return NotImplemented
        return fn(self, other)
    return op


def _pow(x, y):
    return m.power(x, y)


def _getitem(self, idx):
    return indexing.getitem(self, idx)


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return (indexing.getitem(self, i) for i in range(self.shape[0]))


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return manip.reshape(self, shape, order)


def _transpose(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return manip.transpose(self, axes or None)


def _astype(self, dtype, copy=False):
    return lax.convert_element_type(self, dtypes.canonicalize(dtype))


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """numpy ufuncs on traced values dispatch to ptojax.numpy (``np.exp(x)`` under jit)."""
    fn = getattr(m, ufunc.__name__, None)
    if method != "__call__" or fn is None or kwargs:
        return NotImplemented
    return fn(*inputs)


_OPERATORS = {
    "__add__": _defer(m.add), "__radd__": _defer(_swap(m.add)),
    "__sub__": _defer(m.subtract), "__rsub__": _defer(_swap(m.subtract)),
    "__mul__": _defer(m.multiply), "__rmul__": _defer(_swap(m.multiply)),
    "__truediv__": _defer(m.true_divide), "__rtruediv__": _defer(_swap(m.true_divide)),
    "__floordiv__": _defer(m.floor_divide), "__rfloordiv__": _defer(_swap(m.floor_divide)),
    "__mod__": _defer(m.remainder), "__rmod__": _defer(_swap(m.remainder)),
    "__divmod__": _defer(m.divmod), "__rdivmod__": _defer(_swap(m.divmod)),
    "__pow__": _defer(_pow), "__rpow__": _defer(_swap(_pow)),
    "__matmul__": _defer(linalg.matmul), "__rmatmul__": _defer(_swap(linalg.matmul)),
    "__and__": _defer(m.bitwise_and), "__rand__": _defer(_swap(m.bitwise_and)),
    "__or__": _defer(m.bitwise_or), "__ror__": _defer(_swap(m.bitwise_or)),
    "__xor__": _defer(m.bitwise_xor), "__rxor__": _defer(_swap(m.bitwise_xor)),
    "__lshift__": _defer(m.left_shift), "__rlshift__": _defer(_swap(m.left_shift)),
    "__rshift__": _defer(m.right_shift), "__rrshift__": _defer(_swap(m.right_shift)),
    "__eq__": _defer(m.equal), "__ne__": _defer(m.not_equal),
    "__lt__": _defer(m.less), "__le__": _defer(m.less_equal),
    "__gt__": _defer(m.greater), "__ge__": _defer(m.greater_equal),
    "__neg__": m.negative, "__pos__": m.positive, "__abs__": m.absolute,
    "__invert__": m.invert, "__getitem__": _getitem, "__round__": m.round,
}

_METHODS = {
    "sum": red.sum, "mean": red.mean, "var": red.var, "std": red.std, "prod": red.prod,
    "max": red.max, "min": red.min, "argmax": red.argmax, "argmin": red.argmin,
    "any": red.any, "all": red.all, "cumsum": red.cumsum, "cumprod": red.cumprod,
    "ptp": red.ptp, "reshape": _reshape, "transpose": _transpose, "astype": _astype,
    "squeeze": manip.squeeze, "ravel": manip.ravel, "flatten": manip.ravel,
    "swapaxes": manip.swapaxes, "repeat": manip.repeat, "clip": m.clip, "round": m.round,
    "dot": linalg.dot, "sort": sorting.sort, "argsort": sorting.argsort,
    "take": indexing.take, "conj": m.conjugate, "conjugate": m.conjugate,
    "diagonal": manip.diagonal, "trace": manip.trace,
}

_PROPERTIES = {
    "T": lambda self: manip.transpose(self),
    "mT": lambda self: manip.matrix_transpose(self),
    "at": lambda self: indexing._IndexUpdateHelper(self),
    "real": lambda self: self,
    "imag": lambda self: m.multiply(self, 0),
}


def install():
    for cls in (Array, Tracer):
        for name, fn in _OPERATORS.items():
            setattr(cls, name, fn)
        for name, fn in _METHODS.items():
            setattr(cls, name, fn)
        for name, fn in _PROPERTIES.items():
            setattr(cls, name, property(fn))
    Tracer.__iter__ = _iter
    Array.__iter__ = _iter
    Tracer.__array_ufunc__ = _array_ufunc
    # comparisons are elementwise, so these classes are unhashable by design (as in numpy)
    Array.__hash__ = None
    Tracer.__hash__ = None
