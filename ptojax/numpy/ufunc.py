"""``ufunc``: a scalar function with NumPy's universal-function methods, and ``frompyfunc``
to make one, as ``jax.numpy.ufunc``. Calling it is ``vectorize(func)``; ``reduce`` folds an
axis with a ``fori_loop``, ``accumulate`` with a ``scan``, ``at`` applies it at indices
one after another (repeated indices compound), ``reduceat`` folds segments, ``outer`` is
two nested ``vmap``s.

The functions JAX makes ufuncs (``add``, ``multiply``, ``subtract``, ``minimum``,
``maximum``, ``logical_and/or/xor``, ``bitwise_and/or/xor``, ``logaddexp(2)``, ``negative``)
stay plain functions here (no wrapper on the hot path), and ``install()`` gives them the
ufunc attributes and methods: ``pnp.add.at(x, i, v, inplace=False)``,
``pnp.maximum.reduce(x)``, ``pnp.multiply.outer(a, b)``... with JAX's fast paths (sum,
prod, max, min, all, any, cumsum, cumprod, ``.at[].add``)."""
from __future__ import annotations

import math
import operator

from ptojax import dtypes, lax
from ptojax.control_flow import fori_loop, scan
from ptojax.errors import UnsupportedError, located
from ptojax.ir.types import TensorType
from ptojax.batching.api import vmap
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import (asarray, broadcast_shapes, broadcast_to_shape, convert,
                                   supported_dtype)
from ptojax.numpy import math as ew
from ptojax.numpy.creation import full
from ptojax.numpy.indexing import take
from ptojax.numpy.insert_delete import append
from ptojax.numpy.manipulation import moveaxis, ravel, reshape
from ptojax.numpy import reductions as red
from ptojax.numpy.vectorize import vectorize
from ptojax.source_info import user_frame
from ptojax.trace import trace_flat
from ptojax.public import add_examples as _add_examples


def _unsupported(what):
    return UnsupportedError(f"{what} is not supported (as in JAX)", user_frame())


class ufunc:
    """A universal function: ``func`` of ``nin`` scalars (``nout`` results) applied
    elementwise with broadcasting, with the methods ``reduce``, ``accumulate``, ``at``,
    ``reduceat`` and ``outer`` (binary ufuncs). ``identity`` starts empty reductions.

    >>> mul = pnp.ufunc(lambda a, b: a * b, 2, 1, name="mul", identity=1)
    >>> mul.reduce(pnp.array([1, 2, 3, 4]))
    Array(24, dtype=int32)
    """

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
                 call=None, reduce=None, accumulate=None, at=None, reduceat=None):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._props = {"func": func, "nin": operator.index(nin),
                       "nout": operator.index(nout), "nargs": operator.index(nargs or nin),
                       "identity": identity, "call": call, "reduce": reduce,
                       "accumulate": accumulate, "at": at, "reduceat": reduceat}

    _func = property(lambda self: self._props["func"])
    nin = property(lambda self: self._props["nin"])
    nout = property(lambda self: self._props["nout"])
    nargs = property(lambda self: self._props["nargs"])
    identity = property(lambda self: self._props["identity"])

    def _key(self):
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self):
        return f"<pnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise _unsupported(f"the out argument of {self!r}")
        if where is not None:
            raise _unsupported(f"the where argument of {self!r}")
        call = self._props["call"] or vectorize(self._func)
        return call(*args)

    # helpers ------------------------------------------------------------------------------
    def _binary(self, method):
        if self.nin != 2:
            raise located(ValueError(f"{self.__name__}.{method}: only binary ufuncs have "
                                     f"it"), user_frame())
        if self.nout != 1:
            raise located(ValueError(f"{self.__name__}.{method}: only ufuncs returning one "
                                     f"value have it"), user_frame())

    def _result_dtype(self, *dtypes_):
        """The dtype ``func`` returns for scalars of ``dtypes_``."""
        closed = trace_flat(lambda *xs: [asarray(self._func(*xs))],
                            [TensorType((), d) for d in dtypes_], self.__name__)
        return closed.out_types[0].dtype

    # reduce -------------------------------------------------------------------------------
    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """``a`` folded along ``axis`` (None: all of it) with the function, starting from
        ``initial`` (default: the identity, else the first element); ``where`` masks."""
        self._binary("reduce")
        if out is not None:
            raise _unsupported(f"the out argument of {self.__name__}.reduce")
        if where is not None:
            where = asarray(where, op=f"{self.__name__}.reduce")
            if self.identity is None and initial is None:
                raise located(ValueError(f"reduction operation {self.__name__!r} has no "
                                         f"identity, so a where mask needs initial="),
                              user_frame())
            if where.dtype != bool:
                raise located(ValueError(f"{self.__name__}.reduce: where must be bool, got "
                                         f"{where.dtype}"), user_frame())
        custom = self._props["reduce"]
        if custom is not None:
            return custom(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                          where=where)
        return self._reduce_by_loop(asarray(a, op=f"{self.__name__}.reduce"), axis, dtype,
                                    keepdims, initial, where)

    def _reduce_by_loop_entry(self, a, axis=0, dtype=None, keepdims=False, initial=None,
                              where=None):
        return self._reduce_by_loop(asarray(a, op=f"{self.__name__}.reduce"), axis, dtype,
                                    keepdims, initial, where)

    def _reduce_by_loop(self, arr, axis, dtype, keepdims, initial, where):
        initial = self.identity if initial is None else initial
        dtype = self._result_dtype(arr.dtype, arr.dtype) if dtype is None \
            else supported_dtype(dtype, f"{self.__name__}.reduce")
        if where is not None:
            where = broadcast_to_shape(where, tuple(arr.shape), f"{self.__name__}.reduce")
        if isinstance(axis, tuple):
            raise _unsupported(f"a tuple of axes in {self.__name__}.reduce")
        if axis is None:
            final = (1,) * arr.ndim if keepdims else ()
            arr, axis = ravel(arr), 0
            where = None if where is None else ravel(where)
        else:
            axis = normalize_axis(f"{self.__name__}.reduce", axis, arr.ndim)
            rest = (*arr.shape[:axis], *arr.shape[axis + 1:])
            final = (*arr.shape[:axis], 1, *arr.shape[axis + 1:]) if keepdims else rest
            arr = moveaxis(arr, axis, 0)
            where = None if where is None else moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise located(ValueError(f"zero-size array to reduction operation "
                                         f"{self.__name__} which has no identity"),
                              user_frame())
            return full(final, initial, dtype)

        def body(i, value):
            folded = self(value, convert(arr[i], dtype))
            return folded if where is None else ew.where(where[i], folded, value)
        start, first = (1, arr[0]) if initial is None else (0, initial)
        first = broadcast_to_shape(convert(asarray(first), dtype), tuple(arr.shape[1:]))
        result = fori_loop(start, arr.shape[0], body, first)
        return reshape(result, final) if keepdims else result

    # accumulate ---------------------------------------------------------------------------
    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running fold of ``a`` along ``axis``: element ``i`` folds elements 0..i."""
        self._binary("accumulate")
        if out is not None:
            raise _unsupported(f"the out argument of {self.__name__}.accumulate")
        custom = self._props["accumulate"]
        if custom is not None:
            return custom(a, axis=axis, dtype=dtype)
        arr = asarray(a, op=f"{self.__name__}.accumulate")
        dtype = self._result_dtype(arr.dtype, arr.dtype) if dtype is None \
            else supported_dtype(dtype, f"{self.__name__}.accumulate")
        if axis is None or isinstance(axis, tuple):
            raise located(ValueError(f"{self.__name__}.accumulate: needs one integer axis"),
                          user_frame())
        axis = normalize_axis(f"{self.__name__}.accumulate", axis, arr.ndim)
        if arr.size == 0:
            return full(tuple(arr.shape), 0, dtype)
        arr = convert(moveaxis(arr, axis, 0), dtype)
        first = arr[0]

        def step(carry, x):
            y = convert(self(carry, x), dtype)
            return y, y
        _, rest = scan(step, first, arr[1:])
        return moveaxis(lax.concatenate([lax.expand_dims(first, (0,)), rest], 0), 0, axis)

    # at -----------------------------------------------------------------------------------
    def at(self, a, indices, b=None, /, *, inplace=True):
        """``a`` with the function applied at ``indices`` (with ``b``'s values for a binary
        ufunc), one index after another; needs ``inplace=False``."""
        if inplace:
            raise UnsupportedError(f"{self.__name__}.at: ptojax arrays are immutable; pass "
                                   f"inplace=False and use the returned array", user_frame())
        custom = self._props["at"]
        if custom is not None:
            return custom(a, indices) if b is None else custom(a, indices, b)
        args = () if b is None else (asarray(b, op=f"{self.__name__}.at"),)
        a = asarray(a, op=f"{self.__name__}.at")
        dtype = self._result_dtype(a.dtype, *(x.dtype for x in args))
        a, args = convert(a, dtype), tuple(convert(x, dtype) for x in args)
        indices = indices if isinstance(indices, tuple) else (indices,)
        if not indices:
            return a
        shapes = [tuple(asarray(i).shape) for i in indices if not isinstance(i, slice)]
        shape = broadcast_shapes(f"{self.__name__}.at", *shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        count = math.prod(shape)
        if args:
            tail = tuple(args[0].shape[len(shape):])
            args = (reshape(broadcast_to_shape(args[0], (*shape, *tail)), (count, *tail)),)
        flat = [i if isinstance(i, slice) else ravel(broadcast_to_shape(asarray(i), shape))
                for i in indices]

        def step(carry, k):
            index = tuple(i if isinstance(i, slice) else i[k] for i in flat)
            updated = self(carry.at[index].get(), *(x[k] for x in args))
            return carry.at[index].set(updated), None
        return scan(step, a, lax.iota(dtypes.default_int(), count))[0]

    # reduceat -----------------------------------------------------------------------------
    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """The folds of the segments ``a[indices[k]:indices[k+1]]`` along ``axis`` (the last
        to the end; where ``indices`` do not increase, just ``a[indices[k]]``)."""
        self._binary("reduceat")
        if out is not None:
            raise _unsupported(f"the out argument of {self.__name__}.reduceat")
        custom = self._props["reduceat"]
        if custom is not None:
            return custom(a, indices, axis=axis, dtype=dtype)
        a = asarray(a, op=f"{self.__name__}.reduceat")
        indices = asarray(indices, op=f"{self.__name__}.reduceat")
        if a.ndim == 0:
            raise located(ValueError(f"reduceat: a must have 1 or more dimensions, got "
                                     f"shape {tuple(a.shape)}"), user_frame())
        if indices.ndim != 1:
            raise located(ValueError(f"reduceat: indices must be one-dimensional, got shape "
                                     f"{tuple(indices.shape)}"), user_frame())
        if axis is None or isinstance(axis, (tuple, list)):
            raise located(ValueError("reduceat requires a single integer axis."),
                          user_frame())
        axis = normalize_axis(f"{self.__name__}.reduceat", axis, a.ndim)
        result = take(a, indices, axis=axis)
        others = tuple(d for d in range(result.ndim) if d != axis)
        bounds = lax.expand_dims(append(indices, a.shape[axis]), others)
        starts = lax.slice_in_dim(bounds, 0, bounds.shape[axis] - 1, 1, axis)
        ends = lax.slice_in_dim(bounds, 1, bounds.shape[axis], 1, axis)

        def body(i, value):
            inside = ew.logical_and(ew.greater(i, starts), ew.less(i, ends))
            return ew.where(inside, self(value, take(a, lax.expand_dims(i, (0,)), axis=axis)),
                            value)
        return fori_loop(0, a.shape[axis], body, result)

    # outer --------------------------------------------------------------------------------
    def outer(self, A, B, /):
        """The function of every pair ``(A[i...], B[j...])``: shape ``A.shape + B.shape``."""
        self._binary("outer")
        A, B = asarray(A, op=f"{self.__name__}.outer"), asarray(B, op=f"{self.__name__}.outer")
        pairs = vmap(vmap(self, (None, 0)), (0, None))(ravel(A), ravel(B))
        return reshape(pairs, (*A.shape, *B.shape))


# the ufunc methods of pnp's own elementwise functions ----------------------------------------
def _reduction(fn, has_dtype=True, takes_initial=True):
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        kwargs = {"keepdims": keepdims, "where": where}
        if takes_initial:
            kwargs["initial"] = initial
        if has_dtype:
            return fn(a, axis, dtype, **kwargs)
        out = fn(a, axis, **kwargs)
        return out if dtype is None else convert(out, supported_dtype(dtype, "reduce"))
    return reduce


def _scatter_at(kind):
    def at(a, indices, b):
        a = asarray(a, op=f"{kind}.at")
        if a.dtype == dtypes.bool_:
            b = convert(ew.not_equal(asarray(b), 0), dtypes.int32)
            updated = getattr(convert(a, dtypes.int32).at[indices], kind)(b)
            return convert(updated, dtypes.bool_)
        return getattr(a.at[indices], kind)(b)
    return at


def _cumulative(fn):
    return lambda a, axis=0, dtype=None: fn(a, axis, dtype)


_BINARY = {   # name: (identity, reduce, accumulate, at), as JAX's
    "add": (0, _reduction(red.sum), _cumulative(red.cumsum), _scatter_at("add")),
    "multiply": (1, _reduction(red.prod), _cumulative(red.cumprod), _scatter_at("multiply")),
    "subtract": (None, None, None, _scatter_at("subtract")),
    "minimum": (None, _reduction(red.min, has_dtype=False), None, None),
    "maximum": (None, _reduction(red.max, has_dtype=False), None, None),
    "logical_and": (True, None, None, None), "logical_or": (False, None, None, None),
    "logical_xor": (False, None, None, None), "bitwise_and": (-1, None, None, None),
    "bitwise_or": (0, None, None, None), "bitwise_xor": (0, None, None, None),
    "logaddexp": (-float("inf"), None, None, None),
    "logaddexp2": (-float("inf"), None, None, None),
}
_LOGICAL_REDUCTIONS = {"logical_and": red.all, "logical_or": red.any}


def _logical_reduction(fn, u):
    """``all``/``any`` as ``u.reduce``; they take no initial value, so one is folded in by
    the generic loop."""
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        if initial is not None:
            return u._reduce_by_loop_entry(a, axis=axis, dtype=dtype, keepdims=keepdims,
                                           initial=initial, where=where)
        out = fn(a, axis, keepdims=keepdims, where=where)
        return out if dtype is None else convert(out, supported_dtype(dtype, "reduce"))
    return reduce


def _attach(fn, u):
    """``u``'s attributes and methods on the function ``fn``."""
    for name in ("nin", "nout", "nargs", "identity"):
        setattr(fn, name, getattr(u, name))
    for name in ("reduce", "accumulate", "at", "reduceat", "outer"):
        setattr(fn, name, getattr(u, name))


def install():
    """Give pnp's elementwise functions that are ufuncs in JAX their ufunc methods."""
    for name, (identity, reduce, accumulate, at) in _BINARY.items():
        fn = getattr(ew, name)
        u = ufunc(fn, 2, 1, name=name, identity=identity, call=fn, reduce=reduce,
                  accumulate=accumulate, at=at)
        if name in _LOGICAL_REDUCTIONS:
            u._props["reduce"] = _logical_reduction(_LOGICAL_REDUCTIONS[name], u)
        _attach(fn, u)
    _attach(ew.negative, ufunc(ew.negative, 1, 1, name="negative", call=ew.negative))


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ``ufunc`` from ``func``, a function of ``nin`` scalars returning ``nout`` values."""
    return ufunc(func, nin, nout, identity=identity)


__all__ = ["frompyfunc", "ufunc"]


_add_examples(globals(), """
frompyfunc:
    >>> add = pnp.frompyfunc(lambda a, b: a + b, nin=2, nout=1, identity=0)
    >>> x = pnp.arange(4)
    >>> add.outer(x, x)[1]
    Array([1, 2, 3, 4], dtype=int32)
    >>> add.accumulate(x)
    Array([0, 1, 3, 6], dtype=int32)
    >>> add.at(x, 1, 10, inplace=False)
    Array([ 0, 11,  2,  3], dtype=int32)
""")
