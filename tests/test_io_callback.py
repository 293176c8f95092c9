"""``pto.experimental.io_callback`` against JAX's ``jax.experimental.io_callback``: a host
function with side effects runs every time the program reaches it (results unused too, in
scan and loops), returns declared arrays, vmaps per example unless ordered, and refuses
derivatives through its operands."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.experimental import io_callback as pto_io_callback


def _program(jax_like, io_callback, jnp):
    """Calls a host generator from jit, scan, vmap and grad; returns (results, call log)."""
    log = []
    rng = np.random.default_rng(0)

    def draw(x):
        log.append(tuple(np.shape(x)))
        return rng.uniform(size=np.shape(x)).astype(np.float32)

    @jax_like.jit
    def like(x):
        return io_callback(draw, jax_like.ShapeDtypeStruct(x.shape, jnp.float32), x)

    @jax_like.jit
    def unused(x):
        io_callback(lambda: log.append("hello"), None)
        return x * 2

    out = [like(jnp.zeros(3)), unused(1.0), jax_like.grad(unused)(1.0),
           jax_like.vmap(like)(jnp.zeros((2, 2))),
           jax_like.lax.scan(lambda c, x: (c, like(x)), None, jnp.arange(3.0))[1]]
    return out, log


def test_matches_jax_values_and_calls(jax):
    from jax.experimental import io_callback as jax_io_callback
    got, got_log = _program(pto, pto_io_callback, pnp)
    with jax.enable_x64(False):
        want, want_log = _program(jax, jax_io_callback, jax.numpy)
    assert got_log == want_log
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_errors_as_jax():
    f = lambda x: pto_io_callback(lambda x: x, pto.ShapeDtypeStruct((), pnp.float32), x,
                                  ordered=True)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        pto.vmap(f)(pnp.ones(2))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        pto.grad(f)(1.0)
    with pytest.raises(ValueError, match="ShapeDtypeStruct"):
        pto_io_callback(lambda: 0, 3)


def test_never_removed_or_merged():
    calls = []
    def count():
        calls.append(1)
        return np.int32(len(calls))
    t = pto.ShapeDtypeStruct((), pnp.int32)
    f = pto.jit(lambda: pto_io_callback(count, t) + pto_io_callback(count, t))
    assert int(f()) == 3 and len(calls) == 2


def test_a_sharding_is_refused_at_the_callers_line():
    x = pnp.ones(3)
    with pytest.raises(pto.errors.UnsupportedError, match="sharding is not supported") as info:
        pto_io_callback(lambda v: v, pto.ShapeDtypeStruct((3,), np.float32), x, sharding="x")
    assert "test_io_callback.py" in str(info.value)
