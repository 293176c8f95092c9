"""Autodiff test fixtures: JAX's modules in one namespace for the rule cases."""
import types

import pytest


@pytest.fixture(scope="session")
def J(jax):
    """``J.jax``, ``J.lax``, ``J.jnp``: the JAX reference (x64 enabled by the root conftest)."""
    return types.SimpleNamespace(jax=jax, lax=jax.lax, jnp=jax.numpy)
