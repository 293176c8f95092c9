"""``ptojax.numpy`` (``pnp``): the NumPy API over ptojax arrays, traceable by every transform."""
from ptojax import dtypes as _dtypes
from ptojax.dtypes import finfo, iinfo
from ptojax.numpy.scalar_types import (bfloat16, bool_, cdouble, complex64, complex128,
                                       complex_, csingle, double, float8_e4m3fn, float8_e5m2,
                                       float8_e4m3, float8_e3m4, float8_e4m3fnuz,
                                       float8_e5m2fnuz, float8_e4m3b11fnuz, float8_e8m0fnu,
                                       float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, int1,
                                       int2, int4, uint1, uint2, uint4,
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
from ptojax.numpy.products import dot, inner, matmul, outer, tensordot, vdot
from ptojax.numpy.einsum import einsum
from ptojax.numpy.einsum_path import einsum_path
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
                                       fill_diagonal, indices, ix_, mask_indices,
                                       ravel_multi_index,
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
                                     polymul, polysub, polyval, roots, vander)
# window functions (windows.py)
from ptojax.numpy.windows import bartlett, blackman, hamming, hanning, kaiser
# more creation and sorting functions
from ptojax.numpy.creation import copy, geomspace, logspace
# mapping functions over axes (vectorize.py), choosing among values (selection.py)
from ptojax.numpy.vectorize import apply_along_axis, apply_over_axes, vectorize
from ptojax.numpy.selection import choose, piecewise, select
# set operations (setops.py)
from ptojax.numpy.setops import (intersect1d, isin, setdiff1d, setxor1d, union1d, unique,
                                 unique_all, unique_counts, unique_inverse, unique_values)
# histograms (histograms.py)
from ptojax.numpy.histograms import histogram, histogram2d, histogram_bin_edges, histogramdd
# NumPy's in-place writers, returning the result (put.py)
from ptojax.numpy.put import place, put, put_along_axis
# arrays from blocks, functions, bytes and text (constructors.py)
from ptojax.numpy.constructors import (block, from_dlpack, frombuffer, fromfile, fromfunction,
                                       fromiter, fromstring)
# index-expression objects (index_grids.py)
from ptojax.numpy.index_grids import c_, index_exp, mgrid, ogrid, r_, s_
# printing (printing.py) and .npy/.npz files (files.py)
from ptojax.numpy.printing import (array_repr, array_str, get_printoptions, printoptions,
                                   set_printoptions)
from ptojax.numpy.files import load, save, savez
# universal functions made from Python functions (ufunc.py)
from ptojax.numpy.ufunc import frompyfunc, ufunc, install as _install_ufunc_methods
# questions about values and dtypes (type_predicates.py)
from ptojax.numpy.type_predicates import can_cast, isdtype, isscalar, iterable
from ptojax.numpy.sorting import lexsort
# floating-point anatomy (floating.py)
from ptojax.numpy.floating import frexp, i0, ldexp, modf, spacing
from ptojax.public import (add_examples as _add_examples, dir_function as _dir_function,
                           public_names as _public_names)
from ptojax.eval.array import Array as ndarray

import math as _math

import numpy as _np

from ptojax.numpy._promote import dtype_and_weak as _dtype_and_weak

pi = _np.pi
e = _np.e
euler_gamma = _np.euler_gamma
inf = _np.inf
nan = _np.nan
newaxis = None
bool = bool_


def _promotion_type(x):
    """(dtype, weak) of a value, a dtype, a scalar type or a Python type (weak, as JAX)."""
    if x is int or x is float or x is bool:
        return _dtypes.canonicalize(x), x is not bool
    if isinstance(x, (type, _np.dtype, str)):   # 32 bits without x64, as JAX
        return _dtypes.user_dtype(x, "dtype"), False
    return _dtype_and_weak(x, "result_type")


def result_type(*args):
    return _dtypes.promote(tuple(_promotion_type(a) for a in args))[0]


def promote_types(a, b):
    return _dtypes.promote(((_dtypes.canonicalize(a), False), (_dtypes.canonicalize(b),
                                                               False)))[0]


def dtype(x):
    return _dtypes.canonicalize(x)


def issubdtype(arg1, arg2):
    return _dtypes.issubdtype(arg1, arg2)


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
_install_ufunc_methods()

__all__ = _public_names(globals(), submodules=("fft", "linalg"))
__dir__ = _dir_function(__all__)


_add_examples(globals(), """
dtype: The ptojax dtype of a dtype, scalar type or dtype name (64-bit types are kept).
    >>> pnp.dtype('float32')
    dtype('float32')
issubdtype: Whether dtype ``arg1`` is ``arg2`` or below it in the NumPy type hierarchy.
    >>> pnp.issubdtype(pnp.int32, pnp.integer)
    True
ndim: The number of dimensions of ``a`` (an array, or a nested list or scalar).
    >>> pnp.ndim([[1, 2], [3, 4]])
    2
promote_types: The dtype JAX's promotion lattice gives two dtypes.
    >>> pnp.promote_types(pnp.int8, pnp.uint8)
    dtype('int16')
result_type: The dtype an operation on ``args`` returns: JAX's promotion, with Python scalars
    weak.
    >>> pnp.result_type(pnp.array([1], dtype=pnp.int8), 2)
    dtype('int8')
    >>> pnp.result_type(pnp.int32, 1.0)
    dtype('float32')
shape: The shape of ``a`` as a tuple (for arrays, nested lists and scalars).
    >>> pnp.shape([[1, 2, 3], [4, 5, 6]])
    (2, 3)
size: The number of elements of ``a``.
    >>> pnp.size(pnp.zeros((2, 3)))
    6
""")
