"""``ptojax.numpy`` (``pnp``): the NumPy API over ptojax arrays, traceable by every transform."""
from ptojax import dtypes as _dtypes
from ptojax.dtypes import (bfloat16, bool_, float8_e4m3fn, float8_e5m2, float16, float32,
                           float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                           finfo, iinfo)
from ptojax.numpy import array_methods as _array_methods
from ptojax.numpy.creation import (arange, array, asarray, empty, empty_like, eye, full,
                                   full_like, identity, linspace, meshgrid, ones, ones_like,
                                   tri, zeros, zeros_like)
from ptojax.numpy.indexing import take, take_along_axis
from ptojax.numpy.linalg import dot, einsum, inner, matmul, outer, tensordot, vdot
from ptojax.numpy.manipulation import (array_split, atleast_1d, atleast_2d, atleast_3d,
                                       broadcast_arrays, broadcast_to, column_stack, concat,
                                       concatenate, diag, diagonal, dstack, expand_dims, flip,
                                       fliplr, flipud, hstack, matrix_transpose, moveaxis, pad,
                                       permute_dims, ravel, repeat, reshape, roll, split,
                                       squeeze, stack, swapaxes, tile, trace, transpose, tril,
                                       triu, vstack)
from ptojax.numpy.math import *  # noqa: F401,F403  (the elementwise functions)
from ptojax.numpy.math import abs, round, pow  # noqa: F401
from ptojax.numpy.reductions import (all, amax, amin, any, argmax, argmin, count_nonzero,
                                     cumprod, cumsum, cumulative_prod, cumulative_sum, max,
                                     mean, min, prod, ptp, std, sum, var)
from ptojax.numpy.sorting import argpartition, argsort, partition, sort
from ptojax.eval.array import Array as ndarray

import math as _math

import numpy as _np

from ptojax.numpy._promote import result_type as _result_type

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None
bool = bool_
float_ = float64


def result_type(*args):
    return _result_type(*args)[0]


def promote_types(a, b):
    return _dtypes.promote(((_dtypes.canonicalize(a), False), (_dtypes.canonicalize(b),
                                                               False)))[0]


def dtype(x):
    return _dtypes.canonicalize(x)


def issubdtype(arg1, arg2):
    return _np.issubdtype(arg1, arg2)


def shape(a):
    return tuple(_np.shape(a)) if not hasattr(a, "shape") else tuple(a.shape)


def ndim(a):
    return len(shape(a))


def size(a):
    return _math.prod(shape(a))


floating = _np.floating
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
inexact = _np.inexact
number = _np.number

_array_methods.install()
