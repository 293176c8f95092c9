"""One level of a pytree and the registry object, as ``jax.tree_util``: ``flatten_one_level``,
``flatten_one_level_with_keys``, ``is_tree_node``, ``default_registry``, and the ``KeyEntry`` /
``KeyPath`` types. Users' view (``tree_util``): typed PRNG keys are leaves here too."""
from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable, Tuple, TypeVar

from ptojax.pytree import PyTreeDef, tree_flatten, tree_flatten_with_path
from ptojax.pytree_nodes import (USER_LEAF_TYPES, _is_namedtuple_type, _kind_of_type,
                                 register_dataclass, register_pytree_node)

KeyEntry = TypeVar("KeyEntry", bound=Hashable)
KeyEntry.__doc__ = "A key of one child of a pytree node (``SequenceKey``, ``DictKey``, ...)."
KeyPath = Tuple[KeyEntry, ...]
KeyPath.__doc__ = """The path of keys from a pytree's root to a leaf (a tuple of ``KeyEntry``).

Example:
  >>> [path for path, _ in pto.tree_util.tree_flatten_with_path({"a": [1]})[0]]
  [(DictKey(key='a'), SequenceKey(idx=0))]
"""


def _node_kind(tree):
    """``tree``'s node kind, or None if it is a leaf in users' view."""
    if type(tree) in USER_LEAF_TYPES:
        return None
    return _kind_of_type(type(tree))


def _not_a_node(tree) -> ValueError:
    return ValueError(f"can't tree-flatten type: {type(tree)}")


def _aux_data(tree, data):
    # a namedtuple's auxiliary data is its class, as in JAX (ptojax keeps it in the node type)
    return type(tree) if _is_namedtuple_type(type(tree)) else data


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """The children of the pytree node ``tree`` (not flattened further) and its auxiliary
    data.

    Raises:
      ValueError: if ``tree`` is a leaf (not a built-in or registered node type).

    Example:
      >>> pto.tree_util.flatten_one_level({"a": 1, "b": [2]})
      ((1, [2]), ('a', 'b'))
    """
    return _one_level(tree, lambda kind: kind.flatten(tree))


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """``flatten_one_level`` with each child paired with its key:
    ``([(key, child), ...], aux_data)``.

    Raises:
      ValueError: if ``tree`` is a leaf.

    Example:
      >>> pto.tree_util.flatten_one_level_with_keys([1, (2, 3)])
      ([(SequenceKey(idx=0), 1), (SequenceKey(idx=1), (2, 3))], None)
    """
    return _one_level(tree, lambda kind: kind.flatten_with_keys(tree))


def _one_level(tree, flatten):
    """``(flatten(tree's node kind)'s children, aux_data)``; a dict's children as a tuple."""
    kind = _node_kind(tree)
    if kind is None:
        raise _not_a_node(tree)
    children, data = flatten(kind)
    if isinstance(tree, dict):
        children = tuple(children)
    return children, _aux_data(tree, data)


def is_tree_node(typ: type) -> bool:
    """Whether the type ``typ`` is a pytree node type (built-in, registered or a namedtuple).

    Raises:
      TypeError: if ``typ`` is not a type.

    Example:
      >>> pto.tree_util.is_tree_node(dict), pto.tree_util.is_tree_node(int)
      (True, False)
    """
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node(typ) takes a type, got {typ!r} of type "
                        f"{type(typ).__name__}; pass type(x)")
    return typ not in USER_LEAF_TYPES and _kind_of_type(typ) is not None


class PyTreeRegistry:
    """The pytree registry as an object (``jax.tree_util.default_registry``); ptojax has one
    registry, this one, so every method acts on the global registry."""

    def flatten(self, tree, leaf_predicate: Callable | None = None):
        """``(leaves, treedef)``, as ``tree_util.tree_flatten``."""
        return tree_flatten(tree, lambda x: type(x) in USER_LEAF_TYPES or (
            leaf_predicate is not None and leaf_predicate(x)))

    def flatten_with_path(self, tree, leaf_predicate: Callable | None = None):
        """``([(path, leaf), ...], treedef)``; ``leaf_predicate(path, x)`` may stop the
        descent, as in JAX's registry method."""
        if leaf_predicate is None:
            return tree_flatten_with_path(tree, lambda x: type(x) in USER_LEAF_TYPES)
        pairs: list = []
        return pairs, _flatten_with_path(tree, (), pairs, leaf_predicate)

    def flatten_one_level(self, tree):
        """``flatten_one_level(tree)``, or None for a leaf."""
        return None if _node_kind(tree) is None else flatten_one_level(tree)

    def flatten_one_level_with_keys(self, tree):
        """``flatten_one_level_with_keys(tree)``, or None for a leaf."""
        return None if _node_kind(tree) is None else flatten_one_level_with_keys(tree)

    def is_node(self, type: type) -> bool:   # noqa: A002 (JAX's parameter name)
        """``is_tree_node(type)``."""
        return is_tree_node(type)

    def register_node(self, type, to_iterable, from_iterable,   # noqa: A002
                      to_iterable_with_keys=None) -> None:
        """``register_pytree_node``."""
        register_pytree_node(type, to_iterable, from_iterable, to_iterable_with_keys)

    def register_dataclass_node(self, type, data_fields, meta_fields, /) -> None:  # noqa: A002
        """``register_dataclass`` with explicit fields."""
        register_dataclass(type, list(data_fields), list(meta_fields))

    def __repr__(self):
        return "PyTreeRegistry(ptojax's one pytree registry)"


def _flatten_with_path(node, path, pairs, leaf_predicate):
    kind = None if leaf_predicate(path, node) else _node_kind(node)
    if kind is None:
        pairs.append((path, node))
        return _LEAF
    keyed, _ = kind.flatten_with_keys(node)
    children = [_flatten_with_path(c, path + (k,), pairs, leaf_predicate) for k, c in keyed]
    return PyTreeDef(type(node), kind.flatten(node)[1], tuple(children))


_LEAF = PyTreeDef(None, None, ())
default_registry = PyTreeRegistry()
