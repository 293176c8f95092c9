"""A built program's tiled IR and emitted source are recorded in the cache
(``lower/host/program_record.py``): the next process's executable of the same program loads
its kernels without tiling or emitting, and runs the same results; a record that cannot be
read counts as none."""
import os

import numpy as np

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.lower.host import backend as host_backend
from ptojax.lower.host import program as host_program
from ptojax.lower.host import program_record
from ptojax.lower.host.backend import CpuBackend, HostExecutable
from ptojax.lower.host.cache import cache_root

X = np.linspace(-2.0, 2.0, 96 * 40, dtype=np.float32).reshape(96, 40)


def chain(x):
    return pnp.exp(-x * x) * 1.75 + x * float(os.getpid() % 997)


def _executable():
    return HostExecutable(pto.make_ir(chain)(X), CpuBackend(min_elements=0, tiered=False))


def test_the_next_executable_loads_the_recorded_program_without_tiling(monkeypatch):
    first = _executable()                         # compiled, and recorded
    assert first.status == "compiled"
    assert program_record.load(cache_root(), first._fingerprint()) is not None

    def refuse(*args, **kwargs):
        raise AssertionError("tiled or emitted again")
    monkeypatch.setattr(host_backend, "tile_ir", refuse)
    monkeypatch.setattr(host_program, "_fused_build", refuse)
    again = _executable()
    assert again.status == "compiled" and again.program.source == first.program.source
    np.testing.assert_array_equal(np.asarray(again.run(X)[0]), np.asarray(first.run(X)[0]))


def test_a_record_that_cannot_be_read_counts_as_none():
    first = _executable()
    path = program_record.record_path(cache_root(), first._fingerprint())
    path.write_bytes(b"not a pickle")
    assert program_record.load(cache_root(), first._fingerprint()) is None
    again = _executable()                         # tiled again, and recorded again
    assert again.status == "compiled"
    assert program_record.load(cache_root(), first._fingerprint()) is not None
