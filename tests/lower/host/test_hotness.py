"""Tiered compilation by hotness (``lower/host/hotness.py``): a program whose library is not in
the cache builds its kernels once its numpy-tier calls have taken ``$PTOJAX_BUILD_AFTER``
seconds; whatever asks for kernels (``wait``, ``start_compiling``, ``wait_for_compiles``, the
exit handoff) does not wait for that. The builds are recorded here, not run: what is tested is
when they start."""
import time

import numpy as np
import pytest

import ptojax as pto
import ptojax.numpy as pnp
from ptojax.errors import ConfigError
from ptojax.lower.host import backend as host_backend
from ptojax.lower.host import exit_handoff, hotness
from ptojax.lower.host.backend import CpuBackend, HostExecutable

X = np.linspace(-1.0, 1.0, 64 * 48, dtype=np.float32).reshape(64, 48)
CALL_S = 0.1        # what each numpy-tier call takes here (a sleep: at least that)


def chain(x):
    return pnp.tanh(1.75 * x + 0.25) * x


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    """No held builds or rents of other tests (nor left for them)."""
    monkeypatch.setattr(hotness, "_held", {})
    monkeypatch.setattr(hotness, "_rents", {})


@pytest.fixture
def builds(monkeypatch):
    """The executables whose compile started (recorded, not run), in order."""
    started = []

    def record(executable):
        started.append(executable)
        executable.status = "failed: (not built by this test)"
        executable._done.set()
    monkeypatch.setattr(HostExecutable, "_compile_in_background", record)
    monkeypatch.setattr(HostExecutable, "_warm_cache", lambda self: False)
    return started


def _slow(executable, seconds=CALL_S):
    """``executable`` with each numpy-tier call taking at least ``seconds``."""
    run = executable.numpy.run

    def slow(*args):
        time.sleep(seconds)
        return run(*args)
    executable.numpy.run = slow
    return executable


def _executable(monkeypatch, build_after, fn=chain):
    monkeypatch.setenv(hotness.ENV, str(build_after))
    return HostExecutable(pto.make_ir(fn)(X), CpuBackend(min_elements=0))


def _idle():
    assert host_backend._worker().wait_idle(60)


def test_a_cold_program_builds_once_its_calls_took_the_threshold(monkeypatch, builds):
    # 2.9 calls' time: two calls stay below it unless each overran its sleep by 45 ms
    executable = _slow(_executable(monkeypatch, 2.9 * CALL_S))
    for _ in range(2):
        executable.run(X)
        _idle()
        assert builds == [] and executable._cold.held and executable.status == "compiling"
    executable.run(X)         # 3 calls of >= 0.1 s: past 0.29 s
    _idle()
    assert builds == [executable] and not executable._cold.held
    assert executable._cold.spent >= 2.9 * CALL_S


def test_threshold_zero_builds_after_the_first_call(monkeypatch, builds):
    executable = _executable(monkeypatch, 0)
    executable.run(X)
    _idle()
    assert builds == [executable]


@pytest.mark.parametrize("ask", ["wait", "start_compiling"])
def test_asking_for_the_kernels_starts_a_held_build(monkeypatch, builds, ask):
    executable = _executable(monkeypatch, 60)
    executable.run(X)
    _idle()
    assert builds == [] and executable._cold.held
    getattr(executable, ask)()
    _idle()
    assert builds == [executable]


def test_asked_before_the_cache_was_looked_up_it_builds_as_soon_as_found_cold(monkeypatch,
                                                                            builds):
    executable = _executable(monkeypatch, 60)
    assert not executable.wait(0)        # before the first call: nothing starts yet
    _idle()
    assert builds == []
    executable.run(X)
    _idle()
    assert builds == [executable]


def test_wait_for_compiles_starts_every_held_build(monkeypatch, builds):
    first, second = (_executable(monkeypatch, 60, fn) for fn in (chain, lambda x: chain(x) * 2))
    first.run(X)
    _idle()
    second.run(X)      # (maybe not looked up yet when the wait starts)
    assert host_backend.wait_for_compiles(60)
    assert set(builds) == {first, second} and not hotness.held_owners()


def test_a_loop_bodys_steps_count_within_one_call(monkeypatch, builds):
    def epoch(x):
        return pto.lax.fori_loop(0, 4, lambda i, c: chain(c), x)
    loop = _executable(monkeypatch, 2.5 * CALL_S, epoch)
    (body,) = loop.loop_bodies
    _slow(body)
    loop.run(X)           # one call: 4 steps of >= 0.1 s
    _idle()
    assert body in builds and body._cold.spent >= 2.5 * CALL_S   # (counted until built)


def test_a_warm_program_loads_after_its_first_call_whatever_the_threshold(monkeypatch,
                                                                          builds):
    loads = []
    monkeypatch.setattr(HostExecutable, "_warm_cache", lambda self: True)
    monkeypatch.setattr(HostExecutable, "_load_in_background",
                        lambda self: loads.append(self))
    executable = _executable(monkeypatch, 60)
    executable.run(X)
    _idle()
    assert loads == [executable] and builds == [] and not executable._cold.counting


def test_the_exit_handoff_takes_held_builds(monkeypatch, builds):
    executable = _executable(monkeypatch, 60)
    executable.run(X)
    _idle()
    assert executable._cold.held
    handed = []
    monkeypatch.setattr(exit_handoff, "hand_off", handed.extend)
    monkeypatch.setenv(exit_handoff.ENV, "1")
    host_backend._hand_off_at_exit()
    assert [p.fingerprint for p in handed] == [executable._fingerprint()]


@pytest.mark.parametrize("value", ["-1", "abc", "nan", "inf", "1s"])
def test_a_bad_threshold_is_a_config_error(monkeypatch, value):
    monkeypatch.setenv(hotness.ENV, value)
    with pytest.raises(ConfigError, match=f"{hotness.ENV}={value!r} is not valid: expected a "
                                          f"non-negative number of seconds"):
        hotness.build_after()


@pytest.mark.parametrize("value, seconds", [("0", 0.0), (" 2.5 ", 2.5),
                                            ("", hotness.DEFAULT_BUILD_AFTER_S)])
def test_the_threshold_is_read_from_the_environment(monkeypatch, value, seconds):
    monkeypatch.setenv(hotness.ENV, value)
    assert hotness.build_after() == seconds


def test_the_executables_of_one_program_share_its_rent(monkeypatch, builds):
    """A function jitted anew (or retraced) for each call: each executable runs once, and the
    program still turns hot; then all of its held builds start."""
    held = []
    for _ in range(3):
        executable = _slow(_executable(monkeypatch, 2.9 * CALL_S))   # (margin: see above)
        assert builds == []
        executable.run(X)
        _idle()
        held.append(executable)
    assert set(builds) == set(held) and len(builds) == 3     # the third made it hot


def test_a_dropped_executables_program_is_still_handed_off_at_exit(monkeypatch, builds):
    """A script's ``main`` returned: its ``jit`` objects are gone before exit, and the next run
    should still find their programs built."""
    executable = _executable(monkeypatch, 60)
    executable.run(X)
    _idle()
    fingerprint = executable._fingerprint()
    del executable
    handed = []
    monkeypatch.setattr(exit_handoff, "hand_off", handed.extend)
    monkeypatch.setenv(exit_handoff.ENV, "1")
    host_backend._hand_off_at_exit()
    assert [p.fingerprint for p in handed] == [fingerprint]


def test_the_threshold_is_a_config_option(monkeypatch):
    monkeypatch.setenv(hotness.ENV, "")           # (empty: the default; restored after)
    assert pto.config.ptojax_build_after == hotness.DEFAULT_BUILD_AFTER_S
    pto.config.update("ptojax_build_after", 0)
    assert hotness.build_after() == 0.0
    with pytest.raises(ConfigError, match="ptojax_build_after.*non-negative number"):
        pto.config.update("ptojax_build_after", -1)
    assert hotness.build_after() == 0.0          # unchanged
