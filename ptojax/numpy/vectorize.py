"""Functions mapped over array axes with ``vmap``: ``vectorize`` (NumPy's generalized-ufunc
``signature=`` and ``excluded=``), ``apply_along_axis`` and ``apply_over_axes``.

``vectorize`` broadcasts the loop (non-core) dimensions of its arguments and wraps the
function in one ``vmap`` per broadcast dimension, as JAX does: an argument whose loop
dimension is 1 is not mapped there, and a dimension no argument maps is expanded back
afterwards. The function is traced on abstract values, as under ``jit``.
"""
from __future__ import annotations

import functools
import re

from ptojax.batching.api import vmap
from ptojax.errors import ShapeError
from ptojax.numpy._axes import normalize_axis
from ptojax.numpy._promote import asarray, broadcast_shapes
from ptojax.numpy.manipulation import expand_dims, squeeze
from ptojax.source_info import user_frame
from ptojax.public import add_examples as _add_examples

_NAME = r"\w+"
_CORE_DIMS = rf"\((?:{_NAME}(?:,{_NAME})*)?\)"
_SIGNATURE = re.compile(rf"^{_CORE_DIMS}(?:,{_CORE_DIMS})*->{_CORE_DIMS}(?:,{_CORE_DIMS})*$")


def _parse_signature(signature: str):
    """([core dims of each input], [core dims of each output]) of a gufunc signature such
    as ``"(m,n),(n)->(m)"``."""
    if not _SIGNATURE.match(signature.replace(" ", "")):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r} (expected "
                         f"e.g. '(m,n),(n)->(m)')")
    inputs, outputs = signature.replace(" ", "").split("->")
    parse = lambda side: [tuple(re.findall(_NAME, arg)) for arg in re.findall(_CORE_DIMS, side)]
    return parse(inputs), parse(outputs)


def _record_core_sizes(sizes: dict, shape, core, context, *, is_input: bool):
    """Check ``shape``'s trailing core dimensions against (and add them to) ``sizes``."""
    if is_input and len(shape) < len(core):
        raise ShapeError(f"vectorize: input of shape {tuple(shape)} has fewer dimensions "
                         f"than its core dimensions {core} {context}", user_frame())
    if not is_input and len(shape) != len(core):
        raise ShapeError(f"vectorize: output of shape {tuple(shape)} does not match its core "
                         f"dimensions {core} {context}", user_frame())
    for name, size in zip(core, tuple(shape)[len(shape) - len(core):]):
        if sizes.setdefault(name, size) != size:
            raise ShapeError(f"vectorize: inconsistent size for core dimension {name!r}: "
                             f"{size} vs {sizes[name]} {context}", user_frame())


def _checking_outputs(fn, sizes, output_core, context):
    """``fn`` checking its outputs' shapes against the signature's output core dims."""
    def checked(*args):
        out = fn(*args)
        outs = out if isinstance(out, tuple) else (out,)
        if len(output_core) > 1 and not isinstance(out, tuple):
            raise TypeError(f"vectorize: the function must return a tuple of "
                            f"{len(output_core)} outputs {context}")
        if len(outs) != len(output_core):
            raise TypeError(f"vectorize: expected {len(output_core)} outputs, got "
                            f"{len(outs)} {context}")
        known = dict(sizes)
        for o, core in zip(outs, output_core):
            _record_core_sizes(known, asarray(o, op="vectorize").shape, core, context,
                               is_input=False)
        return out
    return checked


def _bind_excluded(fn, excluded, args, kwargs):
    """(fn with the excluded arguments bound, the remaining positional args)."""
    static = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
              if i < len(args)]
    dynamic = [a for i, a in enumerate(args) if i not in excluded]
    static_kwargs = {k: v for k, v in kwargs.items() if k in excluded}
    mapped_kwargs = sorted(k for k in kwargs if k not in excluded)
    if mapped_kwargs:
        raise TypeError(f"vectorize: keyword arguments {mapped_kwargs} are not excluded; "
                        f"pass them positionally or list them in excluded= (JAX ignores "
                        f"such arguments silently)")
    if not static and not static_kwargs:
        return fn, dynamic

    def bound(*dynamic_args):
        full = list(dynamic_args)
        for i, value in static:
            full.insert(i, value)
        return fn(*full, **static_kwargs)
    return bound, dynamic


def _check_excluded(excluded):
    if any(not isinstance(e, (str, int)) or isinstance(e, bool) for e in excluded):
        raise TypeError(f"vectorize: excluded may only name integer positions or string "
                        f"keywords, got excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"vectorize: excluded={excluded!r} contains negative numbers")


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """``pyfunc`` applied over the broadcast leading (loop) dimensions of its array
    arguments, with ``vmap``. ``signature`` (e.g. ``"(n),(n)->()"``) names the trailing core
    dimensions each argument and output keeps; without it every argument is a scalar.
    ``excluded`` lists positions or keywords passed through unchanged."""
    _check_excluded(excluded)

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        context = f"(vectorized function with excluded={excluded!r}, signature={signature!r})"
        fn, args = _bind_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            input_core, output_core = _parse_signature(signature)
        else:
            input_core, output_core = [()] * len(args), None
        nones = {i for i, a in enumerate(args) if a is None}
        if nones:
            if any(i < len(input_core) and input_core[i] for i in nones):
                raise ValueError(f"vectorize: cannot pass None at positions {sorted(nones)} "
                                 f"with signature={signature!r}")
            fn, args = _bind_excluded(fn, nones, args, {})
            input_core = [c for i, c in enumerate(input_core) if i not in nones]
        if len(args) != len(input_core):
            raise TypeError(f"vectorize: expected {len(input_core)} positional arguments, "
                            f"got {len(args)} {context}")
        args = [asarray(a, op="vectorize") for a in args]
        sizes = {}
        loop_shapes = []
        for a, core in zip(args, input_core):
            _record_core_sizes(sizes, a.shape, core, context, is_input=True)
            loop_shapes.append(tuple(a.shape)[:a.ndim - len(core)])
        loop = broadcast_shapes("vectorize", *loop_shapes)
        if output_core is not None:
            fn = _checking_outputs(fn, sizes, output_core, context)
        return _map_loop_dims(fn, args, loop_shapes, loop)

    return wrapped


def _map_loop_dims(fn, args, loop_shapes, loop):
    """``fn`` vmapped over each loop dimension some argument spans (size > 1), innermost
    first; loop dimensions every argument has as 1 are expanded back on the outputs."""
    squeezed, padded = [], []
    for a, shape in zip(args, loop_shapes):
        squeezed.append(squeeze(a, tuple(i for i, n in enumerate(shape) if n == 1)))
        padded.append((1,) * (len(loop) - len(shape)) + shape)
    expand = []
    for dim in reversed(range(len(loop))):
        in_axes = tuple(None if p[dim] == 1 else 0 for p in padded)
        if all(ax is None for ax in in_axes):
            expand.append(dim)
        else:
            fn = vmap(fn, in_axes)
    out = fn(*squeezed)
    if not expand:
        return out
    axes = tuple(sorted(expand))
    if isinstance(out, tuple):
        return tuple(expand_dims(o, axes) for o in out)
    return expand_dims(out, axes)


def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """``func1d`` applied to the 1-D slices of ``arr`` along ``axis`` (with ``vmap`` over
    every other axis); the slice's axis is replaced by the dimensions of ``func1d``'s
    result."""
    arr = asarray(arr, op="apply_along_axis")
    axis = normalize_axis("apply_along_axis", axis, arr.ndim)
    fn = lambda a: func1d(a, *args, **kwargs)
    for _ in range(axis):
        fn = vmap(fn, in_axes=0, out_axes=0)
    for _ in range(arr.ndim - axis - 1):
        fn = vmap(fn, in_axes=-1, out_axes=-1)
    return fn(arr)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in ``axes`` in turn; a result that lost a
    dimension gets it back (size 1), so the rank stays."""
    a = asarray(a, op="apply_over_axes")
    for axis in axes if isinstance(axes, (list, tuple)) else (axes,):
        b = asarray(func(a, axis), op="apply_over_axes")
        if b.ndim == a.ndim - 1:
            b = expand_dims(b, normalize_axis("apply_over_axes", axis, a.ndim))
        elif b.ndim != a.ndim:
            raise ShapeError(f"apply_over_axes: func must keep the rank or drop the axis, "
                             f"got shape {tuple(b.shape)} from {tuple(a.shape)}", user_frame())
        a = b
    return a


__all__ = ["apply_along_axis", "apply_over_axes", "vectorize"]


_add_examples(globals(), """
vectorize:
    >>> inner = pnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
    >>> inner(pnp.ones((2, 3)), pnp.arange(3.0))
    Array([3., 3.], dtype=float32)
apply_along_axis:
    >>> pnp.apply_along_axis(lambda v: v[0] + v[-1], 1, pnp.arange(6).reshape(2, 3))
    Array([2, 8], dtype=int32)
apply_over_axes:
    >>> pnp.apply_over_axes(pnp.sum, pnp.arange(6).reshape(2, 3), [0, 1])
    Array([[15]], dtype=int32)
""")
