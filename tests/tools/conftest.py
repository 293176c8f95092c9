"""Tools tests that compile host kernels share one session-scoped kernel cache directory."""
import os

import pytest

from ptojax.lower.host.compiler import compiler_or_none


@pytest.fixture(scope="session")
def host_kernels(tmp_path_factory):
    """Skips without a C++ compiler; points the kernel cache at a session temp dir."""
    compiler, why = compiler_or_none()
    if compiler is None:
        pytest.skip(f"no C++ compiler for host kernels: {why}")
    previous = os.environ.get("PTOJAX_CACHE_DIR")
    os.environ["PTOJAX_CACHE_DIR"] = str(tmp_path_factory.mktemp("ptojax-host-cache"))
    yield
    if previous is None:
        os.environ.pop("PTOJAX_CACHE_DIR", None)
    else:
        os.environ["PTOJAX_CACHE_DIR"] = previous
