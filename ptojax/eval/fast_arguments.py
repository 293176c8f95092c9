"""The hot path of a cached ``jit`` call: its arguments' values and a key, in one walk.

``jit`` keys its cache on the full signature (``PyTreeDef``, leaf ``TensorType``s, static
values, Python-float positions), which ``tree_flatten_with_path`` and ``leaf_type`` build at
a few microseconds per leaf. ``fast_arguments`` walks the same arguments once and returns the
leaf values ``jit`` runs with (``leaves.leaf_value``'s, in ``tree_flatten``'s order) and a
hashable key that determines the full signature:

- a container contributes its exact type and layout: ``(tuple, n)``, ``(list, n)``,
  ``(dict, sorted keys)``, ``None``, a namedtuple or registered node ``(type, aux data, number of children)``;
- a leaf contributes what its traced type depends on: an ``Array`` its ``aval`` (weak type
  included), a numpy array ``(dtype, shape)`` (the array itself is passed: never copied; a
  64-bit one without x64 is narrowed by the entry ``jit`` keeps for that key), a
  Python scalar its type (``int`` only inside the int32 range), a numpy scalar its type;
- a static argument contributes its value.

Anything else — a sharded or subclassed array, an unsortable dict, a Python int outside the
int32 range, an unhashable static value — raises ``Miss``: ``jit`` then takes the full path,
which also produces the located errors. Equal keys imply equal signatures, so ``jit`` maps a
key to the entry the full path found for it.
"""
from __future__ import annotations

import numpy as np

from ptojax.eval.array import Array
from ptojax.eval.leaves import leaf_value
from ptojax.pytree import _registry


class Miss(Exception):
    """These arguments have no fast key: take the full path."""


_INT32_MIN, _INT32_MAX = -2**31, 2**31
_FLOAT64, _INT32, _BOOL = np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.bool_)


def _walk(x, values: list, key: list):
    t = type(x)
    if t is Array:
        if x._sharding is not None:
            raise Miss
        values.append(x._value)
        key.append(x._aval or x.aval)
    elif t is np.ndarray:
        values.append(x)
        key.append((x.dtype, x.shape))
    elif t is tuple or t is list:
        key.append((t, len(x)))
        for child in x:
            _walk(child, values, key)
    elif t is dict:
        names = sorted(x)
        key.append((dict, *names))
        for name in names:
            _walk(x[name], values, key)
    elif t is float:   # carried at float64, as leaves.argument_type says
        values.append(np.asarray(x, _FLOAT64))
        key.append(float)
    elif t is int:
        if not _INT32_MIN <= x < _INT32_MAX:
            raise Miss
        values.append(np.asarray(x, _INT32))
        key.append(int)
    elif t is bool:
        values.append(np.asarray(x, _BOOL))
        key.append(bool)
    elif x is None:
        key.append(None)
    else:
        _walk_other(x, t, values, key)


def _walk_other(x, t, values, key):
    kind = _registry.get(t)
    if kind is not None:
        children, aux = kind.flatten(x)
        key.append((t, aux, len(children)))
        for child in children:
            _walk(child, values, key)
    elif isinstance(x, tuple) and hasattr(t, "_fields"):   # a namedtuple: its fields in order
        key.append((t, len(x)))
        for child in x:
            _walk(child, values, key)
    elif t is complex or isinstance(x, np.generic):   # its type fixes its dtype
        values.append(leaf_value(x))
        key.append(t)
    else:
        raise Miss


def fast_arguments(args: tuple, kwargs: dict, static_argnums, static_argnames):
    """(key, leaf values) of a call's arguments; raises ``Miss`` (or the error of an
    unsortable dict or a failing custom flatten) when the full path must decide."""
    values: list = []
    key: list = []
    if static_argnums:
        for i, a in enumerate(args):
            if i in static_argnums:
                key.append(("static", a))
            else:
                _walk(a, values, key)
    else:
        for a in args:
            _walk(a, values, key)
    if kwargs:
        key.append(("kwargs", len(args)))
        for name in sorted(kwargs):
            if name in static_argnames:
                key.append(("static", name, kwargs[name]))
            else:
                key.append(name)
                _walk(kwargs[name], values, key)
    else:
        key.append(len(args))
    return tuple(key), values
