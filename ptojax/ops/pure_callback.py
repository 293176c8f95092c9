"""``pure_callback``: a Python function computing values inside a program, as JAX's
``jax.pure_callback``. The primitive takes the flat operands and returns arrays of the
declared ``result_types``; the program calls the function (on ``Array`` copies) where the
equation runs, eagerly or between kernels of a compiled program. It is pure: the optimizer
may remove it when its results are unused, merge equal calls or fold it on constants.

Facts: no derivatives (JAX's error: use ``custom_jvp``/``custom_vjp``); vmap by
``vmap_method`` as JAX: ``sequential`` (one call per example), ``expand_dims`` (one call,
unbatched operands given a leading axis of size 1) or ``broadcast_all`` (one call, every
operand broadcast to the batch); with no ``vmap_method``, vmap raises as in JAX.
"""
from __future__ import annotations

import numpy as np

from ptojax import dtypes
from ptojax.errors import PtoError, UnsupportedError, callback_error
from ptojax.eval.array import Array
from ptojax.ir.types import TensorType
from ptojax.ops.broadcast import broadcast_at
from ptojax.ops.costs import no_flops
from ptojax.ops.shape import expand_dims, move_axis
from ptojax.source_info import user_frame
from ptojax.trace import Primitive, Unsupported
from ptojax.pytree import tree_flatten, tree_leaves
from ptojax.public import add_examples as _add_examples

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


def _abstract_eval(*types, callback, result_types, vmap_method):
    return list(result_types)


def _checked(results, result_types, callback):
    results = list(results)
    if len(results) != len(result_types):
        raise RuntimeError(f"pure_callback: {name_of(callback)} returned {len(results)} "
                           f"arrays, {len(result_types)} declared")
    out = []
    for i, (r, t) in enumerate(zip(results, result_types)):
        r = np.asarray(r)
        if r.shape != tuple(t.shape):
            raise RuntimeError(f"pure_callback: {name_of(callback)} returned shape "
                               f"{r.shape} where {tuple(t.shape)} was declared "
                               f"(result_shape_dtypes)")
        if dtypes.canonical_dtype(r.dtype) != t.dtype:   # float64 is float32 without x64
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: Expected: "
                               f"{t.dtype}, Actual: {r.dtype}")
        out.append(np.array(r, dtype=t.dtype))
    return out


def run_callback(callback, values):
    """The user's ``callback`` on ``values`` (as arrays); if it fails, JAX's
    ``JaxRuntimeError`` (also of the failure's own class: ``errors.callback_error``)."""
    try:
        return callback(*(Array(np.array(v)) for v in values))
    except PtoError:
        raise
    except Exception as e:
        raise callback_error(e) from e


def _impl(*values, callback, result_types, vmap_method):
    return _checked(run_callback(callback, values), result_types, callback)


pure_callback_p = Primitive("pure_callback", _abstract_eval, _impl, multiple_results=True)


def name_of(callback) -> str:
    return getattr(callback, "__name__", None) or repr(callback)


def _jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


class Sequential:
    """A flat callback run once per example of the leading axis of its ``batched`` operands
    (the others passed whole); the results stacked. Hashable, so equal rewrites compare
    equal."""
    __slots__ = ("callback", "batched", "result_types")

    def __init__(self, callback, batched, result_types):
        self.callback, self.batched = callback, tuple(batched)
        self.result_types = tuple(result_types)

    def __call__(self, *args):
        size = next(a.shape[0] for a, b in zip(args, self.batched) if b)
        per_example = [
            _checked(self.callback(*(Array(np.asarray(a)[i]) if b else a
                                     for a, b in zip(args, self.batched))),
                     self.result_types, self.callback)
            for i in range(size)]
        return [np.stack(rs) if rs else np.zeros((0, *t.shape), t.dtype)
                for rs, t in zip(zip(*per_example) if per_example else
                                 [[] for _ in self.result_types], self.result_types)]

    def __eq__(self, other):
        return type(other) is Sequential and (self.callback, self.batched) == \
            (other.callback, other.batched)

    def __hash__(self):
        return hash((self.callback, self.batched))

    def __repr__(self):
        return f"sequential({name_of(self.callback)})"


def _batch(args, dims, callback, result_types, vmap_method):
    if vmap_method not in VMAP_METHODS:
        raise NotImplementedError(
            f"vmap is only supported for the pure_callback primitive when vmap_method is one "
            f"of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method}.")
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    batched_types = tuple(TensorType((size, *t.shape), t.dtype) for t in result_types)
    if vmap_method in ("sequential", "sequential_unrolled"):
        args = [a if d is None else move_axis(a, d, 0) for a, d in zip(args, dims)]
        callback = Sequential(callback, [d is not None for d in dims], result_types)
    elif vmap_method == "expand_dims":
        args = [expand_dims(a, (0,)) if d is None else move_axis(a, d, 0)
                for a, d in zip(args, dims)]
    else:
        args = [broadcast_at(a, 0, size) if d is None else move_axis(a, d, 0)
                for a, d in zip(args, dims)]
    outs = pure_callback_p.bind(*args, callback=callback, result_types=batched_types,
                                vmap_method=vmap_method)
    return outs, [0] * len(outs)


# what no host callback has (pure_callback, io_callback)
HOST_CALLBACK_FACTS = dict(
    shard=Unsupported("a host callback needs whole values; call it outside pto.shard, or "
                      "in a shard_map body"),
    tile=Unsupported("a host callback runs between kernels, as a tensor-level equation"),
    cost=no_flops,
    reference=Unsupported("a host callback's values come from the user's function"))

pure_callback_p.define(jvp=_jvp, batch=_batch, **HOST_CALLBACK_FACTS)


class FlatCallback:
    """The user's callback on flat operands, returning its results' leaves (none for a
    ``None`` result)."""
    __slots__ = ("callback", "in_tree", "__name__")

    def __init__(self, callback, in_tree):
        self.callback, self.in_tree = callback, in_tree
        self.__name__ = name_of(callback)

    def __call__(self, *flat):
        args, kwargs = self.in_tree.unflatten(flat)
        return tree_leaves(self.callback(*args, **kwargs))


def declared_types(result_shape_dtypes):
    """``(result types, their tree)`` of a callback's ``result_shape_dtypes``."""
    leaves, out_tree = tree_flatten(result_shape_dtypes)
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise ValueError(f"result_shape_dtypes must be a pytree of values with shape and "
                             f"dtype attributes (such as ShapeDtypeStruct), got {leaf!r}")
        if dtypes.canonical_dtype(leaf.dtype) != dtypes.canonicalize(leaf.dtype):
            raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                             "`jax_enable_x64` is disabled")
    return tuple(TensorType(tuple(x.shape), dtypes.canonicalize(x.dtype)) for x in leaves), \
        out_tree


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """``callback(*args, **kwargs)``, a Python function of arrays without side effects,
    called inside the program (under ``jit`` too), as JAX's ``jax.pure_callback``: it must
    return arrays of the shapes (and dtypes) of ``result_shape_dtypes`` (a pytree of
    ``ShapeDtypeStruct``-like leaves). ``vmap_method`` says how it is vmapped (see the
    module); it has no derivatives (wrap it in ``custom_jvp``/``custom_vjp``)."""
    if vmap_method not in (*VMAP_METHODS, None):
        raise ValueError(f"vmap_method must be on of the allowed methods "
                         f"{[*VMAP_METHODS, 'legacy_vectorized', None]}, but got: "
                         f"{vmap_method}")
    if sharding is not None:
        raise UnsupportedError("pure_callback: sharding is not supported (pass None)",
                               user_frame())
    flat, in_tree = tree_flatten((args, kwargs))
    types, out_tree = declared_types(result_shape_dtypes)
    outs = pure_callback_p.bind(*flat, callback=FlatCallback(callback, in_tree),
                                result_types=types, vmap_method=vmap_method)
    return out_tree.unflatten(outs)


_add_examples(globals(), """
pure_callback:
    >>> def host_sin(x):
    ...     return np.sin(np.asarray(x))
    >>> f = pto.jit(lambda x: pto.pure_callback(host_sin, pto.ShapeDtypeStruct(x.shape, x.dtype), x))
    >>> f(pnp.array([0.0, 1.0]))
    Array([0.      , 0.841471], dtype=float32)
""")
