"""pto.tree_util against jax.tree_util: flattening, structures, key paths, tree_map and the
ways of registering custom nodes."""
import collections
import dataclasses

import numpy as np
import pytest
from hypothesis import given, strategies as st

import ptojax as pto
import ptojax.numpy as pnp
from ptojax import tree_util as tu
from ptojax.errors import PtoError

Point = collections.namedtuple("Point", ["x", "y"])


class Box:
    """A custom node: two children and a static label."""

    def __init__(self, a, b, label="box"):
        self.a, self.b, self.label = a, b, label

    def tree_flatten(self):
        return (self.a, self.b), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(*children, label=label)

    def __eq__(self, other):
        return type(other) is Box and (self.a, self.b, self.label) == (other.a, other.b,
                                                                       other.label)


class KeyedBox(Box):
    """Registered with keys: its children's paths read ``.a`` and ``.b``."""

    def tree_flatten_with_keys(self):
        return ((tu.GetAttrKey("a"), self.a), (tu.GetAttrKey("b"), self.b)), self.label


@dataclasses.dataclass
class Params:
    weight: object
    bias: object
    name: str = dataclasses.field(default="dense", metadata={"static": True})


@dataclasses.dataclass
class Explicit:
    data: object
    size: int


@pytest.fixture(scope="module")
def jtu(jax):
    """jax.tree_util, with the test classes registered there too."""
    jtu = jax.tree_util
    jtu.register_pytree_node_class(Box)
    jtu.register_pytree_with_keys(  # with JAX's own key type, so keystr(simple=True) works
        KeyedBox, lambda x: (((jtu.GetAttrKey("a"), x.a), (jtu.GetAttrKey("b"), x.b)), x.label),
        KeyedBox.tree_unflatten)
    jtu.register_dataclass(Params)
    jtu.register_dataclass(Explicit, data_fields=["data"], meta_fields=["size"])
    return jtu


tu.register_pytree_node_class(Box)
tu.register_pytree_with_keys_class(KeyedBox)
tu.register_dataclass(Params)
tu.register_dataclass(Explicit, data_fields=["data"], meta_fields=["size"])

TREES = {
    "leaf": 1,
    "none": None,
    "empty_tuple": (),
    "empty_list": [],
    "empty_dict": {},
    "singleton": (1,),
    "nested": [1, (2, 3), [4, [5]]],
    "dict": {"b": 1, "a": [2, 3], "c": {"z": 4, "y": None}},
    "int_keys": {3: "x", 1: "y", 2: ("z",)},
    "namedtuple": Point(1, (2, 3)),
    "nones": {"x": None, "y": (None, 4)},
    "ordered_dict": collections.OrderedDict([("b", 1), ("a", 2)]),
    "defaultdict": collections.defaultdict(list, {"b": 1, "a": (2, 3)}),
    "custom": Box([1, 2], {"k": 3}, label="first"),
    "keyed_custom": KeyedBox(1, (2, 3)),
    "dataclass": Params(np.float32(1.5), [2, 3]),
    "explicit_dataclass": Explicit((1, 2), size=7),
    "mixed": {"p": Params(1, None), "pts": [Point(1, 2), Point(3, 4)], "t": (Box(5, 6),)},
}
IDS = list(TREES)


@pytest.mark.parametrize("name", IDS)
def test_flatten_matches_jax(jtu, name):
    tree = TREES[name]
    leaves, treedef = tu.tree_flatten(tree)
    j_leaves, j_treedef = jtu.tree_flatten(tree)
    assert leaves == j_leaves
    assert (treedef.num_leaves, treedef.num_nodes) == (j_treedef.num_leaves,
                                                       j_treedef.num_nodes)
    assert tu.tree_leaves(tree) == jtu.tree_leaves(tree)


@pytest.mark.parametrize("name", IDS)
def test_unflatten_round_trips(name):
    tree = TREES[name]
    leaves, treedef = tu.tree_flatten(tree)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert type(rebuilt) is type(tree)
    assert tu.tree_structure(rebuilt) == treedef
    assert tu.tree_leaves(rebuilt) == leaves


@pytest.mark.parametrize("name", IDS)
def test_paths_match_jax(jtu, name):
    tree = TREES[name]
    ours = [(tu.keystr(p), leaf) for p, leaf in tu.tree_flatten_with_path(tree)[0]]
    theirs = [(jtu.keystr(p), leaf) for p, leaf in jtu.tree_flatten_with_path(tree)[0]]
    assert ours == theirs
    simple = [tu.keystr(p, simple=True, separator="/")
              for p, _ in tu.tree_leaves_with_path(tree)]
    assert simple == [jtu.keystr(p, simple=True, separator="/")
                      for p, _ in jtu.tree_leaves_with_path(tree)]


@pytest.mark.parametrize("name", IDS)
def test_tree_map_matches_jax(jtu, name):
    tree = TREES[name]
    double = lambda x: x * 2  # noqa: E731
    assert tu.tree_leaves(tu.tree_map(double, tree)) == jtu.tree_leaves(jtu.tree_map(double,
                                                                                      tree))
    with_path = lambda p, x: (tu.keystr(p), x)  # noqa: E731
    j_with_path = lambda p, x: (jtu.keystr(p), x)  # noqa: E731
    assert tu.tree_leaves(tu.tree_map_with_path(with_path, tree)) == jtu.tree_leaves(
        jtu.tree_map_with_path(j_with_path, tree))


def test_treedef_text_matches_jax_for_builtin_containers(jtu):
    for tree in ({"b": 1, "a": (2, None, [3])}, [1, (2,)], (), None, 5, [{}]):
        assert repr(tu.tree_structure(tree)) == repr(jtu.tree_structure(tree))


@pytest.mark.parametrize("name", ["namedtuple", "ordered_dict", "defaultdict", "custom",
                                  "keyed_custom", "mixed"])
def test_treedef_text_of_custom_nodes_matches_jax(jtu, name):
    """Namedtuples and registered classes print as JAX's ``CustomNode(name[aux], [...])``."""
    assert repr(tu.tree_structure(TREES[name])) == repr(jtu.tree_structure(TREES[name]))


def test_tree_map_over_several_trees_and_prefixes(jtu):
    add = lambda *xs: sum(xs)  # noqa: E731
    a, b, c = {"x": 1, "y": (2, 3)}, {"y": (20, 30), "x": 10}, {"x": 100, "y": (200, 300)}
    assert tu.tree_map(add, a, b, c) == jtu.tree_map(add, a, b, c) == {"x": 111,
                                                                       "y": (222, 333)}
    pair = lambda x, y: (x, y)  # noqa: E731
    prefix, full = [1, 2], [(1, 2), {"k": 3}]
    assert tu.tree_map(pair, prefix, full) == jtu.tree_map(pair, prefix, full)


@pytest.mark.parametrize("first, second, what", [
    ([1, 2], [1, 2, 3], "structure"),
    ({"a": 1}, {"b": 1}, "structure"),
    ((1, 2), [1, 2], "expected tuple"),
    (Box(1, 2, "p"), Box(1, 2, "q"), "structure"),
    ([None], [1], "expected NoneType"),
])
def test_tree_map_mismatches_raise_like_jax(jtu, first, second, what):
    with pytest.raises(ValueError, match=what):
        tu.tree_map(lambda x, y: x, first, second)
    with pytest.raises(ValueError):
        jtu.tree_map(lambda x, y: x, first, second)


def test_mismatch_error_names_the_path():
    with pytest.raises(ValueError, match=r"\['a'\]\[1\]"):
        tu.tree_map(lambda x, y: x, {"a": [1, (2, 3)]}, {"a": [1, (2, 3, 4)]})


def test_is_leaf_stops_the_descent(jtu):
    tree = [None, (1, 2), {"k": (3,)}]
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tu.tree_leaves(tree, is_leaf=is_tuple) == jtu.tree_leaves(tree, is_leaf=is_tuple)
    is_none = lambda x: x is None  # noqa: E731
    assert tu.tree_leaves(tree, is_leaf=is_none) == jtu.tree_leaves(tree, is_leaf=is_none)
    assert tu.tree_map(lambda t: len(t), tree, is_leaf=is_tuple) == [None, 2, {"k": 1}]


def test_treedef_equality_and_hashing():
    s1 = tu.tree_structure({"a": [1, 2], "b": Params(1, 2)})
    s2 = tu.tree_structure({"b": Params(5, 6), "a": [3, 4]})
    assert s1 == s2 and hash(s1) == hash(s2)
    assert s1 != tu.tree_structure({"a": [1, 2], "b": Params(1, 2, name="other")})
    assert s1 != tu.tree_structure({"a": (1, 2), "b": Params(1, 2)})
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))


def test_unflatten_checks_the_leaf_count():
    with pytest.raises(PtoError, match="2 leaves but 3"):
        tu.tree_unflatten(tu.tree_structure((1, 2)), [1, 2, 3])


def test_treedef_helpers_match_jax(jtu):
    tree = {"a": (1, [2]), "b": 3}
    children = tu.treedef_children(tu.tree_structure(tree))
    j_children = jtu.treedef_children(jtu.tree_structure(tree))
    assert [repr(c) for c in children] == [repr(c) for c in j_children]
    joined = tu.treedef_tuple(children)
    assert joined.unflatten([1, 2, 3]) == ((1, [2]), 3)
    assert tu.treedef_is_leaf(tu.tree_structure(5)) and not tu.treedef_is_leaf(joined)
    for xs in ([1, 2.0, None], [1, (2,)], [np.ones(2)]):
        assert tu.all_leaves(xs) == jtu.all_leaves(xs)


def test_tree_reduce_and_tree_all_match_jax(jtu):
    tree = {"a": [1, 2], "b": (3,)}
    add = lambda a, b: a + b  # noqa: E731
    assert tu.tree_reduce(add, tree) == jtu.tree_reduce(add, tree) == 6
    assert tu.tree_reduce(add, tree, 10) == jtu.tree_reduce(add, tree, 10) == 16
    pair = lambda a, b: [a, b]  # noqa: E731
    assert tu.tree_reduce(pair, [1], None) == jtu.tree_reduce(pair, [1], None) == [None, 1]
    assert tu.tree_all([True, (1, "x")]) and not tu.tree_all({"a": True, "b": [0]})


def test_tree_transpose_matches_jax(jtu):
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, {"k": 0}))
    tree = [(1, {"k": 2}), (3, {"k": 4})]
    expected = jtu.tree_transpose(jtu.tree_structure([0, 0]),
                                  jtu.tree_structure((0, {"k": 0})), tree)
    assert tu.tree_transpose(outer, inner, tree) == expected == ([1, 3], {"k": [2, 4]})


def test_dict_keys_sort_and_unsortable_keys_raise(jtu):
    tree = {"b": 1, "a": 2}
    assert tu.tree_leaves(tree) == [2, 1]
    assert tu.tree_unflatten(tu.tree_structure(tree), [20, 10]) == {"a": 20, "b": 10}
    with pytest.raises(ValueError, match="sortable"):
        tu.tree_leaves({1: "a", "b": 2})
    with pytest.raises(ValueError):
        jtu.tree_leaves({1: "a", "b": 2})


# registration --------------------------------------------------------------------------------
def test_register_pytree_node_with_and_without_keys():
    class Pair:
        def __init__(self, first, second):
            self.first, self.second = first, second

    class NamedPair(Pair):
        pass

    tu.register_pytree_node(Pair, lambda p: ((p.first, p.second), None),
                            lambda _, c: Pair(*c))
    tu.register_pytree_node(NamedPair, lambda p: ((p.first, p.second), None),
                            lambda _, c: NamedPair(*c),
                            lambda p: (((tu.GetAttrKey("first"), p.first),
                                        (tu.GetAttrKey("second"), p.second)), None))
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Pair(1, [2]))]
    assert paths == ["[<flat index 0>]", "[<flat index 1>][0]"]
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(NamedPair(1, [2]))]
    assert paths == [".first", ".second[0]"]
    rebuilt = tu.tree_map(lambda x: x + 1, NamedPair(1, [2]))
    assert type(rebuilt) is NamedPair and (rebuilt.first, rebuilt.second) == (2, [3])
    with pytest.raises(ValueError, match="already registered"):
        tu.register_pytree_node(Pair, lambda p: ((), None), lambda _, c: Pair(0, 0))


def test_register_pytree_with_keys_derives_the_plain_flatten():
    class Triple:
        def __init__(self, *items):
            self.items = items

    tu.register_pytree_with_keys(
        Triple, lambda t: ([(tu.SequenceKey(i), v) for i, v in enumerate(t.items)], None),
        lambda _, c: Triple(*c))
    assert tu.tree_leaves(Triple(1, (2, 3))) == [1, 2, 3]
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(Triple(1, 2))] == ["[0]", "[1]"]


def test_register_dataclass_static_fields_are_metadata():
    leaves, treedef = tu.tree_flatten(Params(1.0, 2.0, name="layer"))
    assert leaves == [1.0, 2.0]
    rebuilt = treedef.unflatten([3.0, 4.0])
    assert rebuilt == Params(3.0, 4.0, name="layer")
    assert treedef != tu.tree_structure(Params(1.0, 2.0, name="other"))


def test_register_dataclass_recomputes_non_init_fields_and_honours_drop_fields():
    @tu.register_dataclass
    @dataclasses.dataclass
    class Scaled:
        value: object
        twice: object = dataclasses.field(init=False)

        def __post_init__(self):
            self.twice = self.value * 2

    assert tu.tree_leaves(Scaled(3)) == [3]
    assert tu.tree_map(lambda v: v + 1, Scaled(3)).twice == 8

    @dataclasses.dataclass
    class WithCache:
        value: object
        cache: object = None

    tu.register_dataclass(WithCache, drop_fields=("cache",))
    assert tu.tree_leaves(WithCache(1, cache="ignored")) == [1]


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class Two:
        a: object
        b: object

    with pytest.raises(TypeError, match="both"):
        tu.register_dataclass(Two, data_fields=["a", "b"])
    with pytest.raises(ValueError, match="missing"):
        tu.register_dataclass(Two, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match="both data and metadata"):
        tu.register_dataclass(Two, data_fields=["a", "b"], meta_fields=["a"])

    class Plain:
        pass

    with pytest.raises(TypeError, match="not a dataclass"):
        tu.register_dataclass(Plain)


def test_register_static_and_dataclass_metadata_are_static_under_jit():
    @tu.register_static
    @dataclasses.dataclass(frozen=True)
    class Config:
        scale: float

    assert tu.tree_leaves([Config(2.0), 1]) == [1]
    traces = []

    @pto.jit
    def apply(config, params, x):
        traces.append(params.name)
        return x * config.scale + params.weight

    x = np.ones(3, np.float32)
    out = apply(Config(2.0), Params(np.float32(1), None, name="a"), x)
    np.testing.assert_array_equal(out, np.full(3, 3.0, np.float32))
    apply(Config(2.0), Params(np.float32(5), None, name="a"), x)   # data change: no retrace
    assert traces == ["a"]
    apply(Config(3.0), Params(np.float32(1), None, name="a"), x)   # static change: retrace
    apply(Config(2.0), Params(np.float32(1), None, name="b"), x)
    assert traces == ["a", "a", "b"]


# property: any nested container tree ---------------------------------------------------------
_leaves = st.integers(-5, 5) | st.none()
_trees = st.recursive(_leaves, lambda inner: (
    st.lists(inner, max_size=3) | st.tuples(inner, inner)
    | st.dictionaries(st.sampled_from("abcd"), inner, max_size=3)
    | st.builds(Point, inner, inner)), max_leaves=12)


@given(_trees)
def test_random_trees_flatten_like_jax(jtu, tree):
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == jtu.tree_leaves(tree)
    assert treedef.unflatten(leaves) == tree
    assert [tu.keystr(p) for p, _ in tu.tree_flatten_with_path(tree)[0]] == \
        [jtu.keystr(p) for p, _ in jtu.tree_flatten_with_path(tree)[0]]


def test_partial_is_a_pytree_like_jax(jax):
    """``tree_util.Partial``: bound arguments are leaves, the function is static; it passes
    through jit and grad; a Partial of a partial calls through both."""
    import functools
    got = pto.tree_util.Partial(pnp.add, 1.0)
    want = jax.tree_util.Partial(jax.numpy.add, 1.0)
    assert pto.tree_util.tree_leaves(got) == jax.tree_util.tree_leaves(want) == [1.0]
    assert pto.jit(lambda f, x: f(x))(got, 2.0) == 3.0
    kw = pto.tree_util.Partial(pnp.clip, a_min=0.0)
    assert len(pto.tree_util.tree_leaves(kw)) == len(
        jax.tree_util.tree_leaves(jax.tree_util.Partial(jax.numpy.clip, a_min=0.0))) == 1
    grads = pto.grad(lambda p: p(2.0))(pto.tree_util.Partial(pnp.multiply, 3.0))
    assert isinstance(grads, pto.tree_util.Partial) and float(grads.args[0]) == 2.0
    nested = pto.tree_util.Partial(functools.partial(pnp.subtract, 10.0), 4.0)
    assert float(nested()) == 6.0 and pto.tree_util.tree_leaves(nested) == [4.0]
