"""``pto.tree_util``: the pytree functions as ``jax.tree_util`` (``ptojax/pytree.py`` holds
them), in users' view: a type registered with ``pytree.register_user_leaf`` (typed PRNG keys)
is a leaf here, as in JAX, while the transforms look through it to its arrays. Everything else
is ``pytree``'s, unchanged."""
from __future__ import annotations

from typing import Callable

from ptojax import pytree as _pytree
from ptojax.pytree import (USER_LEAF_TYPES as _USER_LEAF_TYPES, DictKey, FlattenedIndexKey,
                           GetAttrKey, Partial, PyTreeDef, SequenceKey, keystr,
                           register_dataclass, register_pytree_node,
                           register_pytree_node_class, register_pytree_with_keys,
                           register_pytree_with_keys_class, register_static,
                           tree_transpose, tree_unflatten, treedef_children, treedef_is_leaf,
                           treedef_tuple)
from ptojax.public import dir_function
from ptojax.tree_registry import (KeyEntry, KeyPath, default_registry, flatten_one_level,
                                  flatten_one_level_with_keys, is_tree_node)

_NO_INITIALIZER = _pytree._NO_INITIALIZER


def _users_leaf(is_leaf):
    """``is_leaf`` widened to the user-leaf types."""
    if not _USER_LEAF_TYPES:
        return is_leaf
    if is_leaf is None:
        return lambda x: type(x) in _USER_LEAF_TYPES
    return lambda x: type(x) in _USER_LEAF_TYPES or is_leaf(x)


def _documented(fn):
    fn.__doc__ = getattr(_pytree, fn.__name__).__doc__
    return fn


@_documented
def tree_flatten(tree, is_leaf: Callable | None = None):
    return _pytree.tree_flatten(tree, _users_leaf(is_leaf))


@_documented
def tree_flatten_with_path(tree, is_leaf: Callable | None = None):
    return _pytree.tree_flatten_with_path(tree, _users_leaf(is_leaf))


@_documented
def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    return _pytree.tree_leaves(tree, _users_leaf(is_leaf))


@_documented
def tree_leaves_with_path(tree, is_leaf: Callable | None = None) -> list:
    return _pytree.tree_leaves_with_path(tree, _users_leaf(is_leaf))


@_documented
def tree_structure(tree, is_leaf: Callable | None = None) -> PyTreeDef:
    return _pytree.tree_structure(tree, _users_leaf(is_leaf))


@_documented
def tree_map(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    return _pytree.tree_map(f, tree, *rest, is_leaf=_users_leaf(is_leaf))


@_documented
def tree_map_with_path(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    return _pytree.tree_map_with_path(f, tree, *rest, is_leaf=_users_leaf(is_leaf))


@_documented
def tree_reduce(f: Callable, tree, initializer=_NO_INITIALIZER,
                is_leaf: Callable | None = None):
    return _pytree.tree_reduce(f, tree, initializer, _users_leaf(is_leaf))


@_documented
def tree_all(tree, is_leaf: Callable | None = None) -> bool:
    return _pytree.tree_all(tree, _users_leaf(is_leaf))


@_documented
def all_leaves(iterable, is_leaf: Callable | None = None) -> bool:
    return _pytree.all_leaves(iterable, _users_leaf(is_leaf))


@_documented
def tree_broadcast(prefix_tree, full_tree, is_leaf: Callable | None = None):
    return _pytree.tree_broadcast(prefix_tree, full_tree, _users_leaf(is_leaf))


@_documented
def tree_reduce_associative(operation: Callable, tree, *, identity=_NO_INITIALIZER,
                            is_leaf: Callable | None = None):
    return _pytree.tree_reduce_associative(operation, tree, identity=identity,
                                           is_leaf=_users_leaf(is_leaf))


__all__ = ["DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath", "Partial",
           "PyTreeDef", "SequenceKey", "all_leaves", "default_registry", "flatten_one_level",
           "flatten_one_level_with_keys", "is_tree_node", "keystr", "register_dataclass", "register_pytree_node",
           "register_pytree_node_class", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "register_static", "tree_all", "tree_broadcast",
           "tree_flatten", "tree_flatten_with_path", "tree_leaves", "tree_leaves_with_path",
           "tree_map", "tree_map_with_path", "tree_reduce", "tree_reduce_associative",
           "tree_structure", "tree_transpose", "tree_unflatten", "treedef_children",
           "treedef_is_leaf", "treedef_tuple"]
__dir__ = dir_function(__all__)
