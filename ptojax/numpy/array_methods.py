"""Operators and methods shared by ``Array`` and ``Tracer`` (``x + y``, ``x[i]``, ``x.sum()``,
``x.at[i].set(v)``, ``x.T`` ...), attached to both classes when ``ptojax.numpy`` loads."""
from __future__ import annotations

import numpy as np

from ptojax import lax
from ptojax.errors import located
from ptojax.source_info import user_frame
from ptojax.numpy import complex_parts, indexing, manipulation as manip, products
from ptojax.numpy import math as m, reductions as red, searching, sorting
from ptojax.numpy._promote import supported_dtype
from ptojax.eval.array import Array
from ptojax.ops.convert import python_float_view
from ptojax.ir.symbolic import DimExpr
from ptojax.trace import Tracer, full_precision


def _swap(fn):
    return lambda self, other: fn(other, self)


_OPERANDS = (Array, Tracer, np.ndarray, np.generic, int, float, bool, complex, list, tuple,
             DimExpr)


def _defer(fn, reflected=None):
    """Binary operator. An operand of another type that implements the ``reflected``
    operator gets its turn (NotImplemented); anything else reaches ``fn``, which names the op
    and the bad operand in its error."""
    def op(self, other):
        if not isinstance(other, _OPERANDS) and reflected is not None and \
                hasattr(type(other), reflected):
            return NotImplemented
        return fn(self, other)
    return op


def _compare(fn):
    """``==``/``!=``: elementwise for arrays and numbers, Python's identity test otherwise."""
    def op(self, other):
        return fn(self, other) if isinstance(other, _OPERANDS) else NotImplemented
    return op


def _getitem(self, idx):
    return indexing.getitem(self, idx)


def _iter(self):
    if self.ndim == 0:
        raise located(TypeError("iteration over a 0-d array"), user_frame())
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
    # dtype None is the default float (float32; float64 in x64 mode), as JAX
    return lax.convert_element_type(self, supported_dtype(float if dtype is None else dtype,
                                                          "astype"))


def _round_operator(self, ndigits=None):
    """Python's ``round(x[, ndigits])``, as JAX's: without ``ndigits`` the result is an
    integer array (the default int dtype, as ``round(7.5)`` is an int), with it the array's
    own dtype rounded to ``ndigits`` decimals."""
    if ndigits is None:
        return _astype(m.round(self), int)
    return m.round(self, ndigits)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    return searching.compress(condition, self, axis, size=size, fill_value=fill_value,
                              out=out)


def _copy(self):
    return self  # arrays are immutable: a copy is the same value


def _setitem(self, idx, value):
    raise TypeError("ptojax arrays are immutable and do not support in-place item assignment "
                    "(as JAX's): instead of x[idx] = y, use x = x.at[idx].set(y) or another "
                    ".at[] method")


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """numpy ufuncs on traced values dispatch to ptojax.numpy (``np.exp(x)`` under jit)."""
    fn = getattr(m, ufunc.__name__, None) or getattr(products, ufunc.__name__, None)
    if method != "__call__" or fn is None or kwargs:
        return NotImplemented
    return fn(*inputs)


_ARITHMETIC = {
    "add": m.add, "sub": m.subtract, "mul": m.multiply, "truediv": m.true_divide,
    "floordiv": m.floor_divide, "mod": m.remainder, "divmod": m.divmod, "pow": m.power,
    "matmul": products.matmul, "and": m.bitwise_and, "or": m.bitwise_or, "xor": m.bitwise_xor,
    "lshift": m.left_shift, "rshift": m.right_shift,
}

_OPERATORS = {
    "__eq__": _compare(m.equal), "__ne__": _compare(m.not_equal),
    "__lt__": _defer(m.less, "__gt__"), "__le__": _defer(m.less_equal, "__ge__"),
    "__gt__": _defer(m.greater, "__lt__"), "__ge__": _defer(m.greater_equal, "__le__"),
    "__neg__": m.negative, "__pos__": m.positive, "__abs__": m.absolute,
    "__invert__": m.invert, "__getitem__": _getitem, "__round__": _round_operator,
    "__setitem__": _setitem,
}
for _name, _fn in _ARITHMETIC.items():
    _OPERATORS[f"__{_name}__"] = _defer(_fn, f"__r{_name}__")
    _OPERATORS[f"__r{_name}__"] = _defer(_swap(_fn))

_METHODS = {
    "sum": red.sum, "mean": red.mean, "var": red.var, "std": red.std, "prod": red.prod,
    "max": red.max, "min": red.min, "argmax": red.argmax, "argmin": red.argmin,
    "any": red.any, "all": red.all, "cumsum": red.cumsum, "cumprod": red.cumprod,
    "ptp": red.ptp, "reshape": _reshape, "transpose": _transpose, "astype": _astype,
    "squeeze": manip.squeeze, "ravel": manip.ravel, "flatten": manip.ravel,
    "swapaxes": manip.swapaxes, "repeat": manip.repeat, "clip": m.clip, "round": m.round,
    "dot": products.dot, "sort": sorting.sort, "argsort": sorting.argsort,
    "take": indexing.take, "conj": complex_parts.conj, "conjugate": complex_parts.conjugate,
    "diagonal": manip.diagonal, "trace": manip.trace, "copy": _copy,
    "nonzero": searching.nonzero, "searchsorted": searching.searchsorted,
    "compress": _compress,
}

_PROPERTIES = {
    "T": lambda self: manip.transpose(self),
    "mT": lambda self: manip.matrix_transpose(self),
    "at": lambda self: indexing._IndexUpdateHelper(self),
    "real": complex_parts.real,
    "imag": complex_parts.imag,
}


# Python's float arithmetic, which a Python float argument of jit keeps doing (below)
_PYTHON_FLOAT_OPERATORS = {f"__{n}__" for n in ("add", "sub", "mul", "truediv", "floordiv",
                                                 "mod", "pow", "neg", "pos", "abs", "lt",
                                                 "le", "gt", "ge", "eq", "ne")}
_PYTHON_FLOAT_OPERATORS |= {f"__r{n}__" for n in ("add", "sub", "mul", "truediv", "floordiv",
                                                   "mod", "pow")}


def _keeps_python_precision(operator):
    """A Tracer operator that, on a Python float argument of jit and Python scalars, computes
    as Python would (float64) and keeps the result at full precision: ``s * 2 + x`` under jit
    equals the eager result for a float64 ``x``."""
    def op(self, *args):
        carrier = full_precision(self)
        if carrier is None or not all(type(a) in (int, float, bool) or
                                      full_precision(a) is not None for a in args):
            return operator(self, *args)
        out = operator(carrier, *[a if full_precision(a) is None else full_precision(a)
                                  for a in args])
        return python_float_view(out) if out.weak_type and out.dtype == np.float64 else out
    return op


def install():
    for cls in (Array, Tracer):
        for name, fn in _OPERATORS.items():
            setattr(cls, name, fn)
        for name, fn in _METHODS.items():
            setattr(cls, name, fn)
        for name, fn in _PROPERTIES.items():
            setattr(cls, name, property(fn))
    for name in _PYTHON_FLOAT_OPERATORS:
        setattr(Tracer, name, _keeps_python_precision(_OPERATORS[name]))
    Tracer.__iter__ = _iter
    Array.__iter__ = _iter
    Tracer.__array_ufunc__ = _array_ufunc
    # comparisons are elementwise, so these classes are unhashable by design (as in numpy)
    Array.__hash__ = None
    Tracer.__hash__ = None
