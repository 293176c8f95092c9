"""Pytree node types: the keys that name a node's children (``SequenceKey``, ``DictKey``,
``GetAttrKey``, ``FlattenedIndexKey``), the registry of node types (``register_*``) and the
built-in kinds (tuple, list, dict, OrderedDict, defaultdict, namedtuple, None). ``pytree.py``
flattens and rebuilds trees with them."""
from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, NamedTuple


class SequenceKey(NamedTuple):
    idx: int

    def __str__(self):
        return f"[{self.idx}]"


class DictKey(NamedTuple):
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"


class GetAttrKey(NamedTuple):
    name: str

    def __str__(self):
        return f".{self.name}"


class FlattenedIndexKey(NamedTuple):
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def _simple_key(key) -> str:
    return str(key[0])


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``['a'][0].b``, or with ``simple=True`` the bare keys joined by
    ``separator`` (``a/0/b``)."""
    if simple:
        return separator.join(_simple_key(k) for k in keys)
    return separator.join(str(k) for k in keys)


# ---------------------------------------------------------------------------------------------
class _NodeKind(NamedTuple):
    flatten: Callable            # node -> (children, aux_data)
    unflatten: Callable          # (aux_data, children) -> node
    flatten_with_keys: Callable  # node -> ([(key, child), ...], aux_data)


_registry: dict[type, _NodeKind] = {}


def _flat_index_keys(flatten_func):
    def flatten_with_keys(node):
        children, aux = flatten_func(node)
        return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
    return flatten_with_keys


def _drop_keys(flatten_with_keys_func):
    def flatten(node):
        pairs, aux = flatten_with_keys_func(node)
        return [c for _, c in pairs], aux
    return flatten


def _register(nodetype: type, kind: _NodeKind) -> None:
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")
    _registry[nodetype] = kind


# types that are pytree nodes for transforms but leaves in users' view (ptojax.tree_util)
USER_LEAF_TYPES: set = set()


def register_user_leaf(nodetype: type) -> None:
    """``nodetype`` (a registered node) is a leaf in users' view: typed PRNG keys, whose
    transforms see their uint32 words while ``tree_leaves(key)`` is ``[key]``, as in JAX."""
    USER_LEAF_TYPES.add(nodetype)


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Register ``nodetype``: ``flatten_func(x) -> (children, aux)`` and
    ``unflatten_func(aux, children) -> x``; ``aux`` must be hashable and comparable.
    Without ``flatten_with_keys_func`` children are keyed by ``FlattenedIndexKey``."""
    _register(nodetype, _NodeKind(flatten_func, unflatten_func,
                                  flatten_with_keys_func or _flat_index_keys(flatten_func)))


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Register ``nodetype`` with keyed children:
    ``flatten_with_keys(x) -> ([(key, child), ...], aux)``."""
    _register(nodetype, _NodeKind(flatten_func or _drop_keys(flatten_with_keys),
                                  unflatten_func, flatten_with_keys))


def register_pytree_node_class(cls):
    """Class decorator: ``x.tree_flatten() -> (children, aux)`` and the classmethod
    ``cls.tree_unflatten(aux, children)``."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls):
    """Class decorator: ``x.tree_flatten_with_keys()`` and ``cls.tree_unflatten(aux,
    children)`` (and ``x.tree_flatten()`` if the class defines it)."""
    flatten = (lambda x: x.tree_flatten()) if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              flatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a class whose fields are children (``data_fields``) or static metadata
    (``meta_fields``, part of the treedef: hashable). For a dataclass both may be omitted:
    init fields declared with ``field(metadata={"static": True})`` are metadata, the other
    init fields data. Instances are rebuilt as ``nodetype(**fields)``, so fields with
    ``init=False`` are recomputed. Usable as a decorator."""
    if (data_fields is None) != (meta_fields is None):
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or "
                        "neither (to read them from the dataclass fields)")
    if data_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass: {nodetype.__name__} is not a dataclass; "
                            f"pass data_fields and meta_fields")
        fields = [f for f in dataclasses.fields(nodetype)
                  if f.init and f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields)

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(meta, children):
        return nodetype(**dict(zip(data_fields, children)), **dict(zip(meta_fields, meta)))

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten, flatten)
    return nodetype


def _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields):
    overlap = set(data_fields) & set(meta_fields)
    if overlap:
        raise ValueError(f"register_dataclass: fields {sorted(overlap)} are both data and "
                         f"metadata")
    if not dataclasses.is_dataclass(nodetype):
        return
    init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
    given = set(data_fields) | set(meta_fields)
    if given != init_fields:
        raise ValueError(f"register_dataclass: data_fields and meta_fields must name every "
                         f"init field of {nodetype.__name__} exactly once; missing "
                         f"{sorted(init_fields - given)}, unexpected "
                         f"{sorted(given - init_fields)} (drop_fields excludes fields)")


def register_static(cls):
    """Class decorator: instances are pytrees without leaves; the (hashable) instance itself
    is part of the treedef, so jit treats it as static."""
    register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


# built-in node types -------------------------------------------------------------------------
def _sorted_keys(d) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:
        raise ValueError(f"pytree dict keys must be sortable (mutually comparable), got "
                         f"{list(d)!r:.100}") from None


def _sequence_with_keys(seq):
    return [(SequenceKey(i), v) for i, v in enumerate(seq)], None


def _dict_with_keys(keys, d):
    return [(DictKey(k), d[k]) for k in keys]


register_pytree_with_keys(tuple, _sequence_with_keys, lambda _, c: tuple(c),
                          lambda t: (t, None))
register_pytree_with_keys(list, _sequence_with_keys, lambda _, c: list(c),
                          lambda t: (t, None))
register_pytree_with_keys(
    dict, lambda d: (_dict_with_keys(_sorted_keys(d), d), _sorted_keys(d)),
    lambda keys, c: dict(zip(keys, c)),
    lambda d: ([d[k] for k in _sorted_keys(d)], _sorted_keys(d)))
register_pytree_with_keys(
    collections.OrderedDict, lambda d: (_dict_with_keys(tuple(d), d), tuple(d)),
    lambda keys, c: collections.OrderedDict(zip(keys, c)))
register_pytree_with_keys(
    collections.defaultdict,
    lambda d: (_dict_with_keys(_sorted_keys(d), d), (d.default_factory, _sorted_keys(d))),
    lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)))
register_pytree_with_keys(type(None), lambda _: ((), None), lambda _, __: None)


_namedtuple_kinds: dict[type, _NodeKind] = {}


def _namedtuple_kind(cls) -> _NodeKind:
    kind = _namedtuple_kinds.get(cls)
    if kind is None:
        kind = _namedtuple_kinds[cls] = _NodeKind(
            lambda t: (tuple(t), None), lambda _, c: cls(*c),
            lambda t: ([(GetAttrKey(f), v) for f, v in zip(cls._fields, t)], None))
    return kind


def _is_namedtuple_type(cls) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def _kind_of_type(node_type):
    """The node kind of ``node_type``, or None if its instances are leaves."""
    kind = _registry.get(node_type)
    if kind is None and _is_namedtuple_type(node_type):
        kind = _namedtuple_kind(node_type)
    return kind
