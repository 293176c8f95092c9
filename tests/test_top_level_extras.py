"""More of JAX's top-level API: ``eval_shape`` (and ``ShapeDtypeStruct``'s equality), ..."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp


def _as_tuples(tree, leaves):
    return [(tuple(s.shape), np.dtype(s.dtype), s.weak_type) for s in leaves(tree)]


def test_eval_shape_matches_jax(jax):
    def f(lib):
        return lambda x, y, z: ({"a": x * 2, "b": 3}, y, lib.sum(x, axis=0), z.astype("int8"))
    args = (np.ones((2, 3), np.float32), 2.0, pto.ShapeDtypeStruct((4,), "float32"))
    jargs = (*args[:2], jax.ShapeDtypeStruct((4,), "float32"))
    ours = pto.eval_shape(f(pnp), *args)
    with jax.enable_x64(False):
        theirs = jax.eval_shape(f(jax.numpy), *jargs)
    assert pto.tree.structure(ours) == pto.tree.structure(theirs)
    assert _as_tuples(ours, pto.tree.leaves) == _as_tuples(theirs, jax.tree.leaves)
    assert ours[2] == pto.ShapeDtypeStruct((3,), np.float32)
    assert hash(ours[2]) == hash(pto.ShapeDtypeStruct((3,), "float32"))
    assert ours[2] != pto.ShapeDtypeStruct((3,), np.float32, weak_type=True)
    assert ours[2].ndim == 1 and ours[2].size == 3
    assert repr(ours[1]) == repr(theirs[1])


def test_eval_shape_computes_nothing_and_raises_trace_errors():
    calls = []

    def f(x):
        calls.append(type(x).__name__)
        return pnp.dot(x, x.T)
    assert pto.eval_shape(f, pto.ShapeDtypeStruct((1000, 5), "float32")).shape == (1000, 1000)
    assert calls == ["Tracer"]
    with pytest.raises(TypeError):
        pto.eval_shape(lambda x: pnp.dot(x, x), np.ones((2, 3), np.float32))
    with pytest.raises(TypeError):
        pto.eval_shape(lambda s: s, "not an array")
