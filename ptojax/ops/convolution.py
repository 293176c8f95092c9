"""``conv_general_dilated``: XLA's convolution (strides, explicit padding, lhs/rhs dilation,
feature and batch groups, any dimension layout), with every fact; ``conv``,
``conv_with_general_padding`` and ``conv_transpose`` are wrappers, as in JAX.

Layouts: ``dimension_numbers`` is a ``ConvDimensionNumbers`` of three permutations taking each
operand to its canonical layout — lhs ``(N, C, *spatial)``, rhs ``(O, I, *spatial)``, out
``(N, C, *spatial)`` — or JAX's strings (``('NHWC', 'HWIO', 'NHWC')``).

The host implementation is im2col and BLAS (``ops/im2col.py``): the window view of the
dilated, padded input in its own layout, copied slab by slab into a cache-sized matrix of
(batch, position) rows and (feature, kernel offset) columns, each slab multiplied at once.
The tile fact (``tile_forms.convolution``): where the cube multiplies the dtype, a 2-d
convolution without groups is one cube kernel that expands its im2col blocks on chip (a
unit-stride lhs-dilated one: one kernel per output phase) (``TIMG2COL``, ``tile/img2col.py``; ``tile/rules.py``'s ``direct_conv_reason`` says
which, ``tile/convolution.py`` canonicalizes its layout); any other is the same algorithm written in primitives (pad, strided slices,
concatenate, transposes, a dot_general), whose matmul becomes a cube kernel with the usual
epilogue fusion while the patch gathering stays tensor-level.

Gradients are JAX's: convolution is bilinear, the lhs cotangent is a convolution of the output
cotangent with the spatially reversed kernel (window strides become lhs dilation), and the rhs
cotangent a convolution of the input with the output cotangent (feature groups become batch
groups)."""
from __future__ import annotations

import itertools
import math
from typing import NamedTuple, Sequence

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, ShapeError
from ptojax.eval.leaves import check_arraylike
from ptojax.ir.types import TensorType
from ptojax.ops import sharding_rules as sr, tile_forms
from ptojax.ops.arithmetic import bilinear_jvp
from ptojax.ops.checks import require_same_dtype
from ptojax.ops.convert import convert_element_type, convert_impl
from ptojax.ops.elementwise import zero_like
from ptojax.ops.im2col import conv_matmul
from ptojax.ops.linalg import accumulation_dtype, canonicalize_precision, dot_general
from ptojax.ops.shape import reshape, transpose
from ptojax.ops.slicing import concatenate, pad, rev, slice
from ptojax.ops.tangents import Zero, is_undefined, is_zero
from ptojax.ops.windows import dilate_dim, explicit_pads, strided_dim
from ptojax.source_info import user_frame
from ptojax.trace import Primitive
from ptojax.public import add_examples as _add_examples


class ConvDimensionNumbers(NamedTuple):
    """Per operand, its dimensions in canonical order: lhs and out ``(batch, feature,
    *spatial)``, rhs ``(out feature, in feature, *spatial)``."""
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


# dimension numbers -----------------------------------------------------------------------------
def conv_general_permutations(dimension_numbers) -> tuple:
    """The three permutations of string specs such as ``('NHWC', 'HWIO', 'NHWC')``; spatial
    dimensions are ordered as they appear in the rhs spec."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (spec, (a, b)) in enumerate(zip(dimension_numbers, pairs)):
        if spec.count(a) != 1 or spec.count(b) != 1 or len(set(spec)) != len(spec):
            raise ShapeError(f"conv: dimension_numbers[{i}] = {spec!r} must contain '{a}' and "
                             f"'{b}' exactly once and no character twice")
    if not set(lhs_spec) - {"N", "C"} == set(rhs_spec) - {"O", "I"} == \
            set(out_spec) - {"N", "C"}:
        raise ShapeError(f"conv: dimension_numbers {tuple(dimension_numbers)} must name the "
                         f"same spatial dimensions in all three specs")

    def permutation(spec, pair):
        spatial = sorted((i for i, c in enumerate(spec) if c not in pair),
                         key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *spatial)

    return tuple(permutation(s, p) for s, p in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """``dimension_numbers`` (None, strings or ConvDimensionNumbers) as ConvDimensionNumbers."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
    if len(lhs_shape) != len(rhs_shape):
        raise ShapeError(f"conv: lhs and rhs must have the same rank, got shapes "
                         f"{tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3 or \
            not all(isinstance(s, str) for s in dimension_numbers):
        raise ShapeError(f"conv: dimension_numbers must be None, a ConvDimensionNumbers or "
                         f"three strings such as ('NHWC', 'HWIO', 'NHWC'), got "
                         f"{dimension_numbers!r}")
    if any(len(s) != len(lhs_shape) for s in dimension_numbers):
        raise ShapeError(f"conv: each of dimension_numbers {tuple(dimension_numbers)} must "
                         f"have one character per dimension of the rank-{len(lhs_shape)} "
                         f"operands")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def _spatial(spec) -> tuple:
    return tuple(spec[2:])


def _swap_features(spec) -> tuple:
    return (spec[1], spec[0], *spec[2:])


# shape -----------------------------------------------------------------------------------------
def _canonical_shapes(lhs, rhs, dimension_numbers):
    lhs_spec, rhs_spec, _ = dimension_numbers
    return ([lhs.shape[d] for d in lhs_spec], [rhs.shape[d] for d in rhs_spec])


def _check_groups(lhs_shape, rhs_shape, feature_group_count, batch_group_count):
    (n, c), (o, i) = lhs_shape[:2], rhs_shape[:2]
    for name, g in (("feature_group_count", feature_group_count),
                    ("batch_group_count", batch_group_count)):
        if not isinstance(g, (int, np.integer)) or g < 1:
            raise ShapeError(f"conv: {name} must be a positive integer, got {g!r}")
    if feature_group_count > 1 and batch_group_count > 1:
        raise ShapeError("conv: at most one of feature_group_count and batch_group_count may "
                         f"exceed 1, got {feature_group_count} and {batch_group_count}")
    if c % feature_group_count or c // feature_group_count != i:
        raise ShapeError(f"conv: the lhs feature size {c} divided by feature_group_count "
                         f"{feature_group_count} must equal the rhs input feature size {i}")
    for name, g in (("feature_group_count", feature_group_count),
                    ("batch_group_count", batch_group_count)):
        if o % g:
            raise ShapeError(f"conv: the rhs output feature size {o} must be a multiple of "
                             f"{name} {g}")
    if n % batch_group_count:
        raise ShapeError(f"conv: batch_group_count {batch_group_count} must divide the lhs "
                         f"batch size {n}")


def _out_spatial(lhs_shape, rhs_shape, window_strides, padding, lhs_dilation, rhs_dilation):
    sizes = []
    for n, k, s, (lo, hi), ld, rd in zip(lhs_shape[2:], rhs_shape[2:], window_strides,
                                         padding, lhs_dilation, rhs_dilation):
        padded = dilate_dim(n, ld) + lo + hi
        if padded < 0:
            raise ShapeError(f"conv: negative padding {(lo, hi)} is larger than the dilated "
                             f"input dimension {dilate_dim(n, ld)}")
        sizes.append(strided_dim(padded, dilate_dim(k, rd), s))
    return sizes


def _conv_abstract(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count,
                   preferred_element_type=None, precision=None):
    require_same_dtype("conv_general_dilated", (lhs, rhs))
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ShapeError(f"conv: lhs and rhs must have the same rank >= 2, got {lhs} and {rhs}")
    k = lhs.ndim - 2
    for name, v in (("window_strides", window_strides), ("padding", padding),
                    ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(v) != k:
            raise ShapeError(f"conv: {name} has {len(v)} entries for {k} spatial dimensions")
    for name, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if any(d < 1 for d in v):
            raise ShapeError(f"conv: {name} must be positive, got {tuple(v)}")
    for spec, x in zip(dimension_numbers, (lhs, rhs, lhs)):
        if sorted(spec) != list(range(x.ndim)):
            raise ShapeError(f"conv: dimension numbers {tuple(dimension_numbers)} are not "
                             f"permutations of the rank-{x.ndim} operands' dimensions")
    lshape, rshape = _canonical_shapes(lhs, rhs, dimension_numbers)
    _check_groups(lshape, rshape, feature_group_count, batch_group_count)
    out = [lshape[0] // batch_group_count, rshape[0],
           *_out_spatial(lshape, rshape, window_strides, padding, lhs_dilation, rhs_dilation)]
    shape = [0] * len(out)
    for canonical, d in zip(out, dimension_numbers.out_spec):
        shape[d] = canonical
    out_dtype = dtypes.canonicalize(preferred_element_type or lhs.dtype)
    if dtypes.is_bool(lhs.dtype):
        raise DtypeError("conv: boolean operands are not supported; convert them to a number "
                         "type first")
    return TensorType(tuple(shape), out_dtype, lhs.weak_type and rhs.weak_type)


# host implementation: im2col + matmul --------------------------------------------------------
def _from_channels_last(out_spec) -> tuple:
    """The transpose taking a ``(N, *spatial, C)`` result to the ``out_spec`` layout."""
    k = len(out_spec) - 2
    current = (0, k + 1, *range(1, k + 1))    # where each canonical dimension is now
    return tuple(current[list(out_spec).index(d)] for d in range(k + 2))


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count,
               preferred_element_type=None, precision=None):
    """Blocked im2col and BLAS in the input's own layout (``ops/im2col.py``)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_dtype = np.dtype(preferred_element_type or lhs.dtype)
    compute = accumulation_dtype(lhs.dtype, out_dtype)
    out = conv_matmul(np.asarray(lhs).astype(compute, copy=False),
                      np.asarray(rhs).astype(compute, copy=False), lhs_spec, rhs_spec,
                      window_strides, padding, lhs_dilation, rhs_dilation,
                      max(feature_group_count, batch_group_count), batch_group_count > 1)
    out = np.transpose(out, np.argsort(out_spec))
    return out if out.dtype == out_dtype else convert_impl(out, out_dtype)


conv_general_dilated_p = Primitive("conv_general_dilated", _conv_abstract, _conv_impl,
                                   linear=True)


# shape helpers (as jax.lax's, used by layer libraries such as stax) ---------------------------
def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1) -> tuple:
    """The output shape of a convolution of operands in canonical (NC..., OI...) order."""
    if isinstance(pads, str):
        pads = explicit_pads("conv", pads, lhs_shape[2:], rhs_shape[2:], strides)
    return (lhs_shape[0] // batch_group_count, rhs_shape[0],
            *_out_spatial(lhs_shape, rhs_shape, strides, pads, (1,) * len(strides),
                          (1,) * len(strides)))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers) -> tuple:
    """The output shape of ``conv_general_dilated`` without dilation."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    out = conv_shape_tuple([lhs_shape[d] for d in dn.lhs_spec],
                           [rhs_shape[d] for d in dn.rhs_spec], window_strides, padding)
    return tuple(out[list(dn.out_spec).index(d)] for d in range(len(out)))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers) -> tuple:
    """The output shape of ``conv_transpose`` (string or explicit padding)."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = [lhs_shape[d] for d in dn.lhs_spec]
    rhs = [rhs_shape[d] for d in dn.rhs_spec]
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding)
                   for k, s in zip(rhs[2:], window_strides)]
    spatial = [(n - 1) * s - k + 2 + lo + hi
               for n, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], window_strides, padding)]
    out = (lhs[0], rhs[0], *spatial)
    return tuple(out[list(dn.out_spec).index(d)] for d in range(len(out)))


# the lax functions -----------------------------------------------------------------------------
def _ints(name, values, k, default=1) -> tuple:
    if values is None:
        return (default,) * k
    try:
        return tuple(int(v) for v in values)
    except TypeError:
        raise ShapeError(f"conv: {name} must be a sequence of {k} integers, got {values!r}",
                         user_frame()) from None


def _recorded(precision) -> dict:
    """The ``precision`` param of a convolution equation: present only when given."""
    return {} if precision is None else {"precision": precision}


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """General n-d convolution with dilation, as ``jax.lax.conv_general_dilated``.

    ``precision`` takes JAX's values (None, a ``lax.Precision``, its names, or a pair of
    either), is checked as JAX checks it (``ValueError`` otherwise) and recorded in the IR.
    It changes no result on the host, as on JAX's CPU backend, where every Precision gives
    the same bits: float32 operands multiply in float32 (BLAS), float16/bfloat16 ones in
    float32 and round once. ``preferred_element_type`` does change results: the products
    accumulate in it (int8 -> int32 exactly, bfloat16 -> float32 unrounded)."""
    check_arraylike("conv_general_dilated", lhs, rhs)
    recorded = _recorded(canonicalize_precision(precision))
    try:
        dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
        k = lhs.ndim - 2
        lhs_dilation = _ints("lhs_dilation", lhs_dilation, k)
        rhs_dilation = _ints("rhs_dilation", rhs_dilation, k)
        strides = _ints("window_strides", window_strides, k)
        if isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
            raise ShapeError("conv: string padding is not supported with lhs_dilation; pass "
                             "explicit (low, high) pairs or use conv_transpose")
        window = [dilate_dim(rhs.shape[d], r) for d, r in zip(_spatial(dn.rhs_spec),
                                                              rhs_dilation)]
        pads = explicit_pads("conv", padding, [lhs.shape[d] for d in _spatial(dn.lhs_spec)],
                             window, strides)
    except ShapeError as e:
        raise e.with_source(user_frame()) from None
    pet = None if preferred_element_type is None else dtypes.user_dtype(
        preferred_element_type, "conv_general_dilated")
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=strides, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dn,
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        preferred_element_type=pet, **recorded)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` in the NCHW/OIHW layout without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv_general_dilated`` in the NCHW/OIHW layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k, s, padding):
    """(low, high) padding of the dilated input of a transposed convolution."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    else:
        pads = tuple(k - p - 1 for p in padding)
        low, total = pads[0], sum(pads)
    return low, total - low


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """A fractionally strided convolution, as ``jax.lax.conv_transpose`` (default layout
    ``('NHWC', 'HWIO', 'NHWC')``; ``transpose_kernel`` flips the kernel and swaps its
    feature dimensions, giving the gradient of the forward convolution)."""
    if dimension_numbers is None:
        if lhs.ndim not in _TRANSPOSE_LAYOUTS:
            raise ShapeError(f"conv_transpose: no default dimension_numbers for rank "
                             f"{lhs.ndim}; pass them", user_frame())
        dimension_numbers = _TRANSPOSE_LAYOUTS[lhs.ndim]
    try:
        dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    except ShapeError as e:
        raise e.with_source(user_frame()) from None
    k = lhs.ndim - 2
    rhs_dilation = _ints("rhs_dilation", rhs_dilation, k)
    kernel = [dilate_dim(rhs.shape[d], r) for d, r in zip(_spatial(dn.rhs_spec), rhs_dilation)]
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        modes = [padding] * k if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = [_conv_transpose_padding(kk, s, p) for kk, s, p in zip(kernel, strides, modes)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, _spatial(dn.rhs_spec))
        perm = list(range(rhs.ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * k, pads, strides, rhs_dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# axis helpers ----------------------------------------------------------------------------------
def _merge_axis(x, src, dst):
    """``x`` with axis ``src`` folded into axis ``dst`` (numbered without ``src``) as its
    major part."""
    perm = [d for d in range(x.ndim) if d != src]
    perm.insert(dst, src)
    shape = [x.shape[d] for d in range(x.ndim) if d != src]
    shape[dst] *= x.shape[src]
    return reshape(transpose(x, perm), shape)


def _split_axis(x, src, major):
    """``x`` with axis ``src`` split into ``(major, size // major)``."""
    shape = list(x.shape)
    shape[src:src + 1] = [major, shape[src] // major]
    return reshape(x, shape)


# autodiff --------------------------------------------------------------------------------------
def _vjp_lhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                     rhs_dilation):
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(in_shape, window, strides, out_shape, padding,
                                           lhs_dilation, rhs_dilation):
        kd = dilate_dim(k, rd)
        before = kd - lo - 1
        pads.append((before, dilate_dim(n, ld) + kd - 1 - dilate_dim(o, s) - before))
    return tuple(pads)


def _vjp_rhs_padding(in_shape, window, strides, out_shape, padding, lhs_dilation,
                     rhs_dilation):
    pads = []
    for n, k, s, o, (lo, _), ld, rd in zip(in_shape, window, strides, out_shape, padding,
                                           lhs_dilation, rhs_dilation):
        high = dilate_dim(o, s) - dilate_dim(n, ld) + dilate_dim(k, rd) - lo - 1
        pads.append((lo, high))
    return tuple(pads)


def _transpose_lhs(ct, lhs_aval, rhs, *, window_strides, padding, lhs_dilation,
                   rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                   preferred_element_type=None, precision=None):
    """Convolve the cotangent with the reversed kernel (features swapped): strides become
    lhs dilation; feature and batch groups move into the kernel's output features."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = max(feature_group_count, batch_group_count)
    rhs_shape = rhs.shape
    if groups > 1:
        rhs = _merge_axis(_split_axis(rhs, rhs_spec[0], groups), rhs_spec[0], rhs_spec[1])
    pads = _vjp_lhs_padding([lhs_aval.shape[d] for d in _spatial(lhs_spec)],
                            [rhs_shape[d] for d in _spatial(rhs_spec)], window_strides,
                            [ct.shape[d] for d in _spatial(out_spec)], padding, lhs_dilation,
                            rhs_dilation)
    kernel = rev(rhs, _spatial(rhs_spec))
    if kernel.dtype != ct.dtype:
        kernel = convert_element_type(kernel, ct.dtype)
    out = conv_general_dilated_p.bind(
        ct, kernel, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap_features(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1, preferred_element_type=None,
        **_recorded(precision))
    if batch_group_count > 1:
        out = _merge_axis(_split_axis(out, lhs_spec[1], batch_group_count), lhs_spec[1],
                          lhs_spec[0])
    return out if out.dtype == lhs_aval.dtype else convert_element_type(out, lhs_aval.dtype)


def _transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation,
                   rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                   preferred_element_type=None, precision=None):
    """Convolve the input with the cotangent: strides and rhs dilation swap roles, feature
    groups become batch groups and batch groups feature groups."""
    if math.prod(ct.shape) == 0:
        return Zero(rhs_aval)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pads = _vjp_rhs_padding([lhs.shape[d] for d in _spatial(lhs_spec)],
                            [rhs_aval.shape[d] for d in _spatial(rhs_spec)], window_strides,
                            [ct.shape[d] for d in _spatial(out_spec)], padding, lhs_dilation,
                            rhs_dilation)
    if lhs.dtype != ct.dtype:
        lhs = convert_element_type(lhs, ct.dtype)
    out = conv_general_dilated_p.bind(
        lhs, ct, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(*map(_swap_features, (lhs_spec, out_spec,
                                                                     rhs_spec))),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        preferred_element_type=None, **_recorded(precision))
    return out if out.dtype == rhs_aval.dtype else convert_element_type(out, rhs_aval.dtype)


def _conv_transpose_rule(ct, lhs, rhs, **params):
    if is_zero(ct):
        return [None if not is_undefined(lhs) else Zero(lhs.aval),
                None if not is_undefined(rhs) else Zero(rhs.aval)]
    return [_transpose_lhs(ct, lhs.aval, rhs, **params) if is_undefined(lhs) else None,
            _transpose_rhs(ct, lhs, rhs.aval, **params) if is_undefined(rhs) else None]


# batching --------------------------------------------------------------------------------------
def _conv_batch(args, dims, **params):
    """The vmapped axis joins the batch (lhs only), the output features (rhs only) or the
    feature groups (both), as in JAX."""
    (lhs, rhs), (ld, rd) = args, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    if ld is not None and rd is not None:
        size = lhs.shape[ld]
        if bgc > 1:
            lhs = _merge_axis(lhs, ld, lhs_spec[0])
            params = dict(params, batch_group_count=bgc * size)
        else:
            lhs = _merge_axis(lhs, ld, lhs_spec[1])
            params = dict(params, feature_group_count=fgc * size)
        out = conv_general_dilated_p.bind(lhs, _merge_axis(rhs, rd, rhs_spec[0]), **params)
        return _split_axis(out, out_spec[1], size), out_spec[1]
    if ld is not None:
        size = lhs.shape[ld]
        if bgc == 1:
            lhs = _merge_axis(lhs, ld, lhs_spec[0])
        else:   # keep the batch groups major: (G, vmap, N/G)
            lhs = _split_axis(lhs, lhs_spec[0] + (ld <= lhs_spec[0]), bgc)
            lhs = _merge_axis(lhs, ld + (lhs_spec[0] < ld), lhs_spec[0] + 1)
            lhs = _merge_axis(lhs, lhs_spec[0], lhs_spec[0])
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        return _split_axis(out, out_spec[0], size), out_spec[0]
    size = rhs.shape[rd]
    groups = max(fgc, bgc)
    if groups == 1:
        out = conv_general_dilated_p.bind(lhs, _merge_axis(rhs, rd, rhs_spec[0]), **params)
        return _split_axis(out, out_spec[1], size), out_spec[1]
    # keep the groups major in the output features: (G, vmap, O/G)
    rhs = _split_axis(rhs, rhs_spec[0] + (rd <= rhs_spec[0]), groups)
    rhs = _merge_axis(rhs, rd + (rhs_spec[0] < rd), rhs_spec[0] + 1)
    rhs = _merge_axis(rhs, rhs_spec[0], rhs_spec[0])
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    out = _split_axis(out, out_spec[1], groups)
    out = _split_axis(out, out_spec[1] + 1, size)
    return _merge_axis(out, out_spec[1], out_spec[1] + 1), out_spec[1]


# tiling: im2col into a matmul ------------------------------------------------------------------
def _im2col(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
            dimension_numbers, feature_group_count, batch_group_count,
            preferred_element_type=None, precision=None):
    """The convolution as primitives: pad (with lhs dilation as interior padding), one
    strided slice per kernel offset, and a (batched over groups) dot_general."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    x = transpose(lhs, lhs_spec)
    x = pad(x, zero_like(x),
            [(0, 0, 0)] * 2 + [(lo, hi, d - 1) for (lo, hi), d in zip(padding, lhs_dilation)])
    w = transpose(rhs, rhs_spec)
    groups = max(feature_group_count, batch_group_count)
    if batch_group_count > 1:
        x = _merge_axis(_split_axis(x, 0, groups), 0, 1)
    n, c, k = x.shape[0], x.shape[1], x.ndim - 2
    o = w.shape[0]
    spans = [dilate_dim(kk, d) for kk, d in zip(w.shape[2:], rhs_dilation)]
    out_spatial = [strided_dim(s, span, st) for s, span, st in
                   zip(x.shape[2:], spans, window_strides)]
    pieces = []
    for offset in itertools.product(*(range(kk) for kk in w.shape[2:])):
        start = [0, 0] + [i * d for i, d in zip(offset, rhs_dilation)]
        limit = [n, c] + [st + (m - 1) * s + 1 for st, m, s in
                          zip(start[2:], out_spatial, window_strides)]
        piece = slice(x, start, limit, [1, 1, *window_strides])
        pieces.append(reshape(piece, (1, *piece.shape)))
    cols = concatenate(pieces, 0)                                  # (K, N, C, *out)
    cols = reshape(cols, (len(pieces), n, groups, c // groups, *out_spatial))
    cols = transpose(cols, (2, 1, *range(4, 4 + k), 3, 0))        # (G, N, *out, C/G, K)
    cols = reshape(cols, (groups, n * math.prod(out_spatial), (c // groups) * len(pieces)))
    kernel = reshape(w, (groups, o // groups, c // groups, len(pieces)))
    kernel = reshape(transpose(kernel, (0, 2, 3, 1)),
                     (groups, (c // groups) * len(pieces), o // groups))  # (G, C/G*K, O/G)
    if groups == 1:   # a plain 2-D matmul, whose epilogue fuses into the cube kernel
        out = dot_general(reshape(cols, cols.shape[1:]), reshape(kernel, kernel.shape[1:]),
                          (((1,), (0,)), ((), ())), precision, preferred_element_type)
    else:
        out = dot_general(cols, kernel, (((2,), (1,)), ((0,), (0,))), precision,
                          preferred_element_type)
        out = transpose(reshape(out, (groups, n * math.prod(out_spatial), o // groups)),
                        (1, 0, 2))
    out = reshape(out, (n, *out_spatial, o))                        # (N, *out, O)
    return transpose(out, _from_channels_last(out_spec))


# sharding and cost -----------------------------------------------------------------------------
def _conv_factors(eqn) -> sr.OpRule:
    """The batch and the output features split freely and the input features as a sum
    (without groups); spatial dimensions stay whole (windows straddle blocks)."""
    f = sr.Factors()
    p = eqn.params
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    lhs, rhs = sr.shape_of(eqn.inputs[0]), sr.shape_of(eqn.inputs[1])
    ldims, rdims, odims = [()] * len(lhs), [()] * len(rhs), [()] * len(lhs)
    if p["batch_group_count"] == 1:
        ldims[lhs_spec[0]] = odims[out_spec[0]] = f.new(lhs[lhs_spec[0]])
    if p["feature_group_count"] == 1 and p["batch_group_count"] == 1:
        rdims[rhs_spec[0]] = odims[out_spec[1]] = f.new(rhs[rhs_spec[0]])
        kind = sr.reduction_kind(eqn, "sum")
        ldims[lhs_spec[1]] = rdims[rhs_spec[1]] = f.new(lhs[lhs_spec[1]], kind) if kind else ()
    return f.rule([ldims, rdims], [odims])


def _conv_flops(eqn) -> int:
    rhs = eqn.inputs[1].type
    out = eqn.outputs[0].type
    _, rhs_spec, _ = eqn.params["dimension_numbers"]
    per_output = rhs.shape[rhs_spec[1]] * math.prod(rhs.shape[d] for d in _spatial(rhs_spec))
    return 2 * out.size * per_output


def _conv_reference(jnp, lax):
    def run(lhs, rhs, dimension_numbers, precision=None, **params):
        return lax.conv_general_dilated(
            lhs, rhs, dimension_numbers=lax.ConvDimensionNumbers(*dimension_numbers),
            precision=lax.Precision.HIGHEST, **params)
    return run


conv_general_dilated_p.define(
    jvp=bilinear_jvp(conv_general_dilated_p), transpose=_conv_transpose_rule,
    batch=_conv_batch, shard=sr.ShardRule(_conv_factors, linear="one"),
    tile=tile_forms.convolution(_im2col), cost=_conv_flops, reference=_conv_reference)


_add_examples(globals(), """
conv:
    >>> x = pnp.arange(5.0).reshape(1, 1, 5)
    >>> w = pnp.array([1.0, 0.0, -1.0]).reshape(1, 1, 3)
    >>> pto.lax.conv(x, w, (1,), 'VALID')
    Array([[[-2., -2., -2.]]], dtype=float32)
conv_general_dilated:
    >>> x = pnp.arange(5.0).reshape(1, 1, 5)
    >>> w = pnp.array([1.0, 0.0, -1.0]).reshape(1, 1, 3)
    >>> pto.lax.conv_general_dilated(x, w, (1,), [(1, 1)], rhs_dilation=(2,))
    Array([[[-3., -4.,  1.]]], dtype=float32)
conv_with_general_padding:
    >>> x = pnp.arange(5.0).reshape(1, 1, 5)
    >>> w = pnp.array([1.0, 0.0, -1.0]).reshape(1, 1, 3)
    >>> pto.lax.conv_with_general_padding(x, w, (2,), [(1, 1)], None, None)
    Array([[[-1., -2.,  3.]]], dtype=float32)
conv_transpose:
    >>> x = pnp.ones((1, 3, 1))
    >>> dnums = ('NWC', 'WIO', 'NWC')
    >>> y = pto.lax.conv_transpose(x, pnp.ones((2, 1, 1)), (2,), 'VALID', dimension_numbers=dnums)
    >>> y[0, :, 0]
    Array([1., 1., 1., 1., 1., 1.], dtype=float32)
conv_dimension_numbers:
    >>> pto.lax.conv_dimension_numbers((1, 8, 8, 3), (3, 3, 3, 16), ('NHWC', 'HWIO', 'NHWC'))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
ConvDimensionNumbers:
    >>> dnums = pto.lax.ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1),
    ...                                      out_spec=(0, 3, 1, 2))
    >>> dnums.lhs_spec
    (0, 3, 1, 2)
conv_general_permutations:
    >>> pto.lax.conv_general_permutations(('NHWC', 'HWIO', 'NHWC'))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
conv_general_shape_tuple:
    >>> dnums = ('NHWC', 'HWIO', 'NHWC')
    >>> pto.lax.conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 16), (1, 1), 'SAME', dnums)
    (1, 8, 8, 16)
conv_shape_tuple:
    >>> pto.lax.conv_shape_tuple((1, 3, 8, 8), (16, 3, 3, 3), (2, 2), [(1, 1), (1, 1)])
    (1, 16, 4, 4)
conv_transpose_shape_tuple:
    >>> dnums = ('NCHW', 'OIHW', 'NCHW')
    >>> pto.lax.conv_transpose_shape_tuple((1, 3, 4, 4), (8, 3, 2, 2), (2, 2), 'VALID', dnums)
    (1, 8, 8, 8)
""")
