"""pto.tree_util's one-level functions and registry object against jax.tree_util:
flatten_one_level(_with_keys), is_tree_node, default_registry, KeyEntry/KeyPath."""
import collections
import typing

import pytest

import ptojax as pto
from ptojax import tree_util as tu

Point = collections.namedtuple("Point", ["x", "y"])

# nodes whose one-level flattening matches JAX's exactly (children as lists, aux data)
NODES = [
    {"b": 1, "a": (2, 3)},
    [1, [2]],
    (1, {"c": 3}),
    None,
    (),
    collections.OrderedDict(b=1, a=2),
    collections.defaultdict(list, b=1, a=2),
    Point(1, 2),
]


@pytest.mark.parametrize("tree", NODES, ids=lambda t: type(t).__name__)
def test_flatten_one_level_matches_jax(jax, tree):
    ours = tu.flatten_one_level(tree)
    theirs = jax.tree_util.flatten_one_level(tree)
    assert list(ours[0]) == list(theirs[0])
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("tree", NODES[:-1], ids=lambda t: type(t).__name__)
def test_flatten_one_level_with_keys_matches_jax(jax, tree):
    ours, aux = tu.flatten_one_level_with_keys(tree)
    theirs, jaux = jax.tree_util.flatten_one_level_with_keys(tree)
    assert [(str(k), c) for k, c in ours] == [(str(k), c) for k, c in theirs]
    assert aux == jaux


def test_namedtuple_keys_name_each_field():
    # (JAX 0.10.2 names both children GetAttrKey('x'); ptojax gives each its field)
    pairs, aux = tu.flatten_one_level_with_keys(Point(1, 2))
    assert pairs == [(tu.GetAttrKey("x"), 1), (tu.GetAttrKey("y"), 2)] and aux is Point


@pytest.mark.parametrize("leaf", [1, 1.5, "s", pto.numpy.ones(2)], ids=repr)
def test_leaves_cannot_be_flattened_one_level(jax, leaf):
    for fn in (tu.flatten_one_level, tu.flatten_one_level_with_keys):
        with pytest.raises(ValueError, match="can't tree-flatten type"):
            fn(leaf)
    assert tu.default_registry.flatten_one_level(leaf) is None
    assert tu.default_registry.flatten_one_level_with_keys(leaf) is None


def test_typed_prng_keys_are_leaves():
    key = pto.random.key(0)
    assert not tu.is_tree_node(type(key))
    with pytest.raises(ValueError):
        tu.flatten_one_level(key)


@pytest.mark.parametrize("typ", [int, float, type(None), tuple, list, dict,
                                 collections.OrderedDict, Point, "Partial"])
def test_is_tree_node_matches_jax(jax, typ):
    if typ == "Partial":   # each library's own Partial
        assert tu.is_tree_node(tu.Partial) and jax.tree_util.is_tree_node(jax.tree_util.Partial)
        return
    assert tu.is_tree_node(typ) == jax.tree_util.is_tree_node(typ)
    assert tu.default_registry.is_node(typ) == jax.tree_util.default_registry.is_node(typ)


def test_is_tree_node_takes_a_type(jax):
    assert not tu.is_tree_node(type(pto.numpy.ones(2)))
    with pytest.raises(TypeError):
        jax.tree_util.is_tree_node(None)
    with pytest.raises(TypeError, match="type"):
        tu.is_tree_node(None)


def test_registry_flattens_as_jax(jax):
    tree = {"a": [1, (2, None)], "b": Point(3, 4)}
    ours, jours = tu.default_registry, jax.tree_util.default_registry
    assert ours.flatten(tree)[0] == jours.flatten(tree)[0]
    assert ours.flatten(tree, lambda x: isinstance(x, list))[0] == \
        jours.flatten(tree, lambda x: isinstance(x, list))[0]
    paths = [(tu.keystr(p), v) for p, v in ours.flatten_with_path(tree)[0]]
    assert paths == [(jax.tree_util.keystr(p), v)
                     for p, v in jours.flatten_with_path(tree)[0]]
    stop_at_a = ours.flatten_with_path(tree, lambda path, x: tu.keystr(path) == "['a']")
    assert [v for _, v in stop_at_a[0]] == [[1, (2, None)], 3, 4]
    assert stop_at_a[1] == tu.tree_structure({"a": 0, "b": Point(0, 0)})


def test_registry_registers_nodes():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.default_registry.register_node(Pair, lambda p: ((p.a, p.b), None),
                                      lambda _, c: Pair(*c))
    assert tu.is_tree_node(Pair) and tu.tree_leaves(Pair(1, [2])) == [1, 2]

    class Cell:
        def __init__(self, value, name):
            self.value, self.name = value, name

    tu.default_registry.register_dataclass_node(Cell, ["value"], ["name"])
    children, _ = tu.flatten_one_level(Cell(5, "n"))
    assert list(children) == [5]


def test_key_types(jax):
    assert isinstance(tu.KeyEntry, typing.TypeVar)
    assert typing.get_origin(tu.KeyPath) is typing.get_origin(jax.tree_util.KeyPath) is tuple
    assert typing.get_args(tu.KeyPath) == (tu.KeyEntry, ...)
