"""Test configuration: JAX (the reference) runs in 64-bit mode; ptojax runs in its default mode
(x64 off: float64 inputs are computed in float32, as JAX without x64), except in modules that
use ``ptojax_x64``; hypothesis uses a CI-sized profile; bytecode is cached."""
import os
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Programs still waiting for their kernels when a test process exits are not handed to a
# builder that outlives it (lower/host/exit_handoff.py): the suite would leave builds running
# after it ends. The tests of the handoff turn it on where they need it.
os.environ.setdefault("PTOJAX_BUILD_AT_EXIT", "0")

# Bytecode is cached even where the environment says not to (PYTHONDONTWRITEBYTECODE, set on
# this machine): the suite starts dozens of interpreters (notebook kernels,
# MPI ranks, example scripts, fresh-process tests) that each import ptojax, in 2 s from cached
# bytecode and 6-8 s from source on two busy cores; pytest also keeps its rewritten test
# modules then, so a second run collects in half the time.
sys.dont_write_bytecode = False

settings.register_profile("ci", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.data_too_large])
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("PTOJAX_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session", autouse=True)
def kernel_cache_dir(tmp_path_factory):
    """One kernel cache directory for the whole run, shared by its worker processes (unless
    ``PTOJAX_CACHE_DIR`` is set): a fresh one, not the user's, so every library is compiled
    once per run, and each prelude is precompiled once (``lower/host/prelude.py``), not once
    per worker and per directory of tests (17 of 21 GCC precompiles were such repeats, ~8 s
    each)."""
    if os.environ.get("PTOJAX_CACHE_DIR"):
        yield os.environ["PTOJAX_CACHE_DIR"]
        return
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    os.environ["PTOJAX_CACHE_DIR"] = str(shared / "ptojax-kernel-cache")  # ptojax makes it
    yield os.environ["PTOJAX_CACHE_DIR"]
    os.environ.pop("PTOJAX_CACHE_DIR", None)


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


@pytest.fixture(autouse=True)
def forget_held_builds():
    """After each test, forget the builds its programs left held until hot
    (``lower/host/hotness.py``): a later test's ``wait_for_compiles`` would build them all --
    every cold program of every earlier test in the worker, for nothing (one test of 25 waits
    built 30 libraries of the tests before it in its module)."""
    yield
    from ptojax.lower.host import hotness
    hotness.forget_held()


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="module")
def ptojax_x64():
    """ptojax in x64 mode (``pto.enable_x64(True)``) for a module's tests (module-scoped, so
    hypothesis tests may use it: ``pytestmark = pytest.mark.usefixtures("ptojax_x64")``,
    first in the module): for tests whose point is
    64-bit math (finite differences, float64 accuracy of special functions and
    decompositions) — without x64, ptojax narrows float64 inputs to float32, as JAX."""
    import ptojax as pto
    with pto.enable_x64(True):
        yield


@pytest.fixture
def ptojax_default_mode():
    """ptojax in its default mode (x64 off) for one test, inside a ``ptojax_x64`` module: for
    its tests of the 32-bit defaults (``@pytest.mark.usefixtures("ptojax_default_mode")``)."""
    import ptojax as pto
    with pto.enable_x64(False):
        yield
