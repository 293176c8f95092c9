"""Layout primitives: reshape, transpose, squeeze and expand_dims, with every fact,
and the axis helpers other families' batching rules build on (``move_axis`` ...)."""
from __future__ import annotations

import math

import numpy as np

from ptojax.errors import AxisError, ShapeError
from ptojax.ops.operand import as_operand
from ptojax.ir.types import TensorType
from ptojax.ops import references as ref, sharding_rules as sr, tile_forms
from ptojax.ops.checks import check_axes, user_axes, user_axis
from ptojax.ops.costs import no_flops
from ptojax.ops.tangents import linear_in_first_jvp
from ptojax.trace import Primitive, Unsupported
from ptojax.ir.symbolic import DimExpr, as_dim
from ptojax.public import add_examples as _add_examples


# axis helpers of batching rules ----------------------------------------------------------------
def move_axis(x, src, dst):
    if src == dst:
        return x
    perm = [d for d in range(x.ndim) if d != src]
    perm.insert(dst, src)
    return transpose(x, perm)


def canonical_axes(axes, ndim) -> tuple:
    """Axes of a primitive's params (which may count from the end) in ``0..ndim-1``."""
    return tuple(a % ndim if a < 0 else a for a in axes)


def shift_axes(axes, bd):
    """Axes of the per-example value, renumbered for a value with a batch at ``bd``."""
    return tuple(a + (a >= bd) for a in axes)


def example_ndim(x, d) -> int:
    return x.ndim - (d is not None)


# reshape ---------------------------------------------------------------------------------------
def _reshape_abstract(x, new_sizes):
    new_sizes = tuple(new_sizes)
    if any(not isinstance(d, (int, np.integer, DimExpr)) or d < 0 for d in new_sizes) or \
            math.prod(new_sizes) != x.size:
        raise ShapeError(f"reshape: cannot reshape {x} ({x.size} elements) to {new_sizes}")
    return TensorType(new_sizes, x.dtype, x.weak_type)


# the methods, not np.reshape/np.squeeze: their Python wrappers cost ~1 us a call, most of a
# small loop body's reshape (an HMM step has three)
reshape_p = Primitive("reshape", _reshape_abstract,
                      lambda x, new_sizes: np.asarray(x).reshape(new_sizes), linear=True)


def reshape(x, new_sizes, dimensions=None):
    x = as_operand("reshape", x)
    if dimensions is not None:
        x = transpose(x, dimensions)
    new_sizes = tuple(map(as_dim, new_sizes))
    if tuple(x.shape) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


def _reshape_batch(args, dims, new_sizes):
    (x,), (bd,) = args, dims
    x = move_axis(x, bd, 0)
    return reshape(x, (x.shape[0], *new_sizes)), 0


def reshape_factors(in_shape, out_shape, f: sr.Factors) -> tuple:
    """Dims of a reshape as factors: one-to-one dims share a factor; a dim split into several
    is the tuple of their factors (major first); merged dims likewise. Many-to-many groups
    (e.g. (2, 3) -> (3, 2)) must be whole."""
    ins, outs = [()] * len(in_shape), [()] * len(out_shape)
    if 0 in in_shape or 0 in out_shape:
        return ins, outs
    i = j = 0
    while i < len(in_shape) and j < len(out_shape):
        gi, gj = [i], [j]
        pi, pj = in_shape[i], out_shape[j]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi <= pj:
                pi *= in_shape[i]
                gi.append(i)
                i += 1
            else:
                pj *= out_shape[j]
                gj.append(j)
                j += 1
        big_in = [d for d in gi if in_shape[d] > 1]
        big_out = [d for d in gj if out_shape[d] > 1]
        if len(big_in) == 1:
            for d in big_out:
                outs[d] = f.new(out_shape[d])
            ins[big_in[0]] = tuple(x for d in big_out for x in outs[d])
        elif len(big_out) == 1:
            for d in big_in:
                ins[d] = f.new(in_shape[d])
            outs[big_out[0]] = tuple(x for d in big_in for x in ins[d])
    return ins, outs


def _reshape_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    ins, outs = reshape_factors(sr.shape_of(eqn.inputs[0]), eqn.params["new_sizes"], f)
    return f.rule([ins], [outs])


reshape_p.define(
    jvp=linear_in_first_jvp(reshape_p),
    transpose=lambda ct, x, new_sizes: [reshape(ct, x.aval.shape)],
    batch=_reshape_batch,
    shard=sr.ShardRule(_reshape_factors, sr.out_shape_param("new_sizes"), linear="unary"),
    tile=tile_forms.RESHAPE, cost=no_flops,
    reference=lambda jnp, lax: lambda x, new_sizes: jnp.reshape(x, new_sizes))


# transpose -------------------------------------------------------------------------------------
def _transpose_abstract(x, permutation):
    perm = tuple(permutation)
    if sorted(perm) != list(range(x.ndim)):
        raise AxisError(f"transpose: {perm} is not a permutation of the axes of {x}")
    return TensorType(tuple(x.shape[p] for p in perm), x.dtype, x.weak_type)


transpose_p = Primitive("transpose", _transpose_abstract,
                        lambda x, permutation: np.transpose(x, permutation), linear=True)


def transpose(x, permutation):
    x = as_operand("transpose", x)
    permutation = tuple(user_axis("transpose", p, x.ndim) for p in permutation)
    if permutation == tuple(range(x.ndim)):
        return x
    return transpose_p.bind(x, permutation=permutation)


def _transpose_batch(args, dims, permutation):
    (x,), (bd,) = args, dims
    perm = list(shift_axes(permutation, bd))
    perm.insert(bd, bd)
    return transpose(x, perm), bd


def _transpose_factors(eqn) -> sr.OpRule:
    f = sr.Factors()
    dims = [f.new(n) for n in sr.shape_of(eqn.inputs[0])]
    return f.rule([dims], [[dims[p] for p in eqn.params["permutation"]]])


transpose_p.define(
    jvp=linear_in_first_jvp(transpose_p),
    transpose=lambda ct, x, permutation: [transpose(ct, tuple(np.argsort(permutation)))],
    batch=_transpose_batch,
    shard=sr.ShardRule(_transpose_factors, linear="unary"),
    tile=Unsupported("transposes move data across tiles; kept as a tensor op (one folded "
                     "into a matmul operand tiles with the matmul)"),
    cost=no_flops,
    reference=lambda jnp, lax: lambda x, permutation: jnp.transpose(x, permutation))


# squeeze / expand_dims -------------------------------------------------------------------------
def _squeeze_abstract(x, dimensions):
    dims = check_axes("squeeze", dimensions, x.ndim)
    for d in dims:
        if x.shape[d] != 1:
            raise ShapeError(f"squeeze: dimension {d} of {x} has size {x.shape[d]}, not 1")
    return TensorType(tuple(s for i, s in enumerate(x.shape) if i not in dims), x.dtype,
                      x.weak_type)


squeeze_p = Primitive("squeeze", _squeeze_abstract,
                      lambda x, dimensions: np.asarray(x).squeeze(tuple(dimensions)),
                      linear=True)


def squeeze(x, dimensions):
    x = as_operand("squeeze", x)
    dimensions = tuple(sorted(user_axes("squeeze", dimensions, x.ndim)))
    return squeeze_p.bind(x, dimensions=dimensions) if dimensions else x


def _expand_dims_abstract(x, dimensions):
    out_ndim = x.ndim + len(dimensions)
    dims = check_axes("expand_dims", dimensions, out_ndim)
    shape, it = [], iter(x.shape)
    for i in range(out_ndim):
        shape.append(1 if i in dims else next(it))
    return TensorType(shape, x.dtype, x.weak_type)


def _expand_dims(x, dimensions):
    """``x`` with axes of length 1 at the (non-negative, output) positions ``dimensions``: a
    view, by a reshape (``np.expand_dims`` normalizes its axes in Python: ~8x slower on the
    scalars of a random key)."""
    x = np.asarray(x)
    shape = list(x.shape)
    for d in sorted(dimensions):
        shape.insert(d, 1)
    return x.reshape(shape)


expand_dims_p = Primitive("expand_dims", _expand_dims_abstract, _expand_dims, linear=True)


def expand_dims(x, dimensions):
    x = as_operand("expand_dims", x)
    n = x.ndim + len(dimensions)
    dimensions = tuple(sorted(user_axes("expand_dims", dimensions, n)))
    return expand_dims_p.bind(x, dimensions=dimensions) if dimensions else x


def _squeeze_batch(args, dims, dimensions):
    (x,), (bd,) = args, dims
    dimensions = shift_axes(canonical_axes(dimensions, x.ndim - 1), bd)
    return squeeze(x, dimensions), bd - sum(d < bd for d in dimensions)


def _expand_dims_batch(args, dims, dimensions):
    (x,), (bd,) = args, dims
    x = move_axis(x, bd, 0)
    dimensions = canonical_axes(dimensions, x.ndim - 1 + len(dimensions))
    return expand_dims(x, tuple(d + 1 for d in dimensions)), 0


def _squeeze_like_factors(eqn) -> sr.OpRule:
    """squeeze / expand_dims: the size-1 dims come and go, the others keep their order."""
    f = sr.Factors()
    in_shape, out_shape = sr.shape_of(eqn.inputs[0]), sr.shape_of(eqn.outputs[0])
    big = [f.new(n) for n in in_shape if n != 1]
    it = iter(big)
    operand = [() if n == 1 else next(it) for n in in_shape]
    it = iter(big)
    result = [() if n == 1 else next(it) for n in out_shape]
    return f.rule([operand], [result])


for _prim, _batch, _ref in ((squeeze_p, _squeeze_batch, "squeeze"),
                            (expand_dims_p, _expand_dims_batch, "expand_dims")):
    _prim.define(
        jvp=linear_in_first_jvp(_prim),
        transpose=lambda ct, x, dimensions: [reshape(ct, x.aval.shape)],
        batch=_batch,
        shard=sr.ShardRule(_squeeze_like_factors, linear="unary"),
        tile=tile_forms.RESHAPE, cost=no_flops, reference=ref.lax_op(_ref))


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with dimensions ``[start_dimension, stop_dimension)`` merged into one."""
    operand = as_operand("collapse", operand)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(operand.shape))
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {tuple(operand.shape)}"
                         f"[{start_dimension}:{stop_dimension}]")
    shape = tuple(operand.shape)
    return reshape(operand, (*shape[:lo], math.prod(shape[lo:hi]), *shape[hi:]))

_add_examples(globals(), """
collapse:
    >>> pto.lax.collapse(pnp.ones((2, 3, 4)), 1).shape
    (2, 12)
expand_dims: ``array`` with a size-1 axis inserted at each of ``dimensions``.
    >>> pto.lax.expand_dims(pnp.array([1, 2]), (0,)).shape
    (1, 2)
reshape: ``operand`` with its elements in ``new_sizes`` (row-major; ``dimensions`` transposes
    first).
    >>> pto.lax.reshape(pnp.arange(6), (2, 3))
    Array([[0, 1, 2],
           [3, 4, 5]], dtype=int32)
squeeze: ``array`` without the size-1 ``dimensions``.
    >>> pto.lax.squeeze(pnp.zeros((1, 3, 1)), (0, 2)).shape
    (3,)
transpose: ``operand`` with its axes permuted: axis ``i`` of the result is axis
    ``permutation[i]``.
    >>> pto.lax.transpose(pnp.arange(6).reshape(2, 3), (1, 0))
    Array([[0, 3],
           [1, 4],
           [2, 5]], dtype=int32)
""")
