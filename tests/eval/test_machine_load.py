"""On a busy machine numpy's OpenBLAS runs on one thread (and gets its own count back once the
machine is not busy); matmul results do not change."""
import io
import os

import numpy as np
import pytest

from ptojax.eval import blas, machine_load
from ptojax.lower.host.backend import wait_for_compiles


@pytest.fixture
def load(monkeypatch):
    """The 1-minute load average, as the first reading of a process sees it (no /proc/stat).
    Background builds of earlier tests in this process count as busy (``building``): they
    are waited for first."""
    assert wait_for_compiles(timeout=300), "an earlier test's background build did not finish"
    value = {"now": 0.0}
    monkeypatch.setattr(machine_load.os, "getloadavg", lambda: (value["now"], 0.0, 0.0))
    monkeypatch.setattr(machine_load, "_cpu_seconds_used", lambda: None)
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    machine_load.follow_load()    # start idle: earlier tests on a busy machine may hold BLAS
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    yield value
    value["now"] = 0.0
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    machine_load.follow_load()


def test_openblas_follows_the_load(load, monkeypatch):
    monkeypatch.setattr(blas._Team, "gemm", None)    # numpy's products, not the team's
    controls = machine_load._openblas_threads()
    if controls is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS ptojax can locate")
    get, _ = controls
    own = get()
    a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    load["now"] = 1000.0
    np.testing.assert_allclose(blas.matmul(a, a), a @ a, rtol=1e-5, atol=1e-4)
    assert machine_load.machine_busy() and get() == 1
    load["now"] = 0.0
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    blas.matmul(a, a)
    assert not machine_load.machine_busy() and get() == own



def test_busy_is_the_cpu_time_others_used(monkeypatch):
    """Between two readings, the machine's CPU time less this process's own, per second: 1.6
    of 2 cores used by this process alone is not busy; 0.8 cores used by others is."""
    clock = {"wall": 1000.0, "machine": 50.0, "own": 10.0}
    monkeypatch.setattr(machine_load.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(machine_load.time, "monotonic", lambda: clock["wall"])
    monkeypatch.setattr(machine_load.time, "process_time", lambda: clock["own"])
    monkeypatch.setattr(machine_load, "_cpu_seconds_used", lambda: clock["machine"])
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    monkeypatch.setattr(machine_load._Load, "used", None)
    monkeypatch.setattr(machine_load._Load, "busy", False)
    monkeypatch.setattr(machine_load, "_others_running_now", lambda: 0)
    assert not machine_load.machine_busy()              # first reading: threads running now
    for own, others, busy in ((1.6, 0.0, False), (1.0, 0.8, True), (0.0, 0.3, False)):
        clock["wall"] += 2.0
        clock["own"] += 2.0 * own
        clock["machine"] += 2.0 * (own + others)
        assert machine_load.machine_busy() is busy, (own, others)


@pytest.mark.parametrize("cpus, running, busy", [(2, 0, False), (2, 1, True), (8, 4, False),
                                                 (8, 7, True)])
def test_a_first_reading_counts_the_threads_running_now(monkeypatch, cpus, running, busy):
    """A process's first reading has no rate yet: other processes' running threads decide, at
    the rate's threshold (the lagging load average is not read)."""
    monkeypatch.setattr(machine_load.os, "cpu_count", lambda: cpus)
    monkeypatch.setattr(machine_load, "_cpu_seconds_used", lambda: 50.0)
    monkeypatch.setattr(machine_load, "_others_running_now", lambda: running)
    monkeypatch.setattr(machine_load.os, "getloadavg", lambda: (100.0 * (not busy), 0.0, 0.0))
    monkeypatch.setattr(machine_load._Load, "checked", -1e9)
    monkeypatch.setattr(machine_load._Load, "used", None)
    assert machine_load.machine_busy() is busy


def test_threads_running_now_leave_out_this_process(monkeypatch):
    """``/proc/loadavg`` counts this process's running threads (the reading one at least): they
    are not others; the fewest of the reads counts (a daemon waking once is not load)."""
    if not os.path.exists("/proc/loadavg"):
        pytest.skip("no /proc")
    reads = iter(["0.5 0.4 0.3 3/200 1\n", "0.5 0.4 0.3 2/200 1\n", "0.5 0.4 0.3 9/200 1\n"])
    real_open = open

    def fake_open(path, *a, **k):
        if path == "/proc/loadavg":
            return io.StringIO(next(reads))
        return real_open(path, *a, **k)
    monkeypatch.setattr(machine_load, "open", fake_open, raising=False)
    monkeypatch.setattr(machine_load, "_own_running_threads", lambda: 1)
    assert machine_load._others_running_now() == 1


def test_this_process_runs_at_least_the_reading_thread():
    if not os.path.exists("/proc/self/task"):
        pytest.skip("no /proc")
    assert machine_load._own_running_threads() >= 1


@pytest.mark.parametrize("cpus, busy", [(1, True), (2, True), (8, False)])
def test_a_build_of_our_own_makes_a_small_machine_busy_at_once(load, monkeypatch, cpus, busy):
    monkeypatch.setattr(machine_load.os, "cpu_count", lambda: cpus)
    assert not machine_load.machine_busy()          # idle, and the reading is fresh
    with machine_load.building():
        assert machine_load.machine_busy() == busy  # before any new reading
    assert not machine_load.machine_busy()


def test_a_host_convolution_follows_the_load(load, monkeypatch):
    """A convolution's BLAS products (im2col on the host) go through ``matmul`` too: a 1x1
    convolution's filter gradient (a long-K product) ran 10x slower on OpenBLAS's two
    spinning threads on a busy machine. The result (written into an ``out`` buffer) is
    unchanged."""
    monkeypatch.setattr(blas._Team, "gemm", None)    # numpy's products, not the team's
    import ptojax as pto
    controls = machine_load._openblas_threads()
    if controls is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS ptojax can locate")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 16, 16, 32)).astype(np.float32)
    w = rng.standard_normal((3, 3, 32, 16)).astype(np.float32)
    load["now"] = 1000.0
    got = pto.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
    assert controls[0]() == 1
    cols = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))),
                                                    (3, 3), axis=(1, 2))
    want = np.einsum("nhwcij,ijco->nhwo", cols, w)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-3)


def test_a_product_openblas_would_thread_follows_the_load(load, monkeypatch):
    """OpenBLAS splits products from m*n*k = 65536 x 4 on: a dense layer's input gradient
    ``g @ w.T`` of 128x16 by 16x288 (590K) woke its second thread and stalled on a busy
    machine, below the host kernels' own threading size."""
    monkeypatch.setattr(blas._Team, "gemm", None)    # numpy's products, not the team's
    controls = machine_load._openblas_threads()
    if controls is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS ptojax can locate")
    rng = np.random.default_rng(0)
    g = rng.standard_normal((128, 16)).astype(np.float32)
    w = rng.standard_normal((288, 16)).astype(np.float32)
    assert 128 * 16 * 288 < machine_load.THREADED_MIN_FLOPS
    load["now"] = 1000.0
    np.testing.assert_allclose(blas.matmul(g, w.T), g @ w.T, rtol=1e-5, atol=1e-5)
    assert controls[0]() == 1
