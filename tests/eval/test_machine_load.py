"""On a busy machine numpy's OpenBLAS runs on one thread (and gets its own count back once the
machine is not busy); matmul results do not change."""
import numpy as np
import pytest

from ptojax.eval import machine_load


@pytest.fixture
def load(monkeypatch):
    value = {"now": 0.0}
    monkeypatch.setattr(machine_load.os, "getloadavg", lambda: (value["now"], 0.0, 0.0))
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    machine_load.follow_load()    # start idle: earlier tests on a busy machine may hold BLAS
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    yield value
    value["now"] = 0.0
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    machine_load.follow_load()


def test_openblas_follows_the_load(load, monkeypatch):
    controls = machine_load._openblas_threads()
    if controls is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS ptojax can locate")
    get, _ = controls
    own = get()
    a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    load["now"] = 1000.0
    np.testing.assert_allclose(machine_load.matmul(a, a), a @ a, rtol=1e-5, atol=1e-4)
    assert machine_load.machine_busy() and get() == 1
    load["now"] = 0.0
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    machine_load.matmul(a, a)
    assert not machine_load.machine_busy() and get() == own


def test_a_process_is_not_busy_with_its_own_threads(load, monkeypatch):
    """A load average of 2 on 2 cores that is this process's own (1.5 cores of CPU time per
    second, for a long time) is not a busy machine; the same load from others is."""
    import time
    monkeypatch.setattr(machine_load.os, "cpu_count", lambda: 2)
    load["now"] = 2.0
    for own, busy in ((1.5, False), (0.0, True)):
        monkeypatch.setattr(machine_load._Load, "own", own)
        monkeypatch.setattr(machine_load._Load, "checked", time.monotonic() - 10.0)
        monkeypatch.setattr(machine_load._Load, "cpu_time", time.process_time() - 10.0 * own)
        assert machine_load.machine_busy() is busy
