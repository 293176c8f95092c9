"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes; the view
transforms take (``ptojax.tree_util`` is the users' view, which differs only in that the types
registered with ``register_user_leaf``, typed PRNG keys, are leaves there).

A pytree flattens to a list of leaves and a ``PyTreeDef`` that can rebuild it. Treedefs are
hashable and cheap to compare, because jit keys its cache on them. ``None`` is a node with no
children (not a leaf); dict children are ordered by sorted key, OrderedDict children by
insertion order. Every child has a key (``SequenceKey``, ``DictKey``, ``GetAttrKey`` or
``FlattenedIndexKey``), so every leaf has a path.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any, Callable, NamedTuple

from ptojax.errors import PtoError
from ptojax.public import add_examples, dir_function


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


# ---------------------------------------------------------------------------------------------
class PyTreeDef:
    """The structure of a pytree: node type, its auxiliary data and the children's treedefs."""
    __slots__ = ("node_type", "node_data", "child_defs", "num_leaves", "num_nodes", "_hash")

    def __init__(self, node_type, node_data, child_defs):
        self.node_type = node_type          # None for a leaf
        self.node_data = node_data
        self.child_defs = child_defs
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in child_defs)
        self.num_nodes = 1 + sum(c.num_nodes for c in child_defs)
        self._hash = None

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.node_type, _hashable(self.node_data), self.child_defs))
        return self._hash

    def __eq__(self, other):
        return (self is other) or (isinstance(other, PyTreeDef) and hash(self) == hash(other)
                                   and self.node_type is other.node_type
                                   and self.node_data == other.node_data
                                   and self.child_defs == other.child_defs)

    def children(self) -> list:
        """The treedefs of this node's children."""
        return list(self.child_defs)

    @property
    def is_leaf(self) -> bool:
        return self.node_type is None

    def unflatten(self, leaves):
        """The pytree of this structure with ``leaves`` in order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise PtoError(f"tree_unflatten: the structure {self} has {self.num_leaves} "
                           f"leaves but {len(leaves)} values were given")
        return self._build(iter(leaves))

    def _build(self, it):
        if self.node_type is None:
            return next(it)
        children = [c._build(it) for c in self.child_defs]
        return _kind_of_type(self.node_type).unflatten(self.node_data, children)

    def flatten_up_to(self, tree) -> list:
        """The subtrees of ``tree`` at this treedef's leaves (``self`` must be a prefix of
        ``tree``'s structure)."""
        out = []
        self._up_to(tree, out, ())
        return out

    def _up_to(self, tree, out, path):
        if self.node_type is None:
            out.append(tree)
            return
        where = keystr(path) or "the root"
        if type(tree) is not self.node_type:
            raise ValueError(f"pytree structure mismatch at {where}: expected "
                             f"{self.node_type.__name__}, got {type(tree).__name__}")
        pairs, data = _kind_of_type(self.node_type).flatten_with_keys(tree)
        if len(pairs) != len(self.child_defs) or data != self.node_data:
            raise ValueError(f"pytree structure mismatch at {where}: expected "
                             f"{self}, got {tree_structure(tree)}")
        for c, (key, sub) in zip(self.child_defs, pairs):
            c._up_to(sub, out, path + (key,))

    def __repr__(self):
        return f"PyTreeDef({self._str()})"

    def _str(self):
        if self.node_type is None:
            return "*"
        inner = ", ".join(c._str() for c in self.child_defs)
        if self.node_type is tuple:
            return f"({inner}{',' if len(self.child_defs) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c._str()}"
                                   for k, c in zip(self.node_data, self.child_defs)) + "}"
        if self.node_type is type(None):
            return "None"
        # as JAX prints other nodes: CustomNode(name[aux data], [children])
        name = self.node_type.__name__
        label = f"namedtuple[{name}]" if _is_namedtuple_type(self.node_type) \
            else f"{name}[{self.node_data}]"
        return f"CustomNode({label}, [{inner}])"


def unflattener(treedef: PyTreeDef) -> Callable:
    """``treedef.unflatten`` as one generated expression over the leaf list (no recursion,
    no checks): what a cached ``jit`` call builds its outputs with."""
    env: dict = {}

    def expression(node, counter) -> str:
        if node.node_type is None:
            counter[0] += 1
            return f"L[{counter[0] - 1}]"
        children = [expression(c, counter) for c in node.child_defs]
        if node.node_type is tuple:
            return f"({''.join(c + ', ' for c in children)})"
        if node.node_type is list:
            return f"[{', '.join(children)}]"
        if node.node_type is type(None):
            return "None"
        n = len(env)
        env[f"D{n}"] = node.node_data
        if node.node_type is dict:   # node_data: the sorted keys
            return "{" + ", ".join(f"D{n}[{i}]: {c}" for i, c in enumerate(children)) + "}"
        env[f"U{n}"] = _kind_of_type(node.node_type).unflatten
        return f"U{n}(D{n}, [{', '.join(children)}])"
    try:
        source = f"lambda L: {expression(treedef, [0])}"
        return eval(compile(source, "<ptojax unflattener>", "eval"), env)
    except (SyntaxError, RecursionError, MemoryError):   # nested beyond the parser's limits
        return treedef.unflatten


def _hashable(x):
    try:
        hash(x)
        return x
    except TypeError:
        return repr(x)


_LEAF = PyTreeDef(None, None, ())


# ---------------------------------------------------------------------------------------------
def tree_flatten(tree, is_leaf: Callable | None = None):
    """``(leaves, treedef)``; ``is_leaf(x)`` may stop the descent at chosen subtrees."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(node, leaves, is_leaf):
    kind = None if is_leaf is not None and is_leaf(node) else _kind_of_type(type(node))
    if kind is None:
        leaves.append(node)
        return _LEAF
    children, data = kind.flatten(node)
    return PyTreeDef(type(node), data, tuple(_flatten(c, leaves, is_leaf) for c in children))


def tree_flatten_with_path(tree, is_leaf: Callable | None = None):
    """``([(path, leaf), ...], treedef)`` where a path is a tuple of keys."""
    pairs = []
    return pairs, _flatten_with_path(tree, (), pairs, is_leaf)


def _flatten_with_path(node, path, pairs, is_leaf):
    kind = None if is_leaf is not None and is_leaf(node) else _kind_of_type(type(node))
    if kind is None:
        pairs.append((path, node))
        return _LEAF
    keyed, data = kind.flatten_with_keys(node)
    return PyTreeDef(type(node), data, tuple(_flatten_with_path(c, path + (k,), pairs, is_leaf)
                                             for k, c in keyed))


def tree_leaves_with_path(tree, is_leaf: Callable | None = None) -> list:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_unflatten(treedef: PyTreeDef, leaves):
    return treedef.unflatten(leaves)


def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf: Callable | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """``f`` applied leafwise to ``tree`` and the corresponding subtrees of ``rest`` (each of
    which must have ``tree``'s structure, or a structure ``tree`` is a prefix of)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(*xs) for xs in zip(leaves, *others))


def tree_map_with_path(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """Like ``tree_map``, with each leaf's key path as ``f``'s first argument."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(f(path, x, *xs) for (path, x), *xs in zip(pairs, *others))


_NO_INITIALIZER = object()


def tree_reduce(f: Callable, tree, initializer=_NO_INITIALIZER,
                is_leaf: Callable | None = None):
    """``functools.reduce(f, leaves[, initializer])``."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(f, leaves)
    return functools.reduce(f, leaves, initializer)


def tree_all(tree, is_leaf: Callable | None = None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef, pytree_to_transpose):
    """Turn a tree of structure ``outer`` of trees of structure ``inner`` into a tree of
    structure ``inner`` of trees of structure ``outer``."""
    outer_leaves = outer_treedef.flatten_up_to(pytree_to_transpose)
    per_outer = [inner_treedef.flatten_up_to(sub) for sub in outer_leaves]
    per_inner = [outer_treedef.unflatten(column) for column in zip(*per_outer)] \
        if per_outer else [outer_treedef.unflatten([])] * inner_treedef.num_leaves
    return inner_treedef.unflatten(per_inner)


def treedef_children(treedef: PyTreeDef) -> list:
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.is_leaf


def treedef_tuple(treedefs) -> PyTreeDef:
    """The treedef of a tuple whose children have ``treedefs``."""
    return PyTreeDef(tuple, None, tuple(treedefs))


def all_leaves(iterable, is_leaf: Callable | None = None) -> bool:
    """True if every element of ``iterable`` is a leaf."""
    return all(tree_structure(x, is_leaf).is_leaf for x in iterable)


def tree_broadcast(prefix_tree, full_tree, is_leaf: Callable | None = None):
    """``prefix_tree`` with each of its leaves repeated over the leaves of the corresponding
    subtree of ``full_tree`` (so the result has ``full_tree``'s structure)."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees = prefix_def.flatten_up_to(full_tree)
    return prefix_def.unflatten(tree_map(lambda _: leaf, sub, is_leaf=is_leaf)
                                for leaf, sub in zip(prefix_leaves, subtrees))


def tree_reduce_associative(operation: Callable, tree, *, identity=_NO_INITIALIZER,
                            is_leaf: Callable | None = None):
    """The leaves combined with the associative ``operation`` pairwise, in a balanced tree
    (depth log2 of the number of leaves); ``identity`` is returned for a tree without
    leaves (which otherwise is an error)."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _NO_INITIALIZER:
            raise TypeError("tree_reduce_associative: the tree has no leaves; pass identity=")
        return identity
    while len(leaves) > 1:
        pairs = [operation(a, b) for a, b in zip(leaves[::2], leaves[1::2])]
        leaves = pairs + ([leaves[-1]] if len(leaves) % 2 else [])
    return leaves[0]


def static(**kwargs):
    """A ``dataclasses.field`` marked static (``metadata={"static": True}``), for classes
    registered with ``register_dataclass``."""
    metadata = dict(kwargs.pop("metadata", None) or {}, static=True)
    return dataclasses.field(metadata=metadata, **kwargs)


class Partial(functools.partial):
    """``functools.partial`` as a pytree (JAX's ``tree_util.Partial``): the bound positional
    and keyword arguments are its children and the function its static part, so a Partial
    can be passed to and returned from ``jit``ted functions and transformed."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):   # one level, as functools.partial does
            original = func
            func = _HashableFunction(original)
            out = super().__new__(cls, func, *args, **kw)
            func.func = original.func
            func.args = original.args
            func.keywords = original.keywords
            return out
        return super().__new__(cls, func, *args, **kw)


class _HashableFunction:
    """A partial's own partial, kept as one static function (hashable by identity)."""

    def __init__(self, partial):
        self._partial = partial

    def __call__(self, *args, **kw):
        return self._partial(*args, **kw)


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))


__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "Partial", "PyTreeDef", "SequenceKey", "all_leaves",
           "keystr", "register_dataclass", "register_pytree_node", "register_pytree_node_class",
           "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static",
           "tree_all", "tree_broadcast", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
           "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce",
           "tree_reduce_associative", "tree_structure", "tree_transpose", "tree_unflatten",
           "treedef_children", "treedef_is_leaf", "treedef_tuple"]
__dir__ = dir_function(__all__)


add_examples(globals(), """
Partial:
    >>> add_one = pto.tree_util.Partial(pnp.add, 1.0)
    >>> pto.jit(lambda f, x: f(x))(add_one, 2.0)
    Array(3., dtype=float32, weak_type=True)
DictKey: The key of a dict entry in a key path (``key`` is the dict key).
    >>> pto.tree_util.DictKey('a')
    DictKey(key='a')
FlattenedIndexKey: The key of the ``key``-th child of a node registered without keys.
    >>> pto.tree_util.FlattenedIndexKey(0)
    FlattenedIndexKey(key=0)
GetAttrKey: The key of an attribute ``name`` (dataclasses, named tuples) in a key path.
    >>> pto.tree_util.GetAttrKey('x')
    GetAttrKey(name='x')
SequenceKey: The key of the ``idx``-th element of a list or tuple in a key path.
    >>> pto.tree_util.SequenceKey(1)
    SequenceKey(idx=1)
PyTreeDef:
    >>> pto.tree_util.tree_structure([1, (2, 3)])
    PyTreeDef([*, (*, *)])
all_leaves:
    >>> pto.tree_util.all_leaves([1, 2.0])
    True
    >>> pto.tree_util.all_leaves([[1], 2.0])
    False
keystr:
    >>> pto.tree_util.keystr((pto.tree_util.DictKey('a'), pto.tree_util.SequenceKey(0)))
    "['a'][0]"
tree_all: Whether every leaf of ``tree`` is truthy.
    >>> pto.tree_util.tree_all([True, {'x': 1}])
    True
    >>> pto.tree_util.tree_all([True, 0])
    False
tree_broadcast:
    >>> pto.tree_util.tree_broadcast([1, 2], [(0, 0), 3])
    [(1, 1), 2]
tree_flatten:
    >>> pto.tree_util.tree_flatten({'a': [1, 2], 'b': (3, None)})[0]
    [1, 2, 3]
tree_flatten_with_path:
    >>> pto.tree_util.tree_flatten_with_path({'a': [1, 2]})[0]
    [((DictKey(key='a'), SequenceKey(idx=0)), 1), ((DictKey(key='a'), SequenceKey(idx=1)), 2)]
tree_leaves: The leaves of ``tree`` in flattening order (``None`` is an empty subtree, not a
    leaf); ``is_leaf(x)`` may stop the descent at ``x``.
    >>> pto.tree_util.tree_leaves({'a': [1, 2], 'b': (3, None)})
    [1, 2, 3]
tree_leaves_with_path: ``[(path, leaf), ...]``: each leaf of ``tree`` with its key path.
    >>> pto.tree_util.tree_leaves_with_path({'a': [1, 2]})
    [((DictKey(key='a'), SequenceKey(idx=0)), 1), ((DictKey(key='a'), SequenceKey(idx=1)), 2)]
tree_map:
    >>> pto.tree_util.tree_map(lambda x: x * 10, {'a': [1, 2], 'b': (3, None)})
    {'a': [10, 20], 'b': (30, None)}
tree_map_with_path:
    >>> pto.tree_util.tree_map_with_path(lambda p, x: pto.tree_util.keystr(p), {'a': [1, 2]})
    {'a': ["['a'][0]", "['a'][1]"]}
tree_reduce:
    >>> pto.tree_util.tree_reduce(lambda a, b: a + b, [1, (2, 3)])
    6
tree_reduce_associative:
    >>> pto.tree_util.tree_reduce_associative(lambda a, b: a * b, [1, (2, 3), 4])
    24
tree_structure: The ``PyTreeDef`` of ``tree``: its shape as a tree, without the leaves.
    >>> pto.tree_util.tree_structure({'a': [1, 2], 'b': (3, None)})
    PyTreeDef({'a': [*, *], 'b': (*, None)})
tree_transpose:
    >>> outer = pto.tree_util.tree_structure([0, 0])
    >>> inner = pto.tree_util.tree_structure((0, 0))
    >>> pto.tree_util.tree_transpose(outer, inner, [(1, 2), (3, 4)])
    ([1, 3], [2, 4])
tree_unflatten: The pytree of structure ``treedef`` with ``leaves`` in flattening order (the
    inverse of ``tree_flatten``).
    >>> leaves, treedef = pto.tree_util.tree_flatten([1, (2, 3)])
    >>> pto.tree_util.tree_unflatten(treedef, [x * 10 for x in leaves])
    [10, (20, 30)]
treedef_children: The treedefs of the children of the root of ``treedef``.
    >>> pto.tree_util.treedef_children(pto.tree_util.tree_structure([1, (2, 3)]))
    [PyTreeDef(*), PyTreeDef((*, *))]
treedef_is_leaf: Whether ``treedef`` is the structure of a single leaf.
    >>> pto.tree_util.treedef_is_leaf(pto.tree_util.tree_structure(1.0))
    True
treedef_tuple:
    >>> leaf, pair = pto.tree_util.tree_structure(1), pto.tree_util.tree_structure([1, 2])
    >>> pto.tree_util.treedef_tuple([leaf, pair])
    PyTreeDef((*, [*, *]))
register_dataclass:
    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Point:
    ...     x: float
    ...     y: float
    ...     name: str = pto.tree.static()
    >>> _ = pto.tree_util.register_dataclass(Point)
    >>> pto.tree_util.tree_leaves(Point(1.0, 2.0, 'p'))
    [1.0, 2.0]
register_pytree_node:
    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> _ = pto.tree_util.register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
    ...                                       lambda _, c: Pair(*c))
    >>> pto.tree_util.tree_leaves([Pair(1, 2), 3])
    [1, 2, 3]
register_pytree_node_class:
    >>> @pto.tree_util.register_pytree_node_class
    ... class Box:
    ...     def __init__(self, v):
    ...         self.v = v
    ...     def tree_flatten(self):
    ...         return (self.v,), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> pto.tree_util.tree_map(lambda v: v + 1, Box(1)).v
    2
register_pytree_with_keys:
    >>> class Named:
    ...     def __init__(self, w):
    ...         self.w = w
    >>> key = pto.tree_util.GetAttrKey('w')
    >>> _ = pto.tree_util.register_pytree_with_keys(Named, lambda n: (((key, n.w),), None),
    ...                                             lambda _, c: Named(*c))
    >>> pto.tree_util.tree_leaves_with_path(Named(5))
    [((GetAttrKey(name='w'),), 5)]
register_pytree_with_keys_class:
    >>> @pto.tree_util.register_pytree_with_keys_class
    ... class Cell:
    ...     def __init__(self, h):
    ...         self.h = h
    ...     def tree_flatten_with_keys(self):
    ...         return ((pto.tree_util.GetAttrKey('h'), self.h),), None
    ...     @classmethod
    ...     def tree_unflatten(cls, aux, children):
    ...         return cls(*children)
    >>> pto.tree_util.keystr(pto.tree_util.tree_leaves_with_path(Cell(0))[0][0])
    '.h'
register_static:
    >>> @pto.tree_util.register_static
    ... class Config:
    ...     pass
    >>> pto.tree_util.tree_leaves([Config(), 1])
    [1]
static:
    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class Layer:
    ...     w: float
    ...     act: str = pto.tree.static()
    >>> _ = pto.tree_util.register_dataclass(Layer)
    >>> pto.tree_util.tree_leaves(Layer(0.5, 'relu'))
    [0.5]
""")
