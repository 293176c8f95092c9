"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes.

A pytree flattens to a list of leaves and a ``PyTreeDef`` that can rebuild it. Treedefs are
hashable and cheap to compare, because jit keys its cache on them.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple

from ptojax.errors import PtoError


class _NodeKind(NamedTuple):
    flatten: Callable      # node -> (children, aux_data)
    unflatten: Callable    # (aux_data, children) -> node
    keys: Callable         # (node, aux_data) -> [key, ...] naming each child


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


def keystr(path) -> str:
    return "".join(str(k) for k in path)


_registry: dict[type, _NodeKind] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Register ``nodetype``: ``flatten_func(x) -> (children, aux)``,
    ``unflatten_func(aux, children) -> x``."""
    if nodetype in _registry:
        raise ValueError(f"{nodetype.__name__} is already registered as a pytree node")

    def keys(node, aux):
        if flatten_with_keys_func is not None:
            return [k for k, _ in flatten_with_keys_func(node)[0]]
        return [FlattenedIndexKey(i) for i in range(len(flatten_func(node)[0]))]

    _registry[nodetype] = _NodeKind(flatten_func, unflatten_func, keys)


def register_pytree_node_class(cls):
    """Class decorator: ``cls.tree_flatten()`` and ``cls.tree_unflatten(aux, children)``."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass; fields with ``metadata={"static": True}`` are metadata (part of the
    treedef), the others are children. Usable as a decorator."""
    if data_fields is None:
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields or ())

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(meta, children):
        return nodetype(**dict(zip(data_fields, children)), **dict(zip(meta_fields, meta)))

    def with_keys(x):
        return [(GetAttrKey(n), getattr(x, n)) for n in data_fields], flatten(x)[1]

    register_pytree_node(nodetype, flatten, unflatten, with_keys)
    return nodetype


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c),
                     lambda t: ([(SequenceKey(i), v) for i, v in enumerate(t)], None))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c),
                     lambda t: ([(SequenceKey(i), v) for i, v in enumerate(t)], None))


def _dict_flatten(d):
    keys = tuple(sorted(d)) if len(d) > 1 else tuple(d)
    return [d[k] for k in keys], keys


register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)),
                     lambda d: ([(DictKey(k), v) for k, v in zip(*reversed(_dict_flatten(d)))],
                                None))
register_pytree_node(type(None), lambda _: ((), None), lambda _, __: None,
                     lambda _: ((), None))


def _kind(node):
    kind = _registry.get(type(node))
    if kind is None and isinstance(node, tuple) and hasattr(type(node), "_fields"):
        kind = _namedtuple_kind(type(node))
    return kind


_namedtuple_kinds: dict[type, _NodeKind] = {}


def _namedtuple_kind(cls):
    kind = _namedtuple_kinds.get(cls)
    if kind is None:
        kind = _NodeKind(lambda t: (tuple(t), None), lambda _, c: cls(*c),
                         lambda t, _: [GetAttrKey(f) for f in cls._fields])
        _namedtuple_kinds[cls] = kind
    return kind


class PyTreeDef:
    """The structure of a pytree: node type, its auxiliary data and the children's treedefs."""
    __slots__ = ("node_type", "node_data", "children", "num_leaves", "num_nodes", "_hash")

    def __init__(self, node_type, node_data, children):
        self.node_type = node_type          # None for a leaf
        self.node_data = node_data
        self.children = children
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children)
        self.num_nodes = 1 + sum(c.num_nodes for c in children)
        self._hash = None

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.node_type, _hashable(self.node_data), self.children))
        return self._hash

    def __eq__(self, other):
        return (self is other) or (isinstance(other, PyTreeDef) and hash(self) == hash(other)
                                   and self.node_type is other.node_type
                                   and self.node_data == other.node_data
                                   and self.children == other.children)

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise PtoError(f"tree_unflatten: the structure {self} has {self.num_leaves} "
                           f"leaves but {len(leaves)} values were given")
        it = iter(leaves)
        return self._build(it)

    def _build(self, it):
        if self.node_type is None:
            return next(it)
        children = [c._build(it) for c in self.children]
        return _kind_of_type(self.node_type).unflatten(self.node_data, children)

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this treedef's leaves (``self`` must be a prefix)."""
        out = []
        self._up_to(tree, out, ())
        return out

    def _up_to(self, tree, out, path):
        if self.node_type is None:
            out.append(tree)
            return
        kind = _kind(tree)
        if type(tree) is not self.node_type:
            raise ValueError(f"at {keystr(path) or 'the root'}: expected "
                             f"{self.node_type.__name__}, got {type(tree).__name__}")
        children, data = kind.flatten(tree)
        if data != self.node_data or len(children) != len(self.children):
            raise ValueError(f"at {keystr(path) or 'the root'}: structures differ "
                             f"({self} vs {tree_structure(tree)})")
        keys = kind.keys(tree, data)
        for c, sub, k in zip(self.children, children, keys):
            c._up_to(sub, out, path + (k,))

    @property
    def is_leaf(self):
        return self.node_type is None

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        if self.node_type is None:
            return "*"
        inner = ", ".join(c._str() for c in self.children)
        if self.node_type is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c._str()}"
                                   for k, c in zip(self.node_data, self.children)) + "}"
        if self.node_type is type(None):
            return "None"
        return f"{self.node_type.__name__}({inner})"


def _hashable(x):
    try:
        hash(x)
        return x
    except TypeError:
        return repr(x)


def _kind_of_type(node_type):
    kind = _registry.get(node_type)
    return kind if kind is not None else _namedtuple_kind(node_type)


_LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree, is_leaf: Callable | None = None):
    """``(leaves, treedef)``."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(node, leaves, is_leaf):
    if is_leaf is not None and is_leaf(node):
        leaves.append(node)
        return _LEAF
    kind = _kind(node)
    if kind is None:
        leaves.append(node)
        return _LEAF
    children, data = kind.flatten(node)
    return PyTreeDef(type(node), data, tuple(_flatten(c, leaves, is_leaf) for c in children))


def tree_flatten_with_path(tree, is_leaf: Callable | None = None):
    """``([(path, leaf), ...], treedef)`` where a path is a tuple of keys."""
    out = []

    def visit(node, path):
        if is_leaf is not None and is_leaf(node):
            out.append((path, node))
            return
        kind = _kind(node)
        if kind is None:
            out.append((path, node))
            return
        children, data = kind.flatten(node)
        for k, c in zip(kind.keys(node, data), children):
            visit(c, path + (k,))

    visit(tree, ())
    return out, tree_structure(tree, is_leaf)


def tree_unflatten(treedef: PyTreeDef, leaves):
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf=None):
    """``f`` applied leafwise; every tree in ``rest`` must have ``tree``'s structure (or deeper)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def tree_map_with_path(f: Callable, tree, *rest, is_leaf=None):
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(p, x, *xs) for (p, x), *xs in zip(pairs, *others))


def tree_reduce(f: Callable, tree, initializer=None, is_leaf=None):
    import functools
    leaves = tree_leaves(tree, is_leaf)
    return functools.reduce(f, leaves) if initializer is None else \
        functools.reduce(f, leaves, initializer)


def tree_all(tree) -> bool:
    return all(tree_leaves(tree))


def treedef_children(treedef: PyTreeDef):
    return list(treedef.children)


def treedef_tuple(treedefs) -> PyTreeDef:
    return PyTreeDef(tuple, None, tuple(treedefs))


def all_leaves(iterable) -> bool:
    return all(_kind(x) is None for x in iterable)
