"""The hot path of a cached jit call: ``fast_arguments`` gives tree_flatten's leaf values
(numpy inputs uncopied) and a key that changes whenever the full signature would."""
import collections
import dataclasses

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.eval.fast_arguments import Miss, fast_arguments
from ptojax.eval.leaves import leaf_value
from ptojax.pytree import register_dataclass, tree_flatten, unflattener

Pair = collections.namedtuple("Pair", "a b")


@dataclasses.dataclass
class Box:
    x: object
    tag: str


register_dataclass(Box, data_fields=["x"], meta_fields=["tag"])


def trees():
    f32 = np.arange(3, dtype=np.float32)
    return [
        ((f32, pnp.ones(2)), {}),
        (([f32, (f32, None)], {"b": 1.5, "a": 2, "c": True}), {}),
        ((Pair(pnp.zeros(()), [f32]), np.float32(3), np.int32(4)), {"k": f32, "j": 0.25}),
        ((Box(f32, "t"), {"z": Pair(1, 2.0)}), {}),
        ((), {}),
    ]


@pytest.mark.parametrize("case", range(len(trees())))
def test_values_are_tree_flattens(case):
    args, kwargs = trees()[case]
    _, values = fast_arguments(args, kwargs, frozenset(), frozenset())
    leaves, _ = tree_flatten((args, dict(kwargs)))
    expected = [leaf_value(x) for x in leaves]
    assert len(values) == len(expected)
    for v, e in zip(values, expected):
        assert type(v) is type(e) and v.dtype == e.dtype and v.shape == e.shape
        np.testing.assert_array_equal(v, e)


def test_numpy_inputs_are_passed_uncopied():
    x = np.ones((4, 5), np.float32)
    _, values = fast_arguments(({"x": [x]},), {}, frozenset(), frozenset())
    assert values[0] is x


def key(*args, statics=frozenset(), **kwargs):
    return fast_arguments(args, kwargs, statics, frozenset())[0]


def test_key_changes_with_the_signature():
    x = np.ones(3, np.float32)
    base = key([x, x], {"a": 1.0})
    assert base == key([x.copy(), x + 1], {"a": 2.0})      # values do not matter
    different = [
        key((x, x), {"a": 1.0}),                           # list -> tuple
        key([x, x], {"b": 1.0}),                           # dict keys
        key([x, x, x], {"a": 1.0}),                        # length
        key([x, x.astype(np.float16)], {"a": 1.0}),        # dtype
        key([x, np.ones(4, np.float32)], {"a": 1.0}),      # shape
        key([x, x], {"a": 1}),                             # Python float -> int
        key([x, x], {"a": np.float32(1.0)}),               # weak -> strong scalar
        key([x, pnp.asarray(x)], {"a": 1.0}),              # numpy -> Array (same entry later)
        key([x, x], {"a": 1.0}, extra=x),                  # a keyword argument
        key(Pair(x, x), {"a": 1.0}),                       # namedtuple
    ]
    assert len({base, *different}) == len(different) + 1
    weak, strong = pnp.asarray(1.0) * 1.0, pnp.asarray(np.float32(1.0))
    assert key(weak) != key(strong)


def test_static_values_are_in_the_key():
    x = np.ones(3, np.float32)
    assert key(x, 2, statics=frozenset({1})) != key(x, 3, statics=frozenset({1}))
    assert key(x, 2, statics=frozenset({1})) == key(x + 1, 2, statics=frozenset({1}))


@pytest.mark.parametrize("value", [2**40, [np.ones(2).view(np.matrix)], {1: 1, "a": 2}])
def test_what_the_full_path_must_decide(value):
    with pytest.raises((Miss, TypeError)):
        fast_arguments((value,), {}, frozenset(), frozenset())


def test_unflattener_matches_unflatten():
    tree = ([1, (2, None)], {"b": Pair(3, 4), "a": Box(5, "t")}, ())
    leaves, treedef = tree_flatten(tree)
    assert unflattener(treedef)(leaves) == treedef.unflatten(leaves) == tree


def test_unflattener_of_a_deeply_nested_tree():
    tree = 0
    for _ in range(400):
        tree = [tree]
    leaves, treedef = tree_flatten(tree)
    assert unflattener(treedef)(leaves) == tree
