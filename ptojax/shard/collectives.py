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
enclosing ``shard_map`` (``bound_axes``) or a named ``vmap``. At run time the numpy impl of a
collective asks the per-device context of ``runtime/collectives.py`` to do the exchange.

JVP rules: all are linear except pmax/pmin (tangent from the members attaining the extremum).
Transposes: psum -> psum, all_gather <-> psum_scatter, all_to_all with split and concat
swapped, ppermute -> the inverse permutation. (With psum transposing to psum, ``shard_map``'s
own transpose divides cotangents of replicated outputs by the number of replicas, as JAX does
with ``check_vma=False``.)
"""
from __future__ import annotations

import contextlib
import threading

from ptojax import dtypes
from ptojax.errors import CollectiveError, ShapeError
from ptojax.ir.types import TensorType
from ptojax.ops.checks import check_axis
from ptojax.source_info import user_frame
from ptojax.trace import Primitive


# axis names bound while tracing ---------------------------------------------------------------
class _AxisEnv(threading.local):
    def __init__(self):
        self.frames: list[dict] = []  # {axis name: size}, innermost last


_axis_env = _AxisEnv()


@contextlib.contextmanager
def bound_axes(sizes: dict):
    """Bind mesh axis names (name -> size) while tracing a per-device function."""
    _axis_env.frames.append(dict(sizes))
    try:
        yield
    finally:
        _axis_env.frames.pop()


def _lookup_axis(name: str):
    for frame in reversed(_axis_env.frames):
        if name in frame:
            return frame[name]
    from ptojax.batching.vmap import axis_env as vmap_env
    for vmap_name, size in reversed(vmap_env.frames):
        if vmap_name == name:
            return size
    return None


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
        n = _lookup_axis(name)
        if n is None:
            bound = sorted({a for f in _axis_env.frames for a in f})
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
        from ptojax.shard.runtime.in_process import current_context
        return current_context(kind, params["axes"]).run(kind, *args, **params)
    return impl


def _collective(name, abstract_eval):
    prim = Primitive(name, abstract_eval, _impl(name))
    prim.collective = True
    COLLECTIVES[name] = prim
    return prim


COLLECTIVES: dict[str, Primitive] = {}
psum_p = _collective("psum", _same_type)
pmax_p = _collective("pmax", _same_type)
pmin_p = _collective("pmin", _same_type)
all_gather_p = _collective("all_gather", _all_gather_abstract)
psum_scatter_p = _collective("psum_scatter", _psum_scatter_abstract)
all_to_all_p = _collective("all_to_all", _all_to_all_abstract)
ppermute_p = _collective("ppermute", _ppermute_abstract)
axis_index_p = _collective("axis_index", _axis_index_abstract)


# user functions (exported by pto.lax) ---------------------------------------------------------
def _tree_map(fn, x):
    from ptojax.tree_util import tree_map
    return tree_map(fn, x)


def _is_python_scalar(x) -> bool:
    return type(x) in (int, float, bool)


def psum(x, axis_name):
    """Sum ``x`` (a pytree) over the devices of ``axis_name``; every device gets the sum."""
    axes = normalize_axes(axis_name)
    size = axis_size(axes)
    return _tree_map(lambda v: v * size if _is_python_scalar(v)
                     else psum_p.bind(v, axes=axes), x)


def pmean(x, axis_name):
    """Mean of ``x`` over the devices of ``axis_name``."""
    from ptojax import lax
    axes = normalize_axes(axis_name)
    size = axis_size(axes)
    return _tree_map(lambda v: v if _is_python_scalar(v)
                     else lax.div(psum_p.bind(v, axes=axes), size), x)


def pmax(x, axis_name):
    axes = normalize_axes(axis_name)
    axis_size(axes)
    return _tree_map(lambda v: v if _is_python_scalar(v) else pmax_p.bind(v, axes=axes), x)


def pmin(x, axis_name):
    axes = normalize_axes(axis_name)
    axis_size(axes)
    return _tree_map(lambda v: v if _is_python_scalar(v) else pmin_p.bind(v, axes=axes), x)


def all_gather(x, axis_name, *, axis: int = 0, tiled: bool = False):
    """Every device gets all devices' ``x``: stacked along a new dimension ``axis``, or
    concatenated along ``axis`` with ``tiled=True``."""
    axes = normalize_axes(axis_name)
    n = axis_size(axes)
    return _tree_map(lambda v: all_gather_p.bind(v, axes=axes, axis_size=n, dim=int(axis),
                                                 tiled=bool(tiled)), x)


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, tiled: bool = False):
    """The sum over ``axis_name``, split along ``scatter_dimension``: device i keeps block i
    (with ``tiled=False`` the dimension has the axis size and is removed)."""
    axes = normalize_axes(axis_name)
    n = axis_size(axes)
    return _tree_map(lambda v: psum_scatter_p.bind(v, axes=axes, axis_size=n,
                                                   dim=int(scatter_dimension),
                                                   tiled=bool(tiled)), x)


def all_to_all(x, axis_name, split_axis: int, concat_axis: int, *, tiled: bool = False):
    """Split ``x`` along ``split_axis`` into one block per device, send block j to device j,
    and concatenate the received blocks along ``concat_axis`` (JAX's all_to_all)."""
    axes = normalize_axes(axis_name)
    n = axis_size(axes)
    return _tree_map(lambda v: all_to_all_p.bind(v, axes=axes, axis_size=n,
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
    return _tree_map(lambda v: ppermute_p.bind(v, axes=axes, perm=perm), x)


def axis_index(axis_name):
    """This device's position along ``axis_name`` (int32)."""
    axes = normalize_axes(axis_name)
    axis_size(axes)
    return axis_index_p.bind(axes=axes)


# autodiff rules ---------------------------------------------------------------------------------
def _register_autodiff():
    from ptojax import lax
    from ptojax.ops.tangents import Zero, is_zero
    from ptojax.autodiff.jvp import jvp_rules
    from ptojax.autodiff.transpose import transpose_rules

    def linear(prim):
        def rule(primals, tangents, **params):
            out = prim.bind(*primals, **params)
            (t,) = tangents
            return out, Zero(out.aval) if is_zero(t) else prim.bind(t, **params)
        return rule

    def extremum(prim):
        def rule(primals, tangents, axes):
            (x,), (t,) = primals, tangents
            out = prim.bind(x, axes=axes)
            if is_zero(t):
                return out, Zero(out.aval)
            attains = lax.convert_element_type(lax.eq(x, out), x.dtype)
            count = psum_p.bind(attains, axes=axes)
            return out, lax.div(psum_p.bind(lax.mul(t, attains), axes=axes), count)
        return rule

    for prim in (psum_p, all_gather_p, psum_scatter_p, all_to_all_p, ppermute_p):
        jvp_rules[prim] = linear(prim)
    jvp_rules[pmax_p] = extremum(pmax_p)
    jvp_rules[pmin_p] = extremum(pmin_p)

    def index_rule(primals, tangents, axes):
        out = axis_index_p.bind(axes=axes)
        return out, Zero(out.aval)

    jvp_rules[axis_index_p] = index_rule

    transpose_rules[psum_p] = lambda ct, x, axes: [psum_p.bind(ct, axes=axes)]
    transpose_rules[all_gather_p] = lambda ct, x, axes, axis_size, dim, tiled: [
        psum_scatter_p.bind(ct, axes=axes, axis_size=axis_size, dim=dim, tiled=tiled)]
    transpose_rules[psum_scatter_p] = lambda ct, x, axes, axis_size, dim, tiled: [
        all_gather_p.bind(ct, axes=axes, axis_size=axis_size, dim=dim, tiled=tiled)]
    transpose_rules[all_to_all_p] = lambda ct, x, axes, axis_size, split_dim, concat_dim, \
        tiled: [all_to_all_p.bind(ct, axes=axes, axis_size=axis_size, split_dim=concat_dim,
                                  concat_dim=split_dim, tiled=tiled)]
    transpose_rules[ppermute_p] = lambda ct, x, axes, perm: [
        ppermute_p.bind(ct, axes=axes, perm=tuple((d, s) for s, d in perm))]


_register_autodiff()

