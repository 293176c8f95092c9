"""``jit(in_shardings=, out_shardings=)`` place arguments and results as JAX's (values
unchanged, results sharded as asked); ``lax.with_sharding_constraint`` is the top-level one;
``Sharding.is_fully_replicated``/``is_fully_addressable`` are properties, as JAX's."""
import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from helpers import assert_close

P = pto.P


def test_out_shardings_place_the_results():
    mesh = pto.make_mesh((4, 2), ("b", "m"))
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    f = pto.jit(lambda x: (x * 2, x.sum()),
                out_shardings=(pto.NamedSharding(mesh, P("b", "m")), None))
    y, s = f(x)
    assert y.sharding.spec == P("b", "m") and len(y.addressable_shards) == 8
    assert y.addressable_shards[0].data.shape == (2, 2)
    assert_close(y, x * 2)
    assert_close(s, x.sum())


def test_in_shardings_place_positional_arguments_and_skip_statics():
    mesh = pto.make_mesh((8,), ("x",))
    sharding = pto.NamedSharding(mesh, P("x"))
    f = pto.jit(lambda x, n, w: pnp.sin(x) * n @ w, static_argnums=1,
                in_shardings=(sharding, None))
    x, w = np.ones(16, np.float32), np.arange(32, dtype=np.float32).reshape(16, 2)
    assert_close(f(x, 3, w), np.sin(x) * 3 @ w, rtol=1e-5)
    with pytest.raises(ValueError, match="in_shardings has 1 entries"):
        pto.jit(lambda a, b: a + b, in_shardings=(sharding,))(x, x)


def test_inside_a_trace_they_are_constraints():
    mesh = pto.make_mesh((8,), ("x",))
    inner = pto.jit(lambda x: x + 1, out_shardings=pto.NamedSharding(mesh, P("x")))
    closed = pto.make_jaxpr(lambda x: inner(x) * 2)(np.ones(8, np.float32))
    assert "sharding_constraint" in str(closed)
    assert_close(pto.jit(lambda x: inner(x) * 2)(np.ones(8, np.float32)), np.full(8, 4.0, np.float32))


def test_lax_with_sharding_constraint_and_sharding_properties(jax):
    assert pto.lax.with_sharding_constraint is pto.with_sharding_constraint
    mesh = pto.make_mesh((8,), ("x",))
    x = pto.device_put(np.arange(8.0, dtype=np.float32), pto.NamedSharding(mesh, P("x")))
    assert x.sharding.is_fully_replicated is False and x.sharding.is_fully_addressable
    assert pnp.ones(2).sharding.is_fully_replicated is True
    assert pto.NamedSharding(mesh, P()).is_fully_replicated is True
    jax_mesh = jax.make_mesh((1,), ("x",))
    assert jax.sharding.NamedSharding(jax_mesh, jax.P()).is_fully_replicated is True  # no call
