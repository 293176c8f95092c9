"""``ptojax.numpy`` (``pnp``): the NumPy API over ptojax arrays, traceable by every transform."""
from ptojax import dtypes as _dtypes
from ptojax.dtypes import finfo, iinfo
from ptojax.numpy.scalar_types import (bfloat16, bool_, cdouble, complex64, complex128,
                                       complex_, csingle, double, float8_e4m3fn, float8_e5m2,
                                       float16, float32, float64, float_, int8, int16, int32,
                                       int64, int_, single, uint, uint8, uint16, uint32, uint64)
from ptojax.numpy import array_methods as _array_methods
from ptojax.numpy.creation import (arange, array, asarray, empty, empty_like, eye, full,
                                   full_like, identity, linspace, meshgrid, ones, ones_like,
                                   tri, zeros, zeros_like)
from ptojax.numpy.complex_parts import (angle, conj, conjugate, imag, iscomplex, iscomplexobj,
                                        isreal, isrealobj, real)
from ptojax.numpy.indexing import take, take_along_axis
from ptojax.numpy import linalg
from ptojax.numpy.products import dot, einsum, inner, matmul, outer, tensordot, vdot
from ptojax.numpy.manipulation import (array_split, atleast_1d, atleast_2d, atleast_3d,
                                       broadcast_arrays, broadcast_shapes, broadcast_to,
                                       column_stack, concat, concatenate, diag, diagonal, dstack,
                                       expand_dims, flip, fliplr, flipud, hstack, matrix_transpose,
                                       moveaxis, permute_dims, ravel, repeat, reshape, roll, split,
                                       squeeze, stack, swapaxes, tile, trace, transpose, tril, triu,
                                       vstack)
from ptojax.numpy.math import *  # noqa: F401,F403  (the elementwise functions)
from ptojax.numpy.math import abs, round, pow  # noqa: F401
from ptojax.numpy.reductions import (all, amax, amin, any, argmax, argmin, count_nonzero,
                                     cumprod, cumsum, cumulative_prod, cumulative_sum, max,
                                     mean, min, prod, ptp, std, sum, var)
from ptojax.numpy.sorting import argpartition, argsort, partition, sort, sort_complex
from ptojax.numpy import fft  # noqa: F401  (pnp.fft, as jnp.fft)
# bits and integers (bits.py)
from ptojax.numpy.bits import bitwise_count, gcd, lcm, packbits, unpackbits
# whole-array comparisons (comparisons.py)
from ptojax.numpy.comparisons import allclose, array_equal, array_equiv, isclose
# NaN-ignoring reductions (nan_reductions.py)
from ptojax.numpy.nan_reductions import (nanargmax, nanargmin, nancumprod, nancumsum, nanmax,
                                         nanmean, nanmin, nanprod, nanstd, nansum, nanvar)
# statistics (statistics.py)
from ptojax.numpy.statistics import (average, corrcoef, cov, median, nanmedian, nanpercentile,
                                     nanquantile, percentile, quantile)
# finding elements (searching.py); its where() also has the one-argument form
from ptojax.numpy.searching import (argwhere, bincount, compress, digitize, extract,
                                    flatnonzero, nonzero, searchsorted, where)
# index helpers (index_tricks.py)
from ptojax.numpy.index_tricks import (diag_indices, diag_indices_from, diagflat,
                                       fill_diagonal, indices, ix_, ravel_multi_index,
                                       tril_indices, tril_indices_from, triu_indices,
                                       triu_indices_from, unravel_index)
# more shape functions (manipulation.py)
from ptojax.numpy.manipulation import dsplit, hsplit, rollaxis, rot90, unstack, vsplit
# adding and removing elements (insert_delete.py)
from ptojax.numpy.insert_delete import append, delete, insert, resize, trim_zeros
# pad in every mode (padding.py)
from ptojax.numpy.padding import pad
# differences, integrals, interpolation (differences.py)
from ptojax.numpy.differences import diff, ediff1d, gradient, interp, trapezoid, unwrap
# convolutions (convolution.py)
from ptojax.numpy.convolution import convolve, correlate
# vector products (vector_products.py)
from ptojax.numpy.vector_products import cross, kron, matvec, vecdot, vecmat
# polynomials (polynomial.py)
from ptojax.numpy.polynomial import (poly, polyadd, polyder, polydiv, polyfit, polyint,
                                     polymul, polysub, polyval, vander)
# window functions (windows.py)
from ptojax.numpy.windows import bartlett, blackman, hamming, hanning, kaiser
# more creation and sorting functions
from ptojax.numpy.creation import geomspace, logspace
from ptojax.numpy.sorting import lexsort
# floating-point anatomy (floating.py)
from ptojax.numpy.floating import frexp, i0, ldexp, modf, spacing
from ptojax.eval.array import Array as ndarray

import math as _math

import numpy as _np

from ptojax.numpy._promote import dtype_and_weak as _dtype_and_weak

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None
bool = bool_


def _promotion_type(x):
    """(dtype, weak) of a value, a dtype, a scalar type or a Python type (weak, as JAX)."""
    if x is int or x is float or x is bool:
        return _dtypes.canonicalize(x), x is not bool
    if isinstance(x, (type, _np.dtype, str)):
        return _dtypes.canonicalize(x), False
    return _dtype_and_weak(x, "result_type")


def result_type(*args):
    return _dtypes.promote(tuple(_promotion_type(a) for a in args))[0]


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
complexfloating = _np.complexfloating
number = _np.number

_array_methods.install()
