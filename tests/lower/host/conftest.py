"""Host-build tests: every test in this directory shares one disk cache of compiled kernel
libraries for the session (a session temp dir), so a library is compiled once however many
tests use it."""
import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def host_cache_dir(tmp_path_factory):
    previous = os.environ.get("PTOJAX_CACHE_DIR")
    path = tmp_path_factory.mktemp("ptojax-host-cache")
    os.environ["PTOJAX_CACHE_DIR"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("PTOJAX_CACHE_DIR", None)
    else:
        os.environ["PTOJAX_CACHE_DIR"] = previous
