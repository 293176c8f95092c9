"""Test configuration: JAX (the reference) runs in 64-bit mode so explicit float64 inputs compare
like for like; hypothesis uses a CI-sized profile."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("PTOJAX_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    return jax


@pytest.fixture(scope="session")
def jnp(jax):
    import jax.numpy as jnp
    return jnp


@pytest.fixture
def rng():
    return np.random.default_rng(0)
