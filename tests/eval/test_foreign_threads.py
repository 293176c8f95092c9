"""Where the OpenMP team's work goes when other threads of the process are busy
(eval/foreign_threads.py): the clock of another thread, the readings, the states' moves, and
numpy's own OpenBLAS workers seen spinning after a product and then asleep."""
import os
import threading
import time

import numpy as np
import pytest

from ptojax.eval import foreign_threads as ft
from ptojax.eval.foreign_threads import Spread
from ptojax.eval.machine_load import _openblas_threads

linux_clocks = pytest.mark.skipif(not hasattr(threading, "get_native_id")
                                  or not hasattr(time, "clock_gettime_ns"),
                                  reason="per-thread CPU clocks of Linux")
MS = 1_000_000


@linux_clocks
def test_the_clock_of_a_thread_is_its_cpu_time():
    own = time.clock_gettime_ns(ft.thread_clock(threading.get_native_id()))
    assert abs(own - time.thread_time_ns()) < 50 * MS
    spun, done, tid = threading.Event(), threading.Event(), []

    def spin():
        tid.append(threading.get_native_id())
        end = time.thread_time() + 0.05
        while time.thread_time() < end:
            pass
        spun.set()
        done.wait()
    worker = threading.Thread(target=spin)
    worker.start()
    assert spun.wait(60)       # 50 ms of CPU; on a loaded machine that takes a while
    assert time.clock_gettime_ns(ft.thread_clock(tid[0])) >= 50 * MS
    done.set()
    worker.join()


def _walk(readings, start=Spread.TEAM):
    """The states after each ``(ms since the start, busy)`` reading."""
    watch = ft._Watch(())
    watch.spread = start
    states = []
    for ms, busy in readings:
        watch.advance(ms * MS, busy)
        states.append(watch.spread)
    return states, watch


def test_a_busy_reading_sends_the_products_to_openblas():
    states, _ = _walk([(2, False), (4, True), (6, False)])
    assert states == [Spread.TEAM, Spread.OPENBLAS, Spread.OPENBLAS]


def test_openblas_is_probed_after_a_while_and_quiet_readings_bring_the_team_back():
    readings = [(4, True), (300, True), (306, True)] + \
        [(306 + 2 * i, False) for i in range(1, ft.QUIET_READINGS + 1)]
    states, watch = _walk(readings)
    assert states[:3] == [Spread.OPENBLAS, Spread.OPENBLAS, Spread.PROBE]
    assert states[-2] is Spread.PROBE and states[-1] is Spread.TEAM
    assert watch.probe_after == ft.PROBE_AFTER_NS


def test_a_probe_that_stays_busy_returns_to_openblas_and_waits_longer():
    ms = ft.PROBE_AFTER_NS // MS
    readings = [(1, True), (1 + ms, True)] + [(1 + ms + 10 * i, i % 3 == 0) for i in range(1, 40)]
    states, watch = _walk(readings)
    assert Spread.TEAM not in states
    assert states[-1] is Spread.OPENBLAS
    assert watch.probe_after == 2 * ft.PROBE_AFTER_NS


def test_the_wait_before_a_probe_is_bounded():
    watch = ft._Watch(())
    watch.spread, now = Spread.OPENBLAS, 0
    for _ in range(20):
        now += watch.probe_after
        watch.advance(now, True)
        assert watch.spread is Spread.PROBE
        now += ft.PROBE_NS
        watch.advance(now, True)
        assert watch.spread is Spread.OPENBLAS
    assert watch.probe_after == ft.PROBE_AFTER_MAX_NS


def test_readings_are_taken_at_most_every_check_interval(monkeypatch):
    reads = []
    monkeypatch.setattr(ft._Team, "threads", lambda: [threading.get_native_id()])
    monkeypatch.setattr(ft._Team, "local", threading.local())
    original = ft._Watch.read
    monkeypatch.setattr(ft._Watch, "read", lambda self, now: reads.append(now) or
                        original(self, now))
    for _ in range(1000):
        ft.spread()
    assert 1 <= len(reads) <= 2 + (reads[-1] - reads[0]) // ft.CHECK_EVERY_NS


def test_no_team_watched_means_the_team():
    assert ft.spread() is Spread.TEAM or ft._Team.threads is not None


@pytest.fixture
def openblas_on_two_threads():
    """numpy's OpenBLAS on two threads (another test may have left it at one: a busy machine,
    ``machine_load.follow_load``), restored after."""
    controls = _openblas_threads()
    if controls is None or (os.cpu_count() or 1) < 2:
        pytest.skip("numpy's OpenBLAS with its own worker threads")
    get, set_ = controls
    saved = get()
    set_(2)
    yield
    set_(saved)


@linux_clocks
def test_openblas_workers_spinning_after_a_product_are_seen_and_then_left_behind(
        monkeypatch, openblas_on_two_threads):
    """After a threaded numpy matmul, OpenBLAS's workers spin (~0.1 s) and the readings say
    busy; with no further products they fall asleep, and a probe brings the team back. (On a
    loaded machine a spinning worker shares its core: busy is taken from a fifth of one.)"""
    monkeypatch.setattr(ft, "BUSY_CORES", 0.2)
    monkeypatch.setattr(ft._Team, "threads", lambda: [threading.get_native_id()])
    monkeypatch.setattr(ft._Team, "local", threading.local())
    monkeypatch.setattr(ft, "PROBE_AFTER_NS", 20 * MS)
    a = np.ones((600, 600), np.float32)
    seen = []
    for _ in range(20):            # (on a loaded machine a spinning worker may not get a core)
        a @ a
        for _ in range(10):
            time.sleep(0.002)
            seen.append(ft.spread())
        if Spread.OPENBLAS in seen:
            break
    assert Spread.OPENBLAS in seen
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and seen[-1] is not Spread.TEAM:
        time.sleep(0.002)
        seen.append(ft.spread())
    assert seen[-1] is Spread.TEAM


@linux_clocks
def test_each_calling_thread_asks_for_its_own_team_once(monkeypatch):
    asked = []

    def team_threads():
        asked.append(threading.get_native_id())
        return [threading.get_native_id()]
    monkeypatch.setattr(ft._Team, "local", threading.local())
    monkeypatch.setattr(ft._Team, "threads", None)
    ft.watch_team(team_threads)
    for _ in range(3):
        ft.spread()
    worker = threading.Thread(target=lambda: [ft.spread() for _ in range(3)])
    worker.start()
    worker.join()
    assert asked == [threading.get_native_id(), asked[1]] and asked[1] != asked[0]
    ft.watch_team(team_threads)                     # a new team: asked again
    ft.spread()
    assert len(asked) == 3
