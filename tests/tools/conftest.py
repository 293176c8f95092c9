"""Tools tests that compile host kernels need a C++ compiler."""
import pytest

from ptojax.lower.host.compiler import compiler_or_none


@pytest.fixture(scope="session")
def host_kernels():
    """Skips without a C++ compiler (kernels are cached in the run's ``kernel_cache_dir``)."""
    compiler, why = compiler_or_none()
    if compiler is None:
        pytest.skip(f"no C++ compiler for host kernels: {why}")
