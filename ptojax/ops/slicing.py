"""Static data movement — slice, pad, concatenate, rev — and ``iota``, with every fact; the
lax compositions ``full``, ``split`` and ``tile``.

Under ``pto.shard`` an ``iota`` split along its dimension adds this device's offset, a split
``rev`` reverses the order of the blocks with a ``ppermute``, and a concatenation of slices
that rotates a split dimension (``pnp.roll``) exchanges only the blocks' edges.
"""
from __future__ import annotations

import builtins
import itertools

import numpy as np

from ptojax import dtypes
from ptojax.errors import DtypeError, IndexingError, ShapeError
from ptojax.eval.leaves import check_arraylike
from ptojax.ops.operand import as_operand
from ptojax.eval import numpy_fast
from ptojax.ir.core import Var
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref, sharding_rules as sr
from ptojax.ops.arithmetic import add, mul, sub
from ptojax.ops.broadcast import (broadcast_in_dim, linear_jvp, reduce_sum, to_front,
                                  zeros)
from ptojax.ops.checks import (check_axes, check_axis, fmt_types, require_same_dtype,
                               user_axes, user_axis)
from ptojax.ops.convert import convert_element_type
from ptojax.ops.costs import no_flops
from ptojax.ops.elementwise import constant, operands, zero_like
from ptojax.ops.logic import select
from ptojax.ops.shape import (canonical_axes, example_ndim, move_axis, reshape, shift_axes,
                              squeeze)
from ptojax.ops.tangents import is_undefined, linear_in_first_jvp, zero_jvp
from ptojax.source_info import user_frame
from ptojax.trace import Primitive, Unsupported
from ptojax.ir.symbolic import DimExpr, as_dim
from ptojax.public import add_examples as _add_examples

MOVEMENT = "{} is data movement between tensors; kept as a tensor op"


# slice -----------------------------------------------------------------------------------------
def _slice_abstract(x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ShapeError(f"slice: {x} needs {x.ndim} start/limit/stride entries, got "
                         f"{start_indices}, {limit_indices}, {strides}")
    shape = []
    for d, (lo, hi, st) in enumerate(zip(start_indices, limit_indices, strides)):
        if not 0 <= lo <= hi <= x.shape[d] or st < 1:
            raise ShapeError(f"slice: [{lo}:{hi}:{st}] is out of bounds for dimension {d} "
                             f"of {x}")
        shape.append(hi - lo if st == 1 else -(-(hi - lo) // st))
    return TensorType(shape, x.dtype, x.weak_type)


def _slice(x, start_indices, limit_indices, strides=None):
    strides = strides or (1,) * x.ndim
    return x[tuple(builtins.slice(lo, hi, st)
                   for lo, hi, st in zip(start_indices, limit_indices, strides))]


slice_p = Primitive("slice", _slice_abstract, _slice, linear=True)


def slice(x, start_indices, limit_indices, strides=None):
    x = as_operand("slice", x)
    start, limit = tuple(map(as_dim, start_indices)), tuple(map(as_dim, limit_indices))
    strides = None if strides is None or builtins.all(s == 1 for s in strides) \
        else tuple(map(int, strides))
    if start == (0,) * x.ndim and limit == tuple(x.shape) and strides is None:
        return x
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)


def slice_in_dim(x, start=0, limit=None, stride=1, axis=0):
    x = as_operand("slice_in_dim", x)
    axis = user_axis("slice_in_dim", axis, x.ndim)
    size = x.shape[axis]
    start = 0 if start is None else start + size if start < 0 else start     # (JAX's)
    limit = size if limit is None else limit + size if limit < 0 else limit
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(x, starts, limits, strides)


def index_in_dim(x, index, axis=0, keepdims=True):
    x = as_operand("index_in_dim", x)
    axis = user_axis("index_in_dim", axis, x.ndim)
    if not -x.shape[axis] <= index < x.shape[axis]:
        raise IndexingError(f"index_in_dim: index {index} is out of bounds for axis {axis} "
                            f"of size {x.shape[axis]}", user_frame())
    index = index % x.shape[axis]
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _slice_transpose(ct, x, start_indices, limit_indices, strides=None):
    shape = x.aval.shape
    if not ct.size:
        return [zeros(x.aval)]
    strides = strides or (1,) * len(shape)
    config = [(lo, n - (lo + (m - 1) * st + 1), st - 1)
              for n, lo, st, m in zip(shape, start_indices, strides, ct.shape)]
    return [pad(ct, constant(0, ct.dtype), config)]


def _slice_batch(args, dims, start_indices, limit_indices, strides=None):
    (x,), (bd,) = args, dims
    starts, limits = list(start_indices), list(limit_indices)
    strides = list(strides or (1,) * len(starts))
    starts.insert(bd, 0)
    limits.insert(bd, x.shape[bd])
    strides.insert(bd, 1)
    return slice(x, starts, limits, strides), bd


def _slice_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    p = eqn.params
    strides = p["strides"] or (1,) * len(p["start_indices"])
    dims = [f.new(n) if (lo, hi, st) == (0, n, 1) else ()
            for n, lo, hi, st in zip(sr.shape_of(eqn.inputs[0]), p["start_indices"],
                                     p["limit_indices"], strides)]
    return f.rule([dims], [dims])


def _slice_localize(params, in_shapes, out_shapes):
    """Split dimensions (whole, stride 1) end at their block's size; the others keep their
    limits (a strided dimension's result is shorter than ``limit - start`` unsplit too)."""
    strides = params["strides"] or (1,) * len(params["start_indices"])
    limits = tuple(hi if n_out == -(-(hi - lo) // st) else lo + n_out
                   for lo, hi, st, n_out in zip(params["start_indices"],
                                                params["limit_indices"], strides, out_shapes[0]))
    return params.replace(limit_indices=limits)


slice_p.define(
    jvp=linear_in_first_jvp(slice_p), transpose=_slice_transpose, batch=_slice_batch,
    shard=sr.ShardRule(_slice_factors, _slice_localize, linear="unary"),
    tile=Unsupported(MOVEMENT.format("slicing")), cost=no_flops,
    reference=lambda jnp, lax: lambda x, start_indices, limit_indices, strides=None:
        lax.slice(x, start_indices, limit_indices, strides))


# pad -------------------------------------------------------------------------------------------
def _pad_abstract(x, padding_value, padding_config):
    require_same_dtype("pad", (x, padding_value))
    if padding_value.shape != ():
        raise ShapeError(f"pad: the padding value must be a scalar, got {padding_value}")
    if len(padding_config) != x.ndim:
        raise ShapeError(f"pad: {x} needs {x.ndim} (low, high, interior) entries, got "
                         f"{padding_config}")
    shape = []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise ShapeError(f"pad: interior padding must be >= 0, got {interior}")
        size = lo + hi + n + (builtins.max(n - 1, 0) * interior if interior else 0)
        if size < 0:
            raise ShapeError(f"pad: padding {padding_config} leaves a negative size")
        shape.append(size)
    # weak only when the padding value is too (JAX: a strong fill makes the result strong)
    return TensorType(shape, x.dtype, x.weak_type and padding_value.weak_type)


def _pad(x, padding_value, padding_config):
    grown = [(builtins.max(lo, 0), builtins.max(hi, 0), it) for lo, hi, it in padding_config]
    shape = [lo + hi + n + builtins.max(n - 1, 0) * it for n, (lo, hi, it) in zip(x.shape, grown)]
    out = numpy_fast.full(shape, padding_value, x.dtype)
    numpy_fast.assign(out, tuple(builtins.slice(lo, lo + n + builtins.max(n - 1, 0) * it, it + 1)
                                 for n, (lo, hi, it) in zip(x.shape, grown)), x)
    crop = tuple(builtins.slice(-lo if lo < 0 else 0, s + hi if hi < 0 else s)
                 for s, (lo, hi, _) in zip(shape, padding_config))
    return out[crop]


pad_p = Primitive("pad", _pad_abstract, _pad, linear=True)


def pad(x, padding_value, padding_config):
    check_arraylike("pad", x, padding_value)
    x = as_operand("pad", x)
    (padding_value,) = operands(x, padding_value)[1:]
    config = tuple(tuple(map(as_dim, c)) for c in padding_config)
    if len(config) == x.ndim and builtins.all(c == (0, 0, 0) for c in config) \
            and padding_value.shape == () and padding_value.dtype == x.dtype \
            and getattr(padding_value, "weak_type", False) >= getattr(x, "weak_type", False):
        return x         # no padding: not a copy (a VALID pool's pad)
    return pad_p.bind(x, padding_value, padding_config=config)


def _pad_transpose(ct, x, padding_value, padding_config):
    ct_x = None
    if is_undefined(x):
        cropped = pad(ct, constant(0, ct.dtype),
                      [(-lo, -hi, 0) for lo, hi, _ in padding_config])
        ct_x = slice(cropped, [0] * cropped.ndim, cropped.shape,
                     [it + 1 for _, _, it in padding_config])
    ct_pv = None
    if is_undefined(padding_value):
        total = reduce_sum(ct, tuple(range(ct.ndim)))
        inner = reduce_sum(ct_x, tuple(range(ct_x.ndim))) if ct_x is not None else None
        ct_pv = total if inner is None else sub(total, inner)
    return [ct_x, ct_pv]


def _pad_batch(args, dims, padding_config):
    (x, value), (bd, vd) = args, dims
    if vd is None:
        config = list(padding_config)
        config.insert(bd, (0, 0, 0))
        return pad(x, value, config), bd
    # a batched padding value: pad with zeros, then select the value where padding landed
    x = to_front(x, bd)
    config = ((0, 0, 0), *padding_config)
    padded = pad(x, zero_like(x), config)
    inside = pad(broadcast_in_dim(constant(True, dtypes.bool_), x.shape, ()),
                 constant(False, dtypes.bool_), config)
    fill = broadcast_in_dim(move_axis(value, vd, 0), padded.shape, (0,))
    return select(inside, padded, fill), 0


def _pad_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    dims = [f.new(n) if tuple(c) == (0, 0, 0) else ()
            for n, c in zip(sr.shape_of(eqn.inputs[0]), eqn.params["padding_config"])]
    return f.rule([dims, ()], [dims])


pad_p.define(
    jvp=linear_jvp(pad_p), transpose=_pad_transpose, batch=_pad_batch,
    shard=sr.ShardRule(_pad_factors), tile=Unsupported(MOVEMENT.format("padding")),
    cost=no_flops,
    reference=lambda jnp, lax: lambda x, value, padding_config: lax.pad(x, value,
                                                                         padding_config))


# concatenate -----------------------------------------------------------------------------------
def _concatenate_abstract(*xs, dimension):
    if not xs:
        raise ShapeError("concatenate needs at least one operand")
    require_same_dtype("concatenate", xs)
    d = check_axis("concatenate", dimension, xs[0].ndim) if xs[0].ndim else None
    if d is None:
        raise ShapeError("concatenate: zero-dimensional arrays cannot be concatenated")
    for x in xs:
        if x.ndim != xs[0].ndim or builtins.any(
                a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape)) if i != d):
            raise ShapeError(f"concatenate along {d}: shapes must agree except on that "
                             f"dimension, got {fmt_types(xs)}")
    shape = list(xs[0].shape)
    shape[d] = sum(x.shape[d] for x in xs)
    return TensorType(shape, xs[0].dtype, builtins.all(x.weak_type for x in xs))


concatenate_p = Primitive("concatenate", _concatenate_abstract,
                          lambda *xs, dimension: np.concatenate(xs, axis=dimension),
                          linear=True, fresh_outputs=True)


def concatenate(operands, dimension):
    operands = list(operands)
    operands = [as_operand("concatenate", x) for x in operands]
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands,
                              dimension=user_axis("concatenate", dimension, operands[0].ndim))


def _concatenate_transpose(ct, *xs, dimension):
    out, start = [], 0
    for x in xs:
        n = x.aval.shape[dimension]
        out.append(slice_in_dim(ct, start, start + n, 1, dimension)
                   if is_undefined(x) else None)
        start += n
    return out


def _concatenate_batch(args, dims, dimension):
    (dimension,) = canonical_axes((dimension,), example_ndim(args[0], dims[0]))
    if len(set(dims)) == 1:  # every operand batched at one dimension: leave it there
        bd = dims[0]
        return concatenate(args, dimension + (dimension >= bd)), bd
    args = [to_front(a, d) for a, d in zip(args, dims)]
    return concatenate(args, dimension + 1), 0


def _concatenate_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    d0 = eqn.params["dimension"]
    dims = [() if d == d0 else f.new(n) for d, n in enumerate(sr.shape_of(eqn.outputs[0]))]
    return f.rule([dims] * len(eqn.inputs), [dims])


def _rotation(ctx, eqn):
    """(source Var, shift) if ``eqn`` concatenates slices of one value that rotate it along
    the concatenated dimension (``out[i] = x[(i + shift) % n]``), else None."""
    d = eqn.params["dimension"]
    pieces = []
    for a in eqn.inputs:
        producer = ctx.producers.get(a) if type(a) is Var else None
        if producer is None or producer.prim is not slice_p:
            return None
        p = producer.params
        x = producer.inputs[0]
        full = builtins.all((lo, hi) == (0, n) for k, (lo, hi, n) in enumerate(
            zip(p["start_indices"], p["limit_indices"], x.type.shape)) if k != d)
        if not full or (p["strides"] and builtins.any(s != 1 for s in p["strides"])):
            return None
        pieces.append((x, p["start_indices"][d], p["limit_indices"][d]))
    sources = {x for x, _, _ in pieces}
    if len(sources) != 1:
        return None
    (x,) = sources
    n = x.type.shape[d]
    start = position = pieces[0][1]
    covered = 0
    for _, lo, hi in pieces:
        if lo != position % n or hi <= lo:
            return None
        covered += hi - lo
        position = hi
    return (x, start) if covered == n and start else None


def _rotate_blocks(ctx, x: sr.Local, d: int, shift: int):
    """``out[i] = x[(i + shift) % n]`` along dimension ``d``, split over ``x.dims[d]``."""
    axes = x.dims[d]
    n = ctx.mesh.axis_size(axes)
    block = x.value.shape[d]
    q, r = divmod(shift, block)

    def moved(value, hops):
        hops %= n
        if not hops:
            return value
        return ctx.ppermute(value, axes, tuple((i, (i - hops) % n) for i in range(n)))

    head = moved(slice_in_dim(x.value, r, block, axis=d), q)
    if r == 0:
        return head
    tail = moved(slice_in_dim(x.value, 0, r, axis=d), q + 1)
    return concatenate([head, tail], d)


def _concatenate_local(ctx, eqn, operands, targets):
    d = eqn.params["dimension"]
    rotation = _rotation(ctx, eqn)
    if rotation is not None and targets[0][d]:
        x, shift = rotation
        source = ctx.env[x]
        if not source.partial and source.dims[d] == targets[0][d]:
            return [sr.Local(_rotate_blocks(ctx, source, d, shift), source.dims)]
    return ctx.generic(eqn, operands, targets)


concatenate_p.define(
    jvp=linear_jvp(concatenate_p), transpose=_concatenate_transpose, batch=_concatenate_batch,
    shard=sr.ShardRule(_concatenate_factors, linear="all", local=_concatenate_local),
    tile=Unsupported(MOVEMENT.format("concatenation")), cost=no_flops,
    reference=lambda jnp, lax: lambda *xs, dimension: lax.concatenate(xs, dimension))


# rev -------------------------------------------------------------------------------------------
def _rev_abstract(x, dimensions):
    check_axes("rev", dimensions, x.ndim)
    return x


rev_p = Primitive("rev", _rev_abstract, lambda x, dimensions: np.flip(x, tuple(dimensions)),
                  linear=True)


def rev(x, dimensions):
    x = as_operand("rev", x)
    dimensions = tuple(sorted(user_axes("rev", dimensions, x.ndim)))
    return rev_p.bind(x, dimensions=dimensions) if dimensions else x


def _rev_batch(args, dims, dimensions):
    (x,), (bd,) = args, dims
    return rev(x, shift_axes(canonical_axes(dimensions, x.ndim - 1), bd)), bd


def _rev_local(ctx, eqn, operands, targets):
    """Reverse each block, then the order of the blocks along a split dimension."""
    plan = ctx.plan(eqn, operands, targets)
    (out,) = ctx.emit_planned(eqn, plan)
    value = out.value
    for d in eqn.params["dimensions"]:
        axes = out.dims[d]
        if axes:
            n = ctx.mesh.axis_size(axes)
            value = ctx.ppermute(value, axes, tuple((i, n - 1 - i) for i in range(n)))
    return [sr.Local(value, out.dims, out.partial)]


rev_p.define(
    jvp=linear_in_first_jvp(rev_p), transpose=lambda ct, x, dimensions: [rev(ct, dimensions)],
    batch=_rev_batch,
    shard=sr.ShardRule(sr.elementwise_factors, linear="unary", local=_rev_local),
    tile=Unsupported(MOVEMENT.format("reversal")), cost=no_flops, reference=ref.lax_op("rev"))


# iota ------------------------------------------------------------------------------------------
def _iota_abstract(dtype, shape, dimension):
    dtype = dtypes.canonicalize(dtype)
    if dtype == dtypes.bool_:
        raise DtypeError("iota: the dtype must be numeric, got bool")
    check_axis("iota", dimension, len(shape))
    return TensorType(shape, dtype)


def _iota(dtype, shape, dimension):
    ramp = np.arange(shape[dimension], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(ramp.reshape(expanded), shape)


iota_p = Primitive("iota", _iota_abstract, _iota)


def iota(dtype, size: int):
    return iota_p.bind(dtype=dtypes.user_dtype(dtype, "broadcasted_iota"), shape=(as_dim(size),),
                       dimension=0)


def broadcasted_iota(dtype, shape, dimension: int):
    shape = tuple(map(as_dim, shape))
    return iota_p.bind(dtype=dtypes.user_dtype(dtype, "broadcasted_iota"), shape=shape,
                       dimension=user_axis("broadcasted_iota", dimension, len(shape)))


def _iota_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    return f.rule([], [[f.new(n) for n in sr.shape_of(eqn.outputs[0])]])


def _iota_local(ctx, eqn, operands, targets):
    """Split along its dimension: the local ramp plus this device's first index."""
    plan = ctx.plan(eqn, operands, targets)
    (out,) = ctx.emit_planned(eqn, plan)
    axes = out.dims[eqn.params["dimension"]]
    if not axes:
        return [out]
    block = out.value.shape[eqn.params["dimension"]]
    offset = convert_element_type(mul(ctx.device_index(axes), block), out.value.dtype)
    return [sr.Local(add(out.value, offset), out.dims)]


iota_p.define(
    jvp=zero_jvp(iota_p),
    batch=Unsupported("iota has no operands, so nothing to batch"),
    shard=sr.ShardRule(_iota_factors, sr.out_shape_param("shape"), local=_iota_local),
    tile=Unsupported("iota is a constant; kept as a tensor op"), cost=no_flops,
    reference=lambda jnp, lax: lambda dtype, shape, dimension: lax.broadcasted_iota(
        dtype, shape, dimension))


# compositions: full, split, tile ---------------------------------------------------------------
def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value`` (weak when that is a Python scalar and
    no ``dtype`` is given, as in JAX; a 64-bit ``dtype`` is narrowed without x64)."""
    return _filled(shape, fill_value, None if dtype is None else dtypes.user_dtype(dtype, "full"))


def _filled(shape, fill_value, dtype=None):
    shape = (as_dim(shape),) if type(shape) is DimExpr or np.ndim(shape) == 0 \
        else tuple(map(as_dim, shape))
    if np.ndim(fill_value) != 0:
        raise ShapeError(f"full: fill_value must be a scalar, got shape {np.shape(fill_value)}")
    scalar = type(fill_value) in dtypes.PYTHON_SCALARS
    weak = dtype is None and (dtypes.python_scalar_is_weak(fill_value) if scalar
                              else bool(getattr(fill_value, "weak_type", False)))
    if dtype is None:
        dtype = dtypes.python_scalar_dtype(fill_value) if scalar else fill_value.dtype
    value = convert_element_type(fill_value, dtypes.canonicalize(dtype), weak_type=weak)
    return broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """``full`` shaped like ``x`` (or ``shape``), of ``x``'s dtype unless ``dtype`` is given;
    weak when ``x`` is and no ``dtype`` is given, as in JAX. ``sharding`` is accepted for
    JAX's signature; placement follows ``pto.shard``."""
    check_arraylike("full_like", x)
    scalar = type(x) in dtypes.PYTHON_SCALARS
    like_dtype = dtypes.python_scalar_dtype(x) if scalar else x.dtype
    weak = dtype is None and (dtypes.python_scalar_is_weak(x) if scalar
                              else bool(getattr(x, "weak_type", False)))
    out = _filled(np.shape(x) if shape is None else shape, fill_value,
                  like_dtype if dtype is None else dtypes.user_dtype(dtype, "full_like"))
    return convert_element_type(out, out.dtype, weak_type=True) if weak else out


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into consecutive pieces of ``sizes``."""
    operand = as_operand("split", operand)
    axis = user_axis("split", axis, operand.ndim)
    sizes = tuple(map(as_dim, sizes))
    if builtins.sum(sizes) != operand.shape[axis] or builtins.min(sizes, default=0) < 0:
        raise ShapeError(f"split: sizes {sizes} must be non-negative and add up to the size "
                         f"{operand.shape[axis]} of axis {axis}", user_frame())
    starts = [0, *itertools.accumulate(sizes)]
    return [slice_in_dim(operand, a, b, 1, axis) for a, b in zip(starts, starts[1:])]


def tile(operand, reps):
    """``operand`` repeated ``reps[d]`` times along each dimension ``d``."""
    operand = as_operand("tile", operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != operand.ndim or builtins.min(reps, default=0) < 0:
        raise ShapeError(f"tile: reps {reps} needs one non-negative count per dimension of "
                         f"{operand.aval if hasattr(operand, 'aval') else operand.shape}",
                         user_frame())
    doubled = tuple(n for r, size in zip(reps, operand.shape) for n in (r, size))
    out = broadcast_in_dim(operand, doubled, tuple(range(1, 2 * operand.ndim, 2)))
    return reshape(out, tuple(r * n for r, n in zip(reps, operand.shape)))


_add_examples(globals(), """
broadcasted_iota: An array of ``shape`` whose values count 0, 1, ... along ``dimension``.
    >>> pto.lax.broadcasted_iota(pnp.int32, (2, 3), 1)
    Array([[0, 1, 2],
           [0, 1, 2]], dtype=int32)
concatenate: The ``operands`` joined along ``dimension`` (no promotion: one dtype).
    >>> pto.lax.concatenate([pnp.array([1, 2]), pnp.array([3])], 0)
    Array([1, 2, 3], dtype=int32)
index_in_dim: The slice at ``index`` of ``operand`` along ``axis``, keeping that axis if
    ``keepdims``.
    >>> pto.lax.index_in_dim(pnp.arange(6).reshape(2, 3), 1, axis=1, keepdims=False)
    Array([1, 4], dtype=int32)
iota: ``0, 1, ..., size - 1`` as a vector of ``dtype``.
    >>> pto.lax.iota(pnp.int32, 4)
    Array([0, 1, 2, 3], dtype=int32)
pad: ``operand`` padded with ``padding_value``: ``padding_config`` gives (low, high, interior)
    per dimension (negative low/high crop).
    >>> pto.lax.pad(pnp.array([1, 2, 3]), 0, [(1, 2, 1)])
    Array([0, 1, 0, 2, 0, 3, 0, 0], dtype=int32)
rev: ``operand`` with the order of its elements reversed along ``dimensions``.
    >>> pto.lax.rev(pnp.arange(6).reshape(2, 3), (1,))
    Array([[2, 1, 0],
           [5, 4, 3]], dtype=int32)
slice: The part of ``operand`` from ``start_indices`` to ``limit_indices`` (exclusive), taking
    every ``strides``-th element.
    >>> pto.lax.slice(pnp.arange(10), (1,), (8,), (3,))
    Array([1, 4, 7], dtype=int32)
slice_in_dim: The slice ``start_index:limit_index:stride`` of ``operand`` along ``axis``.
    >>> pto.lax.slice_in_dim(pnp.arange(6).reshape(2, 3), 1, 3, axis=1)
    Array([[1, 2],
           [4, 5]], dtype=int32)
full:
    >>> pto.lax.full((2, 2), 3.0)
    Array([[3., 3.],
           [3., 3.]], dtype=float32, weak_type=True)
split:
    >>> pto.lax.split(pnp.arange(5), (2, 3))
    [Array([0, 1], dtype=int32), Array([2, 3, 4], dtype=int32)]
tile:
    >>> pto.lax.tile(pnp.array([1, 2]), (2,))
    Array([1, 2, 1, 2], dtype=int32)
full_like:
    >>> pto.lax.full_like(pnp.array([1.0, 2.0]), 7)
    Array([7., 7.], dtype=float32)
""")
