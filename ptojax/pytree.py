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

import dataclasses
import functools
from typing import Callable

from ptojax.errors import PtoError
from ptojax.public import add_examples, dir_function
from ptojax.pytree_nodes import (DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey,
                                 USER_LEAF_TYPES, keystr, register_dataclass, register_pytree_node,
                                 register_pytree_node_class, register_pytree_with_keys,
                                 register_pytree_with_keys_class, register_static,
                                 register_user_leaf, _is_namedtuple_type, _kind_of_type,
                                 _registry)


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
