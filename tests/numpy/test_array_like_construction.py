"""``pnp.array``/``asarray`` of values that are neither arrays, scalars, lists nor tuples,
compared live with JAX's: what NumPy converts (``range``, ``collections.deque``, the buffer
protocol of ``array.array`` and ``memoryview``, ``__array__``), ``__jax_array__``, also as the
leaves of a list; and the refusals: None and ragged lists are ValueErrors, objects NumPy can
hold only as ``object`` (a dict's keys, a generator, a set) TypeErrors."""
import array
import collections

import numpy as np
import pytest

import ptojax.numpy as pnp


class WithArray:
    def __array__(self, dtype=None, copy=None):
        return np.arange(3, dtype=np.float32)


class WithJaxArray:
    def __init__(self, np_module):
        self.np_module = np_module

    def __jax_array__(self):
        return self.np_module.arange(3.0)


CASES = {
    "range": lambda m: range(3),
    "empty range": lambda m: range(0),
    "list of ranges": lambda m: [range(2), range(2)],
    "tuple of range and list": lambda m: (range(2), [1, 2]),
    "list of range and floats": lambda m: [[1.5, 2.5], range(2)],
    "deque": lambda m: collections.deque([1, 2]),
    "deque of floats": lambda m: collections.deque([1.0, 2.5]),
    "array.array f": lambda m: array.array("f", [1, 2]),
    "array.array i": lambda m: array.array("i", [1, 2]),
    "array.array d": lambda m: array.array("d", [1, 2]),
    "memoryview": lambda m: memoryview(np.arange(3, dtype=np.int32)),
    "__array__": lambda m: WithArray(),
    "list of __array__": lambda m: [WithArray(), WithArray()],
    "__jax_array__": lambda m: WithJaxArray(m),
    "list of __jax_array__": lambda m: [WithJaxArray(m), WithJaxArray(m)],
    "None": lambda m: None,
    "list with None": lambda m: [1.0, None],
    "ragged": lambda m: [[1, 2], [3]],
    "ragged numpy": lambda m: [np.ones(2), np.ones(3)],
    "dict keys": lambda m: {1: 2}.keys(),
    "generator": lambda m: (i for i in range(3)),
    "set": lambda m: {1, 2},
}


def _outcome(make, value):
    try:
        out = make(value)
    except ValueError:   # checked first: ptojax's ShapeError/NoneValueError are both
        return "ValueError"
    except TypeError:
        return "TypeError"
    return (str(out.dtype), bool(out.weak_type), tuple(out.shape), np.asarray(out).tolist())


@pytest.mark.parametrize("constructor", ["array", "asarray"])
@pytest.mark.parametrize("dtype", [None, "float32"])
def test_array_like_values_convert_as_in_jax(jax, jnp, constructor, dtype):
    for name, value in CASES.items():
        with jax.enable_x64(False):   # JAX's default 32-bit mode, as ptojax's
            theirs = _outcome(lambda v: getattr(jnp, constructor)(v, dtype=dtype), value(jnp))
        ours = _outcome(lambda v: getattr(pnp, constructor)(v, dtype=dtype), value(pnp))
        assert ours == theirs, (name, constructor, dtype)


def test_refusals_name_the_users_line():
    with pytest.raises(ValueError, match=r"None[\s\S]*test_array_like_construction.py"):
        pnp.array([1.0, None])
    with pytest.raises(ValueError, match=r"ragged[\s\S]*test_array_like_construction.py"):
        pnp.asarray([[1], [2, 3]])


def test_operations_still_refuse_what_only_array_converts(jnp):
    """As JAX's check_arraylike: a range given to an operation is not an array."""
    with pytest.raises(TypeError):
        jnp.sin(range(3))
    with pytest.raises(TypeError):
        pnp.sin(range(3))
