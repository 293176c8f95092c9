"""Host-build tests share the run's kernel cache directory (``kernel_cache_dir`` in
tests/conftest.py), so a library is compiled once however many tests use it."""
