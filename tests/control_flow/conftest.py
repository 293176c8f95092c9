"""Control-flow test fixtures: JAX's modules in one namespace, shaped like ``cf_helpers.P``,
so each test function is written once against ``m.lax``/``m.np``."""
import types

import pytest


@pytest.fixture(scope="session")
def J(jax):
    """``J.lax``, ``J.np``, ``J.grad``...: the JAX reference (x64 enabled by the root
    conftest)."""
    return types.SimpleNamespace(lax=jax.lax, np=jax.numpy, grad=jax.grad, jvp=jax.jvp,
                                 vmap=jax.vmap, jit=jax.jit, value_and_grad=jax.value_and_grad)
