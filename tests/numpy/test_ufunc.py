"""pnp.frompyfunc/pnp.ufunc against jax.numpy's: calling, outer, reduce (axis, keepdims,
initial, where), accumulate, at (repeated indices compound), reduceat — eagerly, under jit
and as IR; a gradient and a vmap; JAX's errors."""
import operator

import numpy as np
import pytest

import ptojax.numpy as pnp
from pnp_reference import check_grad, check_modes, check_vmap


def _ufuncs(m):
    return (m.frompyfunc(operator.add, 2, 1, identity=0),
            m.frompyfunc(lambda a, b: m.maximum(a, b) * 1.5, 2, 1),
            m.frompyfunc(lambda a: (a * 2, a - 1), 1, 2))


def _calls(m, x, i, v):
    add, scaled_max, two = _ufuncs(m)
    f = x.astype(np.float32)
    return [add(x, 10), add.outer(x[0], x[1]), add.reduce(x), add.reduce(x, axis=None),
            add.reduce(x, axis=1, keepdims=True), add.reduce(x, initial=100),
            add.reduce(x, where=x > 0), scaled_max.reduce(f, axis=1),
            scaled_max.accumulate(f, axis=1), add.accumulate(x), *two(x[0]),
            add.at(x, (i, i + 1), v, inplace=False), add.at(x, 1, 100, inplace=False),
            add.reduceat(x[0], i[1:]), add.reduceat(x, np.array([0, 2, 1]), axis=1),
            add.reduce(x[:0], axis=0)]


def test_frompyfunc_methods_match_jax(jnp):
    x = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    i = np.array([0, 0, 2], np.int32)
    v = np.array([5, 6, 7], np.int32)
    check_modes(lambda *a: _calls(pnp, *a), lambda *a: _calls(jnp, *a), x, i, v)


def test_frompyfunc_grad_vmap_and_errors_match_jax(jnp):
    x = np.linspace(-1, 2, 6, dtype=np.float32).reshape(2, 3)
    mul = lambda m: m.frompyfunc(operator.mul, 2, 1, identity=1)
    check_grad(lambda a: mul(pnp).reduce(a, axis=1) + mul(pnp).accumulate(a, axis=1)[:, -1],
               lambda a: mul(jnp).reduce(a, axis=1) + mul(jnp).accumulate(a, axis=1)[:, -1], x)
    check_vmap(lambda a: mul(pnp).outer(a, a), lambda a: mul(jnp).outer(a, a), x)
    unary = lambda m: m.frompyfunc(lambda a: -a, 1, 1)
    no_identity = lambda m: m.frompyfunc(operator.sub, 2, 1)
    for m in (pnp, jnp):
        assert (mul(m).nin, mul(m).nout, mul(m).identity) == (2, 1, 1)
        for bad in [lambda: unary(m).reduce(x), lambda: unary(m).outer(x, x),
                    lambda: no_identity(m).reduce(x, where=x > 0),
                    lambda: no_identity(m).reduce(x[:0])]:
            with pytest.raises(ValueError):
                bad()
        with pytest.raises(NotImplementedError):
            mul(m).at(x, 0, 2.0)
    assert mul(pnp) == mul(pnp) and hash(mul(pnp)) == hash(mul(pnp))
    assert repr(unary(pnp)) == "<pnp.ufunc '<lambda>'>"


def _builtin_calls(m, x, b, i):
    return [m.add.reduce(x), m.add.reduce(x, axis=None, keepdims=True),
            m.add.reduce(x.astype(np.int8), axis=1), m.multiply.reduce(x, axis=1, initial=2),
            m.maximum.reduce(x, axis=1), m.minimum.reduce(x, where=b, initial=100),
            m.logical_and.reduce(b), m.logical_or.reduce(b, axis=1), m.logical_xor.reduce(b),
            m.logical_and.reduce(b, initial=False), m.bitwise_or.reduce(x, axis=1),
            m.bitwise_and.accumulate(x, axis=1), m.add.accumulate(x, axis=1),
            m.multiply.accumulate(x), m.add.at(x, (i, i + 1), i * 3, inplace=False),
            m.add.at(b, 0, True, inplace=False), m.multiply.at(x, 1, 3, inplace=False),
            m.subtract.at(x, i[:2], 1, inplace=False), m.maximum.at(x, i, 100, inplace=False),
            m.multiply.outer(x[0], x[1]), m.add.reduceat(x[0], i[1:]),
            m.logaddexp.reduce(m.multiply(x, 0.5), axis=1), m.subtract.reduce(x, axis=1)]


def test_jax_ufunc_functions_have_its_methods(jnp):
    """pnp.add, pnp.maximum, ... (the functions JAX makes ufuncs) have the ufunc methods."""
    x = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    check_modes(lambda *a: _builtin_calls(pnp, *a), lambda *a: _builtin_calls(jnp, *a),
                x, x > 0, np.array([0, 0, 2], np.int32))
    for name in ("add", "multiply", "logical_xor", "bitwise_and", "logaddexp", "negative"):
        ours, theirs = getattr(pnp, name), getattr(jnp, name)
        assert (ours.nin, ours.nout, ours.identity) == (theirs.nin, theirs.nout,
                                                         theirs.identity), name
