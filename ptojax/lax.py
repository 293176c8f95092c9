"""``pto.lax``: the primitives as functions, with JAX's lax semantics.

Unlike ``ptojax.numpy`` these do not broadcast or promote: operands must agree, except that a
Python scalar takes the dtype of the array operand it meets.
"""
from __future__ import annotations

import builtins

import numpy as np

from ptojax import dtypes
from ptojax.errors import IndexingError, PtoError
from ptojax.ops import elementwise as ew
from ptojax.ops import indexing as ix
from ptojax.ops import linalg, reductions as red, shape as sh, sorting
from ptojax.ops.checks import check_axes, check_axis
from ptojax.eval.array import Array
from ptojax.source_info import user_frame


def _axis(name, axis, ndim) -> int:
    """``axis`` normalized into ``0..ndim-1``; out of range is an AxisError at the caller."""
    try:
        return check_axis(name, axis, ndim)
    except PtoError as e:
        raise e.with_source(user_frame()) from None


def _axes(name, axes, ndim) -> tuple:
    """Distinct ``axes`` normalized into ``0..ndim-1``, in the order given."""
    try:
        return check_axes(name, tuple(axes), ndim)
    except PtoError as e:
        raise e.with_source(user_frame()) from None


def _scalar(value, dtype):
    """A Python scalar as a weakly typed 0-d Array of ``dtype``."""
    return Array(np.asarray(value, dtype), weak_type=True)


def _operands(*xs):
    """Python scalars take the dtype of the first array operand."""
    dtype = next((x.dtype for x in xs if hasattr(x, "dtype")), None)
    if dtype is None:
        return xs
    return tuple(_scalar(x, dtype) if type(x) in (int, float, bool) else x for x in xs)


def _nary(prim):
    def fn(*xs):
        return prim.bind(*_operands(*xs))
    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise ``{prim.name}`` (operands share dtype and shape, or are scalars)."
    return fn


add, sub, mul, div, rem = map(_nary, (ew.add_p, ew.sub_p, ew.mul_p, ew.div_p, ew.rem_p))
pow, max, min, atan2, nextafter = map(_nary, (ew.pow_p, ew.max_p, ew.min_p, ew.atan2_p,
                                              ew.nextafter_p))
neg, abs, sign, floor, ceil, is_finite = map(_nary, (ew.neg_p, ew.abs_p, ew.sign_p,
                                                     ew.floor_p, ew.ceil_p, ew.is_finite_p))
exp, exp2, log, log1p, expm1 = map(_nary, (ew.exp_p, ew.exp2_p, ew.log_p, ew.log1p_p,
                                           ew.expm1_p))
sqrt, rsqrt, cbrt, tanh, logistic = map(_nary, (ew.sqrt_p, ew.rsqrt_p, ew.cbrt_p, ew.tanh_p,
                                                ew.logistic_p))
sin, cos, tan, asin, acos, atan = map(_nary, (ew.sin_p, ew.cos_p, ew.tan_p, ew.asin_p,
                                              ew.acos_p, ew.atan_p))
sinh, cosh, asinh, acosh, atanh = map(_nary, (ew.sinh_p, ew.cosh_p, ew.asinh_p, ew.acosh_p,
                                              ew.atanh_p))
erf, erf_inv = _nary(ew.erf_p), _nary(ew.erf_inv_p)
eq, ne, lt, le, gt, ge = map(_nary, (ew.eq_p, ew.ne_p, ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p))
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = map(_nary, (ew.and_p, ew.or_p, ew.xor_p,
                                                                ew.not_p))
shift_left, shift_right_logical = _nary(ew.shift_left_p), _nary(ew.shift_right_logical_p)


def select(pred, on_true, on_false):
    on_true, on_false = _operands(on_true, on_false)
    return ew.select_p.bind(pred, on_true, on_false)


def clamp(min, x, max):
    min, x, max = _operands(min, x, max)
    return ew.clamp_p.bind(min, x, max)


def round(x, method="half_away"):
    return ew.round_p.bind(x, method=method)


def integer_pow(x, y: int):
    return ew.integer_pow_p.bind(x, y=int(y))


def square(x):
    return integer_pow(x, 2)


def reciprocal(x):
    return div(_scalar(1, x.dtype), x)


def convert_element_type(x, new_dtype, weak_type: bool = False):
    new_dtype = dtypes.canonicalize(new_dtype)
    if type(x) in (int, float, bool):
        return _scalar(x, new_dtype) if weak_type else Array(np.asarray(x, new_dtype))
    if x.dtype == new_dtype and getattr(x, "weak_type", False) == weak_type:
        return x
    return ew.convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def stop_gradient(x):
    """``x`` with zero derivative: no gradient flows through it."""
    from ptojax.tree_util import tree_map
    return tree_map(lambda v: ew.stop_gradient_p.bind(v), x)


# shapes --------------------------------------------------------------------------------------
def broadcast_in_dim(x, shape, broadcast_dimensions):
    shape, bdims = tuple(int(d) for d in shape), tuple(broadcast_dimensions)
    if tuple(x.shape) == shape and bdims == tuple(range(len(shape))):
        return x
    return sh.broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=bdims)


def broadcast(x, sizes):
    """Prepend dimensions ``sizes``."""
    n = len(sizes)
    return broadcast_in_dim(x, (*sizes, *x.shape), tuple(range(n, n + x.ndim)))


def reshape(x, new_sizes, dimensions=None):
    if dimensions is not None:
        x = transpose(x, dimensions)
    new_sizes = tuple(int(d) for d in new_sizes)
    if tuple(x.shape) == new_sizes:
        return x
    return sh.reshape_p.bind(x, new_sizes=new_sizes)


def transpose(x, permutation):
    permutation = tuple(_axis("transpose", p, x.ndim) for p in permutation)
    if permutation == tuple(range(x.ndim)):
        return x
    return sh.transpose_p.bind(x, permutation=permutation)


def squeeze(x, dimensions):
    dimensions = tuple(sorted(_axes("squeeze", dimensions, x.ndim)))
    return sh.squeeze_p.bind(x, dimensions=dimensions) if dimensions else x


def expand_dims(x, dimensions):
    n = x.ndim + len(dimensions)
    dimensions = tuple(sorted(_axes("expand_dims", dimensions, n)))
    return sh.expand_dims_p.bind(x, dimensions=dimensions) if dimensions else x


def rev(x, dimensions):
    dimensions = tuple(sorted(_axes("rev", dimensions, x.ndim)))
    return sh.rev_p.bind(x, dimensions=dimensions) if dimensions else x


def slice(x, start_indices, limit_indices, strides=None):
    start, limit = tuple(map(int, start_indices)), tuple(map(int, limit_indices))
    strides = None if strides is None or builtins.all(s == 1 for s in strides) \
        else tuple(map(int, strides))
    if start == (0,) * x.ndim and limit == tuple(x.shape) and strides is None:
        return x
    return sh.slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)


def slice_in_dim(x, start, limit, stride=1, axis=0):
    axis = _axis("slice_in_dim", axis, x.ndim)
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(x, starts, limits, strides)


def index_in_dim(x, index, axis=0, keepdims=True):
    axis = _axis("index_in_dim", axis, x.ndim)
    if not -x.shape[axis] <= index < x.shape[axis]:
        raise IndexingError(f"index_in_dim: index {index} is out of bounds for axis {axis} "
                            f"of size {x.shape[axis]}", user_frame())
    index = index % x.shape[axis]
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return sh.concatenate_p.bind(*operands,
                                 dimension=_axis("concatenate", dimension, operands[0].ndim))


def pad(x, padding_value, padding_config):
    (padding_value,) = _operands(x, padding_value)[1:]
    config = tuple(tuple(int(v) for v in c) for c in padding_config)
    return sh.pad_p.bind(x, padding_value, padding_config=config)


def iota(dtype, size: int):
    return sh.iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=(int(size),), dimension=0)


def broadcasted_iota(dtype, shape, dimension: int):
    shape = tuple(int(d) for d in shape)
    return sh.iota_p.bind(dtype=dtypes.canonicalize(dtype), shape=shape,
                          dimension=_axis("broadcasted_iota", dimension, len(shape)))


# indexing ------------------------------------------------------------------------------------
def _start_indices(indices, shape):
    """Start indices as integer scalars, negative ones counted from the end once (as JAX);
    the primitive then clamps the window into bounds."""
    out = []
    for i, n in zip(indices, shape):
        if type(i) is int:
            out.append(_scalar(i + n if i < 0 else i, dtypes.int32))
        elif dtypes.is_unsigned(i.dtype):
            out.append(i)
        else:
            out.append(select(lt(i, 0), add(i, n), i))
    return out


def dynamic_slice(x, start_indices, slice_sizes):
    return ix.dynamic_slice_p.bind(x, *_start_indices(start_indices, x.shape),
                                   slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(x, update, start_indices):
    return ix.dynamic_update_slice_p.bind(x, update, *_start_indices(start_indices, x.shape))


def dynamic_slice_in_dim(x, start_index, slice_size, axis=0):
    axis = _axis("dynamic_slice_in_dim", axis, x.ndim)
    starts = [0] * x.ndim
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = slice_size
    return dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(x, index, axis=0, keepdims=True):
    out = dynamic_slice_in_dim(x, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(x, update, start_index, axis=0):
    axis = _axis("dynamic_update_slice_in_dim", axis, x.ndim)
    starts = [0] * x.ndim
    starts[axis] = start_index
    return dynamic_update_slice(x, update, starts)


def gather(operand, indices, axes, nbatch=0, mode="clip", fill_value=None):
    return ix.gather_p.bind(operand, indices, axes=tuple(axes), nbatch=int(nbatch), mode=mode,
                            fill_value=fill_value)


def scatter(operand, indices, updates, axes, nbatch=0, mode="add"):
    return ix.scatter_p.bind(operand, indices, updates, axes=tuple(axes), nbatch=int(nbatch),
                             mode=mode)


# reductions ----------------------------------------------------------------------------------
def _reduction(prim):
    def fn(x, axes):
        return prim.bind(x, axes=tuple(sorted(_axes(prim.name, axes, x.ndim))))
    fn.__name__ = prim.name
    fn.__doc__ = f"``{prim.name}`` over ``axes`` (negative axes count from the end)."
    return fn


reduce_sum, reduce_max, reduce_min, reduce_prod, reduce_and, reduce_or = map(_reduction, (
    red.reduce_sum_p, red.reduce_max_p, red.reduce_min_p, red.reduce_prod_p, red.reduce_and_p,
    red.reduce_or_p))


def argmax(x, axis, index_dtype=dtypes.int32):
    return red.argmax_p.bind(x, axis=_axis("argmax", axis, x.ndim),
                             index_dtype=dtypes.canonicalize(index_dtype))


def argmin(x, axis, index_dtype=dtypes.int32):
    return red.argmin_p.bind(x, axis=_axis("argmin", axis, x.ndim),
                             index_dtype=dtypes.canonicalize(index_dtype))


def _cumulative(prim):
    def fn(x, axis=0, reverse=False):
        return prim.bind(x, axis=_axis(prim.name, axis, x.ndim), reverse=bool(reverse))
    fn.__name__ = prim.name
    return fn


cumsum, cumprod, cummax, cummin, cumlogsumexp = map(_cumulative, (
    red.cumsum_p, red.cumprod_p, red.cummax_p, red.cummin_p, red.cumlogsumexp_p))


# linear algebra and sorting ------------------------------------------------------------------
def dot_general(lhs, rhs, dimension_numbers, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((_axes("dot_general", lc, lhs.ndim), _axes("dot_general", rc, rhs.ndim)),
          (_axes("dot_general", lb, lhs.ndim), _axes("dot_general", rb, rhs.ndim)))
    pet = None if preferred_element_type is None else dtypes.canonicalize(
        preferred_element_type)
    return linalg.dot_general_p.bind(lhs, rhs, dimension_numbers=dn,
                                     preferred_element_type=pet)


def dot(lhs, rhs, preferred_element_type=None):
    """Matrix/vector product contracting lhs's last and rhs's first dimension (rank <= 2)."""
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (0,)), ((), ())), preferred_element_type)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort one array, or a tuple of arrays by the first ``num_keys`` of them."""
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    out = sorting.sort_p.bind(*operands, dimension=_axis("sort", dimension, operands[0].ndim),
                              num_keys=int(num_keys))
    return out[0] if single else tuple(out)


# collectives over named mesh axes (ptojax/ops/collectives.py) ----------------------------------
from ptojax.shard.collectives import (all_gather, all_to_all, axis_index, axis_size,  # noqa: E402
                                    pmax, pmean, pmin, ppermute, psum, psum_scatter)

# structured control flow (ptojax/control_flow/): importing it registers the primitives' rules
from ptojax import control_flow as _control_flow  # noqa: E402
from ptojax.control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: E402,F401


def __getattr__(name):
    """``pto.lax.map`` without a global ``map``, which would shadow the builtin that functions
    of this module call."""
    if name == "map":
        return _control_flow.map
    raise AttributeError(f"module 'ptojax.lax' has no attribute {name!r}")
