"""Collective primitives over named mesh axes: ``psum``, ``pmax``, ``pmin``, ``all_gather``,
``psum_scatter``, ``all_to_all``, ``ppermute`` and ``axis_index`` (JAX semantics).

Every collective names the mesh axes it runs over (``axes``, a tuple: several axes act as one
group whose devices are numbered with the first axis major). Shape-changing collectives also
carry ``axis_size`` (the group size), so an equation's type follows from its params alone:

    psum[axes]                      x -> sum over the group, on every member
    pmax[axes], pmin[axes]          x -> elementwise max / min over the group
    all_gather[axes dim tiled]      x -> members' x concatenated along dim (tiled) or
                                         stacked as a new dim
    psum_scatter[axes dim tiled]    x -> block ``i`` (along dim) of the group sum on member i
    all_to_all[axes split_dim concat_dim tiled]
                                    x -> block j of member i's x (split along split_dim) goes
                                         to member j, placed at position i along concat_dim
    ppermute[axes perm]             x -> member dst receives src's x for each (src, dst);
                                         members receiving nothing get zeros
    axis_index[axes]                  -> this device's position in the group (int32)

The user functions (``pto.lax.psum`` ...) look axis names up among the axes bound by the
enclosing ``shard_map`` or a named ``vmap`` (``eval/axis_env.py``). At run time the numpy impl
of a collective asks the per-device context of ``shard/runtime/in_process.py`` to do the
exchange.

Inside ``pto.vmap(f, axis_name="i")`` the members of axis ``"i"`` are the batch elements, so
a collective over ``"i"`` becomes local arithmetic on the batch dimension (its ``batch``
fact): psum/pmax/pmin reduce over the batch dimension (the result is unbatched), all_gather
moves the batch to the gather dimension (unbatched), psum_scatter sums over the batch and its
scatter dimension becomes the batch, all_to_all swaps the batch with the split dimension,
ppermute gathers batch elements (zeros where nothing is received) and axis_index is an iota
over the batch. Collectives over other axes pass through with the batch carried along;
psum/pmax/pmin/all_gather/axis_index over several axes including ours reduce ours locally and
leave the rest to the collective over the remaining axes.

JVP rules: all are linear except pmax/pmin (tangent from the members attaining the extremum).
Transposes: psum -> psum, all_gather <-> psum_scatter, all_to_all with split and concat
swapped, ppermute -> the inverse permutation. (With psum transposing to psum, ``shard_map``'s
own transpose divides cotangents of replicated outputs by the number of replicas, as JAX does
with ``check_vma=False``.)
"""
from __future__ import annotations

import math

import numpy as np

from ptojax import dtypes
from ptojax.errors import CollectiveError, ShapeError, UnsupportedError
from ptojax.eval import axis_env
from ptojax.eval.array import Array
from ptojax.ir.types import TensorType
from ptojax.ops.arithmetic import add, div, mul
from ptojax.ops.broadcast import broadcast_in_dim, reduce_sum, to_front
from ptojax.ops.checks import check_axis
from ptojax.ops.convert import convert_element_type
from ptojax.ops.costs import output_size
from ptojax.ops.gather_scatter import gather
from ptojax.ops.logic import eq, select
from ptojax.ops.reductions import reduce_max, reduce_min
from ptojax.ops.shape import canonical_axes, example_ndim, move_axis, reshape, transpose
from ptojax.ops.slicing import iota
from ptojax.ops.tangents import Zero, is_zero
from ptojax.shard.runtime.in_process import current_context
from ptojax.source_info import user_frame
from ptojax.trace import Primitive, Unsupported
from ptojax.pytree import tree_map
from ptojax.public import add_examples as _add_examples


def normalize_axes(axis_name) -> tuple:
    axes = (axis_name,) if isinstance(axis_name, str) else tuple(axis_name)
    if not axes or not all(isinstance(a, str) for a in axes):
        raise CollectiveError(f"an axis name must be a string or a tuple of strings, got "
                              f"{axis_name!r}", user_frame(3))
    if len(set(axes)) != len(axes):
        raise CollectiveError(f"axis names {axes} repeat a name", user_frame(3))
    return axes


def axis_size(axis_name) -> int:
    """The number of devices along ``axis_name`` (a name or a tuple of names)."""
    size = 1
    for name in normalize_axes(axis_name):
        n = axis_env.lookup(name)
        if n is None:
            bound = axis_env.bound_names()
            raise CollectiveError(
                f"unbound axis name {name!r}: collectives must run inside pto.shard_map (or a "
                f"pto.vmap with axis_name) that binds it"
                + (f"; bound axes here: {bound}" if bound else ""), user_frame(3))
        size *= n
    return size


# abstract evals -------------------------------------------------------------------------------
def _same_type(x, axes, **_):
    return x.strip_weak()


def _with_dim(shape, dim, size):
    shape = list(shape)
    shape[dim] = size
    return tuple(shape)


def _all_gather_abstract(x, axes, axis_size, dim, tiled):
    if tiled:
        dim = check_axis("all_gather", dim, x.ndim)
        return TensorType(_with_dim(x.shape, dim, x.shape[dim] * axis_size), x.dtype)
    dim = check_axis("all_gather", dim, x.ndim + 1)
    shape = list(x.shape)
    shape.insert(dim, axis_size)
    return TensorType(shape, x.dtype)


def _psum_scatter_abstract(x, axes, axis_size, dim, tiled):
    dim = check_axis("psum_scatter", dim, x.ndim)
    n = x.shape[dim]
    if tiled:
        if n % axis_size:
            raise ShapeError(f"psum_scatter: dimension {dim} of {x} (size {n}) is not "
                             f"divisible by the {axis_size} devices of axes {axes}")
        return TensorType(_with_dim(x.shape, dim, n // axis_size), x.dtype)
    if n != axis_size:
        raise ShapeError(f"psum_scatter (tiled=False): dimension {dim} of {x} must have the "
                         f"size {axis_size} of axes {axes}, got {n}")
    return TensorType(x.shape[:dim] + x.shape[dim + 1:], x.dtype)


def _all_to_all_abstract(x, axes, axis_size, split_dim, concat_dim, tiled):
    split_dim = check_axis("all_to_all", split_dim, x.ndim)
    n = x.shape[split_dim]
    if tiled:
        concat_dim = check_axis("all_to_all", concat_dim, x.ndim)
        if n % axis_size:
            raise ShapeError(f"all_to_all: split dimension {split_dim} of {x} (size {n}) is "
                             f"not divisible by the {axis_size} devices of axes {axes}")
        shape = _with_dim(x.shape, split_dim, n // axis_size)
        return TensorType(_with_dim(shape, concat_dim, shape[concat_dim] * axis_size),
                          x.dtype)
    if n != axis_size:
        raise ShapeError(f"all_to_all (tiled=False): split dimension {split_dim} of {x} must "
                         f"have the size {axis_size} of axes {axes}, got {n}")
    shape = list(x.shape[:split_dim] + x.shape[split_dim + 1:])
    shape.insert(check_axis("all_to_all", concat_dim, x.ndim), axis_size)
    return TensorType(shape, x.dtype)


def _ppermute_abstract(x, axes, perm):
    sources = [s for s, _ in perm]
    targets = [t for _, t in perm]
    if len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
        raise CollectiveError(f"ppermute: perm {perm} sends from or to a device twice; each "
                              f"device may send once and receive once")
    return x.strip_weak()


def _axis_index_abstract(axes):
    return TensorType((), dtypes.int32)


# impls: ask this device's runtime context to run the exchange ---------------------------------
def _impl(kind):
    def impl(*args, **params):
        return current_context(kind, params["axes"]).run(kind, *args, **params)
    return impl


def _collective(name, abstract_eval):
    return Primitive(name, abstract_eval, _impl(name), collective=True,
                     linear=name not in ("pmax", "pmin", "axis_index"))


psum_p = _collective("psum", _same_type)
pmax_p = _collective("pmax", _same_type)
pmin_p = _collective("pmin", _same_type)
all_gather_p = _collective("all_gather", _all_gather_abstract)
psum_scatter_p = _collective("psum_scatter", _psum_scatter_abstract)
all_to_all_p = _collective("all_to_all", _all_to_all_abstract)
ppermute_p = _collective("ppermute", _ppermute_abstract)
axis_index_p = _collective("axis_index", _axis_index_abstract)


# user functions (exported by pto.lax) ---------------------------------------------------------
def _is_python_scalar(x) -> bool:
    return type(x) in dtypes.PYTHON_SCALARS


def psum(x, axis_name):
    """Sum ``x`` (a pytree) over the devices of ``axis_name``; every device gets the sum."""
    axes = normalize_axes(axis_name)
    size = axis_size(axes)
    return tree_map(lambda v: v * size if _is_python_scalar(v)
                     else psum_p.bind(v, axes=axes), x)


def pmean(x, axis_name):
    """Mean of ``x`` over the devices of ``axis_name``."""
    axes = normalize_axes(axis_name)
    size = axis_size(axes)
    return tree_map(lambda v: v if _is_python_scalar(v)
                    else div(psum_p.bind(v, axes=axes), size), x)


def pmax(x, axis_name):
    axes = normalize_axes(axis_name)
    axis_size(axes)
    return tree_map(lambda v: v if _is_python_scalar(v) else pmax_p.bind(v, axes=axes), x)


def pmin(x, axis_name):
    axes = normalize_axes(axis_name)
    axis_size(axes)
    return tree_map(lambda v: v if _is_python_scalar(v) else pmin_p.bind(v, axes=axes), x)


def all_gather(x, axis_name, *, axis: int = 0, tiled: bool = False):
    """Every device gets all devices' ``x``: stacked along a new dimension ``axis``, or
    concatenated along ``axis`` with ``tiled=True``."""
    axes = normalize_axes(axis_name)
    n = axis_size(axes)
    return tree_map(lambda v: all_gather_p.bind(v, axes=axes, axis_size=n, dim=int(axis),
                                                 tiled=bool(tiled)), x)


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, tiled: bool = False):
    """The sum over ``axis_name``, split along ``scatter_dimension``: device i keeps block i
    (with ``tiled=False`` the dimension has the axis size and is removed)."""
    axes = normalize_axes(axis_name)
    n = axis_size(axes)
    return tree_map(lambda v: psum_scatter_p.bind(v, axes=axes, axis_size=n,
                                                   dim=int(scatter_dimension),
                                                   tiled=bool(tiled)), x)


def all_to_all(x, axis_name, split_axis: int, concat_axis: int, *, tiled: bool = False):
    """Split ``x`` along ``split_axis`` into one block per device, send block j to device j,
    and concatenate the received blocks along ``concat_axis`` (JAX's all_to_all)."""
    axes = normalize_axes(axis_name)
    n = axis_size(axes)
    return tree_map(lambda v: all_to_all_p.bind(v, axes=axes, axis_size=n,
                                                 split_dim=int(split_axis),
                                                 concat_dim=int(concat_axis),
                                                 tiled=bool(tiled)), x)


def ppermute(x, axis_name, perm):
    """Send ``x`` from device ``src`` to device ``dst`` for each pair of ``perm`` (positions
    along ``axis_name``); devices that receive nothing get zeros."""
    axes = normalize_axes(axis_name)
    n = axis_size(axes)
    perm = tuple((int(s), int(d)) for s, d in perm)
    for s, d in perm:
        if not (0 <= s < n and 0 <= d < n):
            raise CollectiveError(f"ppermute: pair ({s}, {d}) is out of range for axes {axes} "
                                  f"of size {n}", user_frame(2))
    return tree_map(lambda v: ppermute_p.bind(v, axes=axes, perm=perm), x)


def axis_index(axis_name):
    """This device's position along ``axis_name`` (int32)."""
    axes = normalize_axes(axis_name)
    axis_size(axes)
    return axis_index_p.bind(axes=axes)


# autodiff rules ---------------------------------------------------------------------------------
def _linear_jvp(prim):
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        (t,) = tangents
        return out, Zero(out.aval) if is_zero(t) else prim.bind(t, **params)
    return rule


def _extremum_jvp(prim):
    def rule(primals, tangents, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        if is_zero(t):
            return out, Zero(out.aval)
        attains = convert_element_type(eq(x, out), x.dtype)
        count = psum_p.bind(attains, axes=axes)
        return out, div(psum_p.bind(mul(t, attains), axes=axes), count)
    return rule


def _axis_index_jvp(primals, tangents, axes):
    out = axis_index_p.bind(axes=axes)
    return out, Zero(out.aval)


group_size = axis_size   # the batching rules' params shadow the name ``axis_size``


# batching rules -----------------------------------------------------------------------------------
def _split_axes(axes):
    """(axes before ours, axes after ours) in a collective's group, or None if ours is not
    among them. The group is numbered with the first axis major."""
    name = axis_env.batch_axis_name()
    if name not in axes:
        return None
    k = axes.index(name)
    return axes[:k], axes[k + 1:]


def _strong(x):
    """Collectives return strongly typed values; local arithmetic may leave a weak type."""
    return convert_element_type(x, x.dtype, weak_type=False)


def _only_ours(prim, axes):
    if axes != (axis_env.batch_axis_name(),):
        raise UnsupportedError(f"vmap of `{prim}` over axes {axes}, which combine the vmapped "
                               f"axis {axis_env.batch_axis_name()!r} with other axes, is not "
                               f"supported; apply it to one axis at a time")


def _merge_dims(x, start, count):
    """``x`` with dimensions ``start .. start+count-1`` merged into one."""
    shape = x.shape
    return reshape(x, (*shape[:start], math.prod(shape[start:start + count]),
                           *shape[start + count:]))


# reductions over the group ---------------------------------------------------------------------
def _reduction_rule(prim, reduce, replicate):
    def rule(args, dims, axes):
        (x,), (d,) = args, dims
        split = _split_axes(axes)
        if split is None:
            return prim.bind(x, axes=axes), d
        local = replicate(x) if d is None else reduce(x, (d,))
        others = split[0] + split[1]
        return (prim.bind(local, axes=others) if others else _strong(local)), None
    return rule




def _axis_index_rule(args, dims, axes):
    major, minor = _split_axes(axes)  # only called when our axis is among ``axes``
    n = axis_env.batch_axis_size()
    minor_size = group_size(minor) if minor else 1
    index = iota(dtypes.int32, n)
    if minor:
        index = add(mul(index, minor_size), axis_index_p.bind(axes=minor))
    if major:
        index = add(index, mul(axis_index_p.bind(axes=major), n * minor_size))
    return index, 0




# data movement -----------------------------------------------------------------------------------
def _all_gather_rule(args, dims, axes, axis_size, dim, tiled):
    (x,), (d,) = args, dims
    (dim,) = canonical_axes((dim,), example_ndim(x, d) + (not tiled))
    split = _split_axes(axes)
    x = to_front(x, d)
    if split is None:
        return all_gather_p.bind(x, axes=axes, axis_size=axis_size, dim=dim + 1,
                                      tiled=tiled), 0
    major, minor = split
    n = axis_env.batch_axis_size()
    minor_size = group_size(minor) if minor else 1
    # stack the group as separate dimensions (major, ours, minor) at ``dim``, then merge them
    if minor:
        x = all_gather_p.bind(x, axes=minor, axis_size=minor_size, dim=dim + 1,
                                   tiled=False)
    x = move_axis(x, 0, dim)
    if major:
        x = all_gather_p.bind(x, axes=major, axis_size=axis_size // (n * minor_size),
                                   dim=dim, tiled=False)
    x = _merge_dims(x, dim, 1 + bool(minor) + bool(major) + bool(tiled))
    return _strong(x), None


def _psum_scatter_rule(args, dims, axes, axis_size, dim, tiled):
    (x,), (d,) = args, dims
    (dim,) = canonical_axes((dim,), example_ndim(x, d))
    if _split_axes(axes) is None:
        return psum_scatter_p.bind(to_front(x, d), axes=axes, axis_size=axis_size,
                                        dim=dim + 1, tiled=tiled), 0
    _only_ours(psum_scatter_p, axes)
    n = axis_env.batch_axis_size()
    total = mul(x, n) if d is None else reduce_sum(x, (d,))
    if tiled:  # member i keeps block i: split the dimension into (member, block)
        shape = total.shape
        total = reshape(total, (*shape[:dim], n, shape[dim] // n, *shape[dim + 1:]))
    return _strong(total), dim


def _all_to_all_rule(args, dims, axes, axis_size, split_dim, concat_dim, tiled):
    (x,), (d,) = args, dims
    split_dim, concat_dim = canonical_axes((split_dim, concat_dim), example_ndim(x, d))
    x = to_front(x, d)
    if _split_axes(axes) is None:
        return all_to_all_p.bind(x, axes=axes, axis_size=axis_size,
                                      split_dim=split_dim + 1, concat_dim=concat_dim + 1,
                                      tiled=tiled), 0
    _only_ours(all_to_all_p, axes)
    n = axis_env.batch_axis_size()
    if tiled:  # split the split dimension into (destination, block)
        shape = x.shape
        x = reshape(x, (*shape[:split_dim + 1], n, shape[split_dim + 1] // n,
                            *shape[split_dim + 2:]))
    # out[j][.., i at concat_dim, ..] = x[i][.., j at split_dim, ..]
    rest = [1 + k for k in range(x.ndim - 1) if k != split_dim]
    rest.insert(concat_dim, 0)
    out = transpose(x, (1 + split_dim, *rest))
    if tiled:  # the sources become the major part of the concatenation dimension
        out = _merge_dims(out, 1 + concat_dim, 2)
    return _strong(out), 0


def _ppermute_rule(args, dims, axes, perm):
    (x,), (d,) = args, dims
    if _split_axes(axes) is None:
        return ppermute_p.bind(x, axes=axes, perm=perm), d
    _only_ours(ppermute_p, axes)
    n = axis_env.batch_axis_size()
    x = to_front(x, d)
    source = np.zeros((n, 1), np.int32)
    receives = np.zeros(n, bool)
    for src, dst in perm:
        source[dst, 0], receives[dst] = src, True
    out = gather(x, Array(source), (0,))
    if not receives.all():
        mask = broadcast_in_dim(Array(receives), out.shape, (0,))
        zeros = broadcast_in_dim(Array(np.zeros((), x.dtype)), out.shape, ())
        out = select(mask, out, zeros)
    return _strong(out), 0


# facts ----------------------------------------------------------------------------------------------
ONLY_PER_DEVICE = Unsupported("collectives name mesh axes, which only exist per device; call "
                              "them inside pto.shard_map, and write pto.shard functions on "
                              "whole arrays")
NOT_TILED = Unsupported("collectives run between kernels (HCCL calls on Ascend)")

RUNTIME_ONLY = Unsupported("collectives run through the device runtime")


for _prim, _jvp, _batch in (
        (psum_p, _linear_jvp(psum_p), _reduction_rule(
            psum_p, reduce_sum, lambda x: mul(x, axis_env.batch_axis_size()))),
        (pmax_p, _extremum_jvp(pmax_p), _reduction_rule(pmax_p, reduce_max, lambda x: x)),
        (pmin_p, _extremum_jvp(pmin_p), _reduction_rule(pmin_p, reduce_min, lambda x: x)),
        (all_gather_p, _linear_jvp(all_gather_p), _all_gather_rule),
        (psum_scatter_p, _linear_jvp(psum_scatter_p), _psum_scatter_rule),
        (all_to_all_p, _linear_jvp(all_to_all_p), _all_to_all_rule),
        (ppermute_p, _linear_jvp(ppermute_p), _ppermute_rule),
        (axis_index_p, _axis_index_jvp, _axis_index_rule)):
    _prim.define(jvp=_jvp, batch=_batch, shard=ONLY_PER_DEVICE, tile=NOT_TILED,
                 cost=output_size, reference=RUNTIME_ONLY)

psum_p.define(transpose=lambda ct, x, axes: [psum_p.bind(ct, axes=axes)])
all_gather_p.define(transpose=lambda ct, x, axes, axis_size, dim, tiled: [
    psum_scatter_p.bind(ct, axes=axes, axis_size=axis_size, dim=dim, tiled=tiled)])
psum_scatter_p.define(transpose=lambda ct, x, axes, axis_size, dim, tiled: [
    all_gather_p.bind(ct, axes=axes, axis_size=axis_size, dim=dim, tiled=tiled)])
all_to_all_p.define(transpose=lambda ct, x, axes, axis_size, split_dim, concat_dim, tiled: [
    all_to_all_p.bind(ct, axes=axes, axis_size=axis_size, split_dim=concat_dim,
                      concat_dim=split_dim, tiled=tiled)])
ppermute_p.define(transpose=lambda ct, x, axes, perm: [
    ppermute_p.bind(ct, axes=axes, perm=tuple((d, s) for s, d in perm))])
COLLECTIVES = (psum_p, pmax_p, pmin_p, all_gather_p, psum_scatter_p, all_to_all_p,
               ppermute_p, axis_index_p)


_add_examples(globals(), """
pmax: The maximum of ``x`` over the devices (or vmapped instances) of ``axis_name``.
    >>> pto.vmap(lambda v: pto.lax.pmax(v, 'i'), axis_name='i')(pnp.array([3, 1, 2]))
    Array([3, 3, 3], dtype=int32)
pmin: The minimum of ``x`` over the devices (or vmapped instances) of ``axis_name``.
    >>> pto.vmap(lambda v: pto.lax.pmin(v, 'i'), axis_name='i')(pnp.array([3, 1, 2]))
    Array([1, 1, 1], dtype=int32)
all_gather:
    >>> pto.vmap(lambda v: pto.lax.all_gather(v, 'i'), axis_name='i')(pnp.array([1, 2]))
    Array([[1, 2],
           [1, 2]], dtype=int32)
all_to_all:
    >>> exchange = lambda v: pto.lax.all_to_all(v, 'i', 0, 0)
    >>> pto.vmap(exchange, axis_name='i')(pnp.array([[1, 2], [3, 4]]))
    Array([[1, 3],
           [2, 4]], dtype=int32)
axis_index:
    >>> pto.vmap(lambda v: pto.lax.axis_index('i'), axis_name='i')(pnp.zeros(3))
    Array([0, 1, 2], dtype=int32)
axis_size:
    >>> pto.vmap(lambda v: v * pto.lax.axis_size('i'), axis_name='i')(pnp.ones(3))
    Array([3., 3., 3.], dtype=float32)
pmean:
    >>> pto.vmap(lambda v: pto.lax.pmean(v, 'i'), axis_name='i')(pnp.array([1.0, 2.0, 6.0]))
    Array([3., 3., 3.], dtype=float32)
psum:
    >>> pto.vmap(lambda v: pto.lax.psum(v, 'i'), axis_name='i')(pnp.array([1, 2, 3]))
    Array([6, 6, 6], dtype=int32)
ppermute:
    >>> rotate = lambda v: pto.lax.ppermute(v, 'i', [(0, 1), (1, 2), (2, 0)])
    >>> pto.vmap(rotate, axis_name='i')(pnp.array([1, 2, 3]))
    Array([3, 1, 2], dtype=int32)
psum_scatter:
    >>> scatter_sum = lambda v: pto.lax.psum_scatter(v, 'i')
    >>> pto.vmap(scatter_sum, axis_name='i')(pnp.array([[1, 2], [3, 4]]))
    Array([4, 6], dtype=int32)
""")
