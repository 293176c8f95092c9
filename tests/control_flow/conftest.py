"""Control-flow test fixtures: JAX's modules in one namespace, shaped like ``cf_helpers.P``,
so each test function is written once against ``m.lax``/``m.np``."""
import types

import pytest

from helpers import jax_cheaply


def reference_jit(jax, fn):
    """``fn`` as one JAX program, compiled cheaply (``helpers.jax_cheaply``), when called on
    concrete values (eager JAX compiles every operation of a gradient or a loop separately);
    a plain ``jax.jit`` of it inside another JAX transform."""
    def call(*args):
        if any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(args)):
            return jax.jit(fn)(*args)
        return jax_cheaply(jax, fn, *args)
    return call


@pytest.fixture(scope="session")
def J(jax):
    """``J.lax``, ``J.np``, ``J.grad``...: the JAX reference (x64 enabled by the root
    conftest). ``J.grad``, ``J.value_and_grad``, ``J.vmap`` and ``J.jvp`` run their result as
    one compiled program (``reference_jit``); ``J.ref(fn)`` does the same for any function."""
    def transform(t):
        return lambda fn, *a, **k: reference_jit(jax, t(fn, *a, **k))

    def jvp(fn, primals, tangents, **k):
        return reference_jit(jax, lambda p, t: jax.jvp(fn, p, t, **k))(tuple(primals),
                                                                        tuple(tangents))
    return types.SimpleNamespace(lax=jax.lax, np=jax.numpy, grad=transform(jax.grad), jvp=jvp,
                                 vmap=transform(jax.vmap), jit=jax.jit,
                                 value_and_grad=transform(jax.value_and_grad),
                                 ref=lambda fn: reference_jit(jax, fn))
