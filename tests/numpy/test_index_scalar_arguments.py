"""A 0-d integer array given where an argument is an int (a size, a shape, an axis, a count)
is read as that int, as JAX reads it (``operator.index``): ``pnp.zeros(pnp.array(3))``,
``random.split(key, pnp.array(3))``, ``x.sum(axis=pnp.array(1))``, ``lax.top_k(x,
pnp.array(2))``... Every case gives what the Python int gives, and a few are compared live
with JAX. A traced one has no value to read: an error, as in JAX."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp

# (jax-like module, its numpy, I) -> result; I(v) is the int v as given (int or 0-d array)
CASES = {
    "zeros": lambda j, m, I: m.zeros(I(3)),
    "zeros tuple": lambda j, m, I: m.zeros((I(3), 2)),
    "full": lambda j, m, I: m.full(I(3), 1.0),
    "empty": lambda j, m, I: m.empty((I(3),)).shape and m.ones(I(3)),
    "reshape": lambda j, m, I: m.reshape(m.arange(6), (I(2), -1)),
    "reshape method": lambda j, m, I: m.arange(6).reshape(I(2), 3),
    "broadcast_to": lambda j, m, I: m.broadcast_to(1.0, (I(3),)),
    "broadcast_to scalar": lambda j, m, I: m.broadcast_to(1.0, I(3)),
    "tile": lambda j, m, I: m.tile(m.arange(2), I(2)),
    "expand_dims": lambda j, m, I: m.expand_dims(m.arange(2), I(0)),
    "squeeze": lambda j, m, I: m.squeeze(m.ones((1, 2)), I(0)),
    "sum axis": lambda j, m, I: m.sum(m.ones((2, 3)), axis=I(1)),
    "mean axis method": lambda j, m, I: m.ones((2, 3)).mean(axis=I(-1)),
    "take axis": lambda j, m, I: m.take(m.ones((2, 3)), 0, axis=I(1)),
    "split sections": lambda j, m, I: m.split(m.arange(6), I(2))[1],
    "array_split sections": lambda j, m, I: m.array_split(m.arange(7), I(2))[1],
    "top_k": lambda j, m, I: j.lax.top_k(m.arange(5.0), I(2))[0],
    "random split": lambda j, m, I: j.random.split(j.random.PRNGKey(0), I(3)),
    "random normal shape": lambda j, m, I: j.random.normal(j.random.PRNGKey(0), (I(3),)),
    "initializer shape": lambda j, m, I: j.nn.initializers.normal()(j.random.PRNGKey(0),
                                                                     (I(3), 2)),
}
LIVE = ["zeros tuple", "sum axis", "split sections", "top_k", "random split"]


def _described(out):
    return str(out.dtype), tuple(out.shape), np.asarray(out).tolist()


@pytest.mark.parametrize("name", sorted(CASES))
def test_integer_array_argument_is_read_as_its_int(name):
    make = CASES[name]
    as_int = _described(make(pto, pnp, int))
    assert _described(make(pto, pnp, pnp.array)) == as_int
    assert _described(make(pto, pnp, np.int64)) == as_int


def test_integer_array_arguments_match_jax(jax):
    with jax.enable_x64(False):
        want = [_described(CASES[k](jax, jax.numpy, jax.numpy.array)) for k in LIVE]
    assert [_described(CASES[k](pto, pnp, pnp.array)) for k in LIVE] == want


@pytest.mark.parametrize("bad", ["float", "bool", "vector"])
def test_other_arrays_are_refused_as_in_jax(jax, bad):
    value = {"float": 3.0, "bool": True, "vector": [3]}[bad]
    with jax.enable_x64(False):
        with pytest.raises(TypeError):
            jax.numpy.zeros((jax.numpy.array(value), 2))
    with pytest.raises(TypeError):
        pnp.zeros((pnp.array(value), 2))


def test_a_traced_size_is_an_error_as_in_jax(jax):
    with pytest.raises(TypeError):
        jax.jit(lambda k: jax.numpy.zeros(k))(3)
    with pytest.raises(TypeError, match="test_index_scalar_arguments.py"):
        pto.jit(lambda k: pnp.zeros(k))(3)
